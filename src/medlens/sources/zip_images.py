"""Images inside a zip file a release ships instead of a folder (SLAKE's ``imgs.zip`` on the Hub).

Members are looked up by the name the questions use, with or without the archive's top folder
(``imgs/xmlab1/source.jpg`` or ``xmlab1/source.jpg``); the bytes are read only when a request is
built (:mod:`medlens.core.container_images`). The image's name in the benchmark is the name the
questions use, so items equal those read from the unpacked folder.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import ImageRef


class ZipImages:
    """The members of one zip file, indexed once."""

    def __init__(self, path: Path, top: str) -> None:
        self.path = path
        self.top = top.strip("/") + "/"
        try:
            with zipfile.ZipFile(path) as archive:
                self.members = set(archive.namelist())
        except (OSError, zipfile.BadZipFile) as exc:
            raise InputError(path, None, f"not a readable zip file ({exc})") from None

    def member(self, name: str) -> str | None:
        name = name.replace("\\", "/").lstrip("/")
        for candidate in (self.top + name, name):
            if candidate in self.members:
                return candidate
        return None

    def image(self, name: str, source: Path, where: str) -> ImageRef:
        member = self.member(name)
        if member is None:
            raise InputError(source, where, f"image {name!r} not found in {self.path}")
        return ImageRef(source="zip", path=str(self.path), entry=member, name=name)

    def read_json(self, name: str) -> Any:
        """A JSON member (None when the archive has no such member)."""
        member = self.member(name)
        if member is None:
            return None
        with zipfile.ZipFile(self.path) as archive:
            try:
                return json.loads(archive.read(member).decode("utf-8-sig"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise InputError(self.path, f"member {member}", f"not valid JSON ({exc})") from None
