"""The derived files the analysis layer builds, declared as run artifacts (``runs.artifacts``).

- :data:`RESULTS`: ``results.json`` (the run's own extraction mode, rule scores) or
  ``derived/results.EXTRACT.SOURCE.json`` (a judged score source) — every aggregate of a run,
  built by :func:`medlens.analysis.results.build_results_and_table`; from every run input.
- :data:`SCORES`: ``derived/scores.EXTRACT.SOURCE.arrow``, the score table those aggregates were
  computed from (``analysis.score_file``), built with them; ``slice``, ``compare``, ``board``
  and the viewer read it instead of the records.
- :data:`~medlens.analysis.reading.READING` (declared beside its builder): medlens's reading of
  every answer of a run scored with another reading, the extraction sensitivity's other side.

The run view reads each while fresh and builds it otherwise (``RunView.derived``); this module
adds the analysis layer's readings of them (:func:`fresh_results`, :func:`fresh_score_table`,
…), which every report, slice, comparison and board uses.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.reading import MEDLENS_READING, READING
from medlens.runs.artifacts import (
    EVERY_INPUT,
    RULES,
    STAMP,
    Artifact,
    Stamped,
    Variant,
    derived_place,
    public_stamp,
    results_place,
)
from medlens.runs.view import RunView

if TYPE_CHECKING:  # numpy and the scoring rules: only where results are rebuilt
    from medlens.analysis.score_source import ScoreSource
    from medlens.analysis.score_table import ScoreTable

Note = Callable[[str], None]


def stderr_note(message: str) -> None:
    print(message, file=sys.stderr)


def public(results: Mapping[str, Any]) -> dict[str, Any]:
    """Results as readers get them: the stamp's digests stay, its machine facts go."""
    out = dict(results)
    stamp = out.get(STAMP)
    if isinstance(stamp, Mapping):
        out[STAMP] = public_stamp(stamp)
    return out


# -- results.json ----------------------------------------------------------------------------
def _results_stamped(path: Path) -> Stamped | None:
    from medlens.runs.files import loads_line

    try:
        data = loads_line(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return data.get(STAMP), data


def _results_load(view: RunView, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    data["run"] = view.name  # a moved or copied run keeps its results
    return public(data)


def _results_encode(results: Mapping[str, Any], stamp: dict[str, Any]) -> bytes:
    text = json.dumps({**results, STAMP: stamp}, indent=2, ensure_ascii=False) + "\n"
    return text.encode("utf-8")


def _results_attach(results: Mapping[str, Any], stamp: dict[str, Any]) -> dict[str, Any]:
    return {**results, STAMP: public_stamp(stamp)}


def _build_results(view: RunView, variant: Variant) -> dict[Artifact, Any]:
    """Results and score table of one score source (under the run's own extraction mode)."""
    from medlens.analysis.results import build_results_and_table
    from medlens.analysis.score_source import parse_score_source

    if variant.extract != view.extract:
        raise ValueError(f"no builder for extraction {variant.extract!r} of {view.path}")
    results, table = build_results_and_table(view, parse_score_source(variant.score_source))
    return {RESULTS: results, SCORES: (table, results.get("served") or {})}


RESULTS = Artifact(
    name="results",
    inputs=EVERY_INPUT,
    place=results_place,
    stamped=_results_stamped,
    load=_results_load,
    encode=_results_encode,
    attach=_results_attach,
    build=_build_results,
)


# -- the score table -------------------------------------------------------------------------
def _scores_stamped(path: Path) -> Stamped | None:
    from medlens.analysis.score_file import read_stamp

    return read_stamp(path)


def _scores_load(view: RunView, path: Path, served: Any) -> ScoreTable:
    from medlens.analysis.score_file import read_columns, score_table_of

    return score_table_of(read_columns(path))


def _scores_encode(content: tuple[ScoreTable, dict[str, Any]], stamp: dict[str, Any]) -> bytes:
    from medlens.analysis.score_file import score_file_bytes

    table, served = content
    return score_file_bytes(table, stamp, served)


def _scores_attach(content: tuple[ScoreTable, dict[str, Any]], stamp: dict[str, Any]) -> Any:
    return content[0]


SCORES = Artifact(
    name="scores",
    inputs=EVERY_INPUT,
    place=derived_place("scores", "arrow"),
    stamped=_scores_stamped,
    load=_scores_load,
    encode=_scores_encode,
    attach=_scores_attach,
    build=_build_results,
)


# -- the readings every command uses ---------------------------------------------------------
def view_of(run: Path | str | RunView) -> RunView:
    return run if isinstance(run, RunView) else RunView(run)


def fresh_results(
    run: Path | str | RunView,
    *,
    score_source: str | ScoreSource = RULES,
    note: Note | None = stderr_note,
) -> dict[str, Any]:
    """The run's results under `score_source`: read while fresh, else rebuilt (saying why
    through `note`) and saved when no writer holds the run."""
    view = view_of(run)
    label = score_source if isinstance(score_source, str) else score_source.label
    results: dict[str, Any] = view.derived(RESULTS, view.variant(label), note)
    return results


def fresh_score_table(run: Path | str | RunView, *, note: Note | None = stderr_note) -> ScoreTable:
    """The run's rule score table: from its fresh score file, else rebuilt with the results."""
    view = view_of(run)
    table: ScoreTable = view.derived(SCORES, view.variant(), note)
    return table


def fresh_score_file(run_dir: Path | str | RunView) -> tuple[Path, dict[str, Any]] | None:
    """The run's rule score file and its served-model summary when the file is fresh (None:
    stale or absent, and nothing is rebuilt: the caller reads the records itself)."""
    found = view_of(run_dir).fresh(SCORES)
    return None if found is None else (found.path, found.extra)


def fresh_served(run_dir: Path) -> dict[str, Any] | None:
    """The served-model summary of a fresh score file (None: read the records instead)."""
    found = fresh_score_file(Path(run_dir))
    return None if found is None else found[1]


def sourced_score_table(
    run_dir: Path | str, source: ScoreSource
) -> tuple[ScoreTable, dict[str, Any] | None]:
    """(the run's score table under `source`, its judged coverage): rule scores from the run's
    fresh derived score file, a judged source's from the records and the judge's verdicts (its
    coverage; None for rules)."""
    from medlens.analysis.score_source import sourced_run
    from medlens.analysis.score_table import score_table

    view = RunView(run_dir)
    if not source.judged:
        return fresh_score_table(view), None
    sourced = sourced_run(view.path, view.items(), view.records(), source)
    return score_table(sourced.items, sourced.records, sourced.scope), sourced.coverage


def results_after_writing(view: RunView) -> dict[str, Any]:
    """The results of a run a writer (``run``, ``judge``, a ratings import) just finished,
    built quietly from what it holds and saved (the caller's lock is released by then)."""
    return fresh_results(view, note=None)


def imageless(run_dir: Path) -> bool:
    """True when the run's saved results count no item with an image (a text benchmark such as
    MedQA): every table then shows "–" for images, as the report does, not the item count (each
    imageless item is its own cluster). The saved file is read even when stale: it counts items,
    which a stale stamp does not change."""
    saved = RunView(run_dir).stored(RESULTS)
    counts = saved.get("counts") if isinstance(saved, dict) else None
    return isinstance(counts, dict) and counts.get("items_with_images") == 0


__all__ = ["MEDLENS_READING", "READING", "RESULTS", "SCORES"]
