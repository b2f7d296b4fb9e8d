"""One file of an export (``medlens export``): its name under the output folder and its bytes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExportFile:
    """One file of an export: its name (relative to the output) and content."""

    name: str
    content: bytes
