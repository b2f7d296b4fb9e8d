"""Reports in every format (text, markdown, HTML, xlsx, JSON), exports, and the rendering of
boards. Imports ``board`` and below; nothing below imports it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import SpecError
from medlens.runs.store import RunStore

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

FORMATS: dict[str, str] = {
    "text": "medlens.report.text:render_text",
    "json": "medlens.report.text:render_json",
    "md": "medlens.report.markdown:render",
    "html": "medlens.report.html:render",
    "xlsx": "medlens.report.xlsx:render",
}


def load_results(run_dir: Path | str, score: ScoreSource | str | None = None) -> dict[str, Any]:
    """Every aggregate of a run (the content of results.json), derived afresh from its directory.

    `score`: the score source (``"rules"``, ``"judge:NAME"``, ``"combined:NAME"`` or a parsed
    one; see ``medlens.analysis.score_source``). Reading never modifies the run: results.json
    is written only by `run` and `judge` (under the run's lock), with rule scores.
    """
    from medlens.analysis.results import build_results
    from medlens.analysis.score_source import parse_score_source

    return build_results(RunStore.open(Path(run_dir)), parse_score_source(score))


def render(run_dir: Path, fmt: str, score: ScoreSource | None = None) -> str | bytes:
    """The report of the run at `run_dir` in format `fmt` (str for text formats, bytes for xlsx)."""
    target = FORMATS.get(fmt)
    if target is None:
        raise SpecError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    module_name, _, attr = target.partition(":")
    renderer = getattr(importlib.import_module(module_name), attr)
    output: str | bytes = renderer(Path(run_dir), score)
    return output
