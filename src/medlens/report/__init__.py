"""Reports in every format (text, markdown, HTML, xlsx, JSON), exports, and the rendering of
boards. Imports ``board`` and below; nothing below imports it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import SpecError

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

FORMATS: dict[str, str] = {
    "text": "medlens.report.text:render_text",
    "json": "medlens.report:render_json",
    "md": "medlens.report.markdown:render",
    "html": "medlens.report.html:render",
    "xlsx": "medlens.report.xlsx:render",
}


def load_results(run_dir: Path | str, score: ScoreSource | str | None = None) -> dict[str, Any]:
    """Every aggregate of a run (the content of results.json): read while fresh, rebuilt from
    the run's files when stale (``analysis.artifacts``: the records, items, judges, medlens
    version and score source it was built from are checked).

    `score`: the score source (``"rules"``, ``"judge:NAME"``, ``"combined:NAME"`` or a parsed
    one; see ``medlens.analysis.score_source``); a judged source's results are kept beside
    results.json (``derived/``), never over it.
    """
    from medlens.analysis.artifacts import fresh_results
    from medlens.analysis.score_source import parse_score_source

    return fresh_results(Path(run_dir), score_source=parse_score_source(score))


def render_json(run_dir: Path, score: ScoreSource | None = None) -> str:
    """The results as one JSON object: overall, rates, by-axis cells and the rest of results.json.

    Here, not beside the text report: fresh results are read without importing the text
    report's tables or numpy (a third of a JSON report's time; issue 36).
    """
    return json.dumps(load_results(run_dir, score), indent=2, ensure_ascii=False) + "\n"


def render(run_dir: Path, fmt: str, score: ScoreSource | None = None) -> str | bytes:
    """The report of the run at `run_dir` in format `fmt` (str for text formats, bytes for xlsx)."""
    target = FORMATS.get(fmt)
    if target is None:
        raise SpecError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    module_name, _, attr = target.partition(":")
    renderer = getattr(importlib.import_module(module_name), attr)
    output: str | bytes = renderer(Path(run_dir), score)
    return output
