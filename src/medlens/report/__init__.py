"""Reports in every format (text, markdown, HTML, xlsx, JSON), exports, and the rendering of
boards. Imports ``board`` and below; nothing below imports it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError

FORMATS: dict[str, str] = {
    "text": "medlens.report.text:render_text",
    "json": "medlens.report.text:render_json",
    "md": "medlens.report.markdown:render",
    "html": "medlens.report.html:render",
    "xlsx": "medlens.report.xlsx:render",
}


def load_results(run_dir: Path | str) -> dict[str, Any]:
    """Every aggregate of a run (the content of results.json): read while fresh, rebuilt from
    the run's files when stale (``analysis.derived``: the records, items, judges, medlens
    version and score source it was built from are checked)."""
    from medlens.analysis.derived import fresh_results

    return fresh_results(Path(run_dir))


def render(run_dir: Path, fmt: str) -> str | bytes:
    """The report of the run at `run_dir` in format `fmt` (str for text formats, bytes for xlsx)."""
    target = FORMATS.get(fmt)
    if target is None:
        raise SpecError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    module_name, _, attr = target.partition(":")
    renderer = getattr(importlib.import_module(module_name), attr)
    output: str | bytes = renderer(Path(run_dir))
    return output
