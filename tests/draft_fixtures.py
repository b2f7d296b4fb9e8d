"""Helpers of the drafting tests: real SLAKE organ labels, a model spec for a loopback server,
the CLI, and a sheet read and filled the way a reviewer would (openpyxl or csv)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from openpyxl import load_workbook
from typer.testing import CliRunner

from data_paths import realdata_dir
from loopback_server import LoopbackServer
from medlens.cli import app

IMAGES = ("xmlab0", "xmlab11", "xmlab22")


def slake_organ_labels(folder: Path) -> tuple[Path, Path]:
    """Image-level organ labels of a few SLAKE CTs (their detection.json), as a labels CSV."""
    slake = realdata_dir("slake")
    rows = []
    for name in IMAGES:
        for entry in json.loads((slake / "imgs" / name / "detection.json").read_text()):
            for label in entry:
                rows.append({"image": f"{name}/source.jpg", "label": label, "modality": "CT",
                             "body_part": "abdomen", "source": "slake"})  # fmt: skip
    labels = folder / "labels.csv"
    with open(labels, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return labels, slake / "imgs"


def spec(server: LoopbackServer, model: str = "drafter") -> str:
    return f"openai:{model}?base_url={server.base_url}&backoff=0&backoff_max=0&max_retries=0"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


def sheet_rows(sheet: Path) -> list[dict[str, str]]:
    if sheet.suffix == ".csv":
        with open(sheet, encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    workbook = load_workbook(sheet)
    table = [
        [c if c is not None else "" for c in row]
        for row in workbook["ratings"].iter_rows(values_only=True)
    ]
    return [dict(zip(table[0], map(str, row), strict=True)) for row in table[1:]]


def fill(sheet: Path, cells: dict[str, dict[str, str]], key: tuple[str, ...] = ("row",)) -> None:
    """Write cells into the sheet as a reviewer would: `cells` maps a row's `key` columns
    (joined by ``/``) to column → value."""
    if sheet.suffix == ".csv":
        rows = sheet_rows(sheet)
        for row in rows:
            row.update(cells.get("/".join(row[k] for k in key), {}))
        with open(sheet, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return
    workbook = load_workbook(sheet)
    table = workbook["ratings"]
    header = [c.value for c in table[1]]
    for row in table.iter_rows(min_row=2):
        found = "/".join(str(row[header.index(k)].value) for k in key)
        for column, value in cells.get(found, {}).items():
            row[header.index(column)].value = value
    workbook.save(sheet)
