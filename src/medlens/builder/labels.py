"""Labels files for ``medlens build``: CSV or JSON Lines rows naming an image and its label.

Columns (JSONL: keys): ``image`` (path relative to the images root) and ``label`` are required;
``box`` (``x0,y0,x1,y1`` in pixels, right/bottom exclusive; JSONL may give a list), ``mask`` (a
mask image path under the same root; nonzero = region) and ``id`` are optional; every other
column is metadata carried into ``Item.meta`` (``modality``, ``body_part``, ``stain``, …).
Rows are counted from 1 after the CSV header ("row 3"); JSONL lines from 1 ("line 3").
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError

REQUIRED = ("image", "label")
ROLE_COLUMNS = ("image", "label", "box", "mask", "id")

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) in pixels of the source image."""


@dataclass(frozen=True)
class LabelRow:
    """One row of a labels file, checked: paths resolved inside the images root."""

    where: str
    """Human location, ``row 3`` or ``line 3``."""
    image: str
    """The image path as written (relative, ``/``-separated): the item's ``image_id``."""
    image_path: Path
    label: str
    box: Box | None = None
    mask: str | None = None
    mask_path: Path | None = None
    id: str | None = None
    meta: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LabelsFile:
    path: Path
    root: Path
    rows: tuple[LabelRow, ...]


def read_labels(path: Path, images: Path | None = None) -> LabelsFile:
    """Read and check every row of a labels file (CSV, or JSONL by its ``.jsonl`` suffix)."""
    if not path.is_file():
        raise InputError(path, None, "no such labels file")
    root = Path(os.path.realpath(images if images is not None else path.parent))
    if not root.is_dir():
        raise InputError(images or path.parent, None, "images root is not a folder")
    records = _jsonl_records(path) if path.suffix.lower() == ".jsonl" else _csv_records(path)
    rows = tuple(_row(path, root, where, record) for where, record in records)
    if not rows:
        raise InputError(path, None, "no label rows")
    return LabelsFile(path, root, rows)


def _csv_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            names = [n.strip() for n in reader.fieldnames or []]
            for required in REQUIRED:
                if required not in names:
                    raise InputError(path, "header", f"missing required column {required!r}")
            for number, record in enumerate(reader, start=1):
                if None in record:
                    raise InputError(path, f"row {number}", "more cells than header columns")
                yield f"row {number}", {k.strip(): v for k, v in record.items()}
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None


def _jsonl_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(path, f"line {number}", f"not valid JSON ({exc})") from None
            if not isinstance(record, dict):
                raise InputError(path, f"line {number}", "expected a JSON object")
            yield f"line {number}", record


def _row(path: Path, root: Path, where: str, record: Mapping[str, Any]) -> LabelRow:
    texts = {str(k): _text(v) for k, v in record.items() if k != "box"}
    for required in REQUIRED:
        if not texts.get(required):
            problem = "missing" if required not in texts else "empty cell"
            raise InputError(path, f"{where}, field {required!r}", problem)
    image = texts["image"].replace("\\", "/")
    mask = texts.get("mask") or None
    box = _box(path, where, record.get("box"))
    meta = {k: v for k, v in texts.items() if k not in ROLE_COLUMNS and v}
    return LabelRow(
        where=where,
        image=image,
        image_path=inside_root(path, where, "image", image, root),
        label=texts["label"],
        box=box,
        mask=mask,
        mask_path=inside_root(path, where, "mask", mask, root) if mask else None,
        id=texts.get("id") or None,
        meta=meta,
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value).strip()


def _box(path: Path, where: str, raw: Any) -> Box | None:
    """``x0,y0,x1,y1`` (text or a 4-list) with x0 < x1 and y0 < y1; None when empty."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    values = raw if isinstance(raw, list) else re.split(r"[,\s;]+", str(raw).strip(" []()"))
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        numbers = []
    if len(numbers) != 4:
        raise InputError(path, f"{where}, field 'box'", f"expected x0,y0,x1,y1, got {raw!r}")
    x0, y0, x1, y1 = numbers
    if not (x0 < x1 and y0 < y1):
        raise InputError(path, f"{where}, field 'box'", f"empty box {raw!r} (needs x0<x1, y0<y1)")
    return (x0, y0, x1, y1)


def inside_root(path: Path, where: str, name: str, relative: str, root: Path) -> Path:
    """The file ``relative`` under ``root`` (after symlinks); refuses escapes and missing files."""
    resolved = Path(os.path.realpath(root / relative))
    if os.path.commonpath([root, resolved]) != str(root):
        problem = f"path {relative!r} points outside the images root {root}"
        raise InputError(path, f"{where}, field {name!r}", problem)
    if not resolved.is_file():
        raise InputError(path, f"{where}, field {name!r}", f"no such file {relative!r} in {root}")
    return resolved


def read_confusable(path: Path) -> set[frozenset[str]]:
    """Pairs of labels never shown together as gold and distractor: ``a,b`` (or tab) per line."""
    if not path.is_file():
        raise InputError(path, None, "no such confusable-pairs file")
    pairs: set[frozenset[str]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in next(csv.reader([line.replace("\t", ",")]))]
        if len(parts) != 2 or not all(parts):
            raise InputError(path, f"line {number}", "expected two labels: a,b")
        pairs.add(frozenset(p.casefold() for p in parts))
    return pairs
