"""`medlens board`: a leaderboard of N runs on the same items (or across benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from medlens.cli.common import (
    SCORE_HELP,
    command,
    print_warnings,
    refuse_page_on_terminal,
    write_json_text,
    write_output,
    write_text,
)
from medlens.cli.tracking_option import LOG_HELP, log_after, log_target
from medlens.core.notation import split_list

HELP = "Rank runs with rank intervals and tied groups; per-axis tables, pairs, correlations."


@command("board", short_help="Rank runs with rank intervals; per-axis tables and pairs.", help=HELP)
def board(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (one per model)")],
    by: Annotated[str, typer.Option("--by", help="Per-axis tables for these axes (a,b)")] = "",
    where: Annotated[
        str, typer.Option("--where", help="Filter items: a=v, a!=v, a in (v|w); ',' = AND")
    ] = "",
    pairs: Annotated[
        str, typer.Option("--pairs", help="BASE:TUNED,… run folder names: paired families")
    ] = "",
    meta: Annotated[
        Path | None, typer.Option("--meta", help="CSV with a run column and model metadata")
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option("--reference", help="Published scores beside the runs: NAME or FILE.csv"),
    ] = None,
    layout: Annotated[
        str | None, typer.Option("--layout", help="A paper's main table: medcmr, mmbu or gmai")
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="With --layout: the judge of the judged columns")
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    human: Annotated[
        list[Path] | None,
        typer.Option(
            "--human",
            help="With --score judge:NAME: human labels (CSV/xlsx) that "
            "calibrate each run's judged score (as medlens agreement does)",
        ),
    ] = None,
    allow_partial: Annotated[
        bool,
        typer.Option("--allow-partial", help="Keep runs not comparable with --reference, labelled"),
    ] = False,
    across: Annotated[
        bool, typer.Option("--across", help="Model × benchmark matrix (one run per pair)")
    ] = False,
    base: Annotated[
        str | None, typer.Option("--base", help="With --across: gains against this model or run")
    ] = None,
    align: Annotated[
        str, typer.Option("--align", help="same (refuse differing items) or intersect")
    ] = "same",
    min_n: Annotated[int, typer.Option("--min-n", help="Cells with fewer items are flagged")] = 50,
    resamples: Annotated[
        int, typer.Option("--resamples", help="Bootstrap resamples (rank intervals, CIs)")
    ] = 1000,
    solved_by_all: Annotated[
        Path | None,
        typer.Option("--solved-by-all", help="Write the ids every run solved, one per line"),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text, md, html or xlsx")] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object")] = False,
    log: Annotated[str | None, typer.Option("--log", help=LOG_HELP)] = None,
) -> None:
    """`medlens board` (help: HELP).

    Over 60 lines only because typer declares each of the 21 options in the signature; the
    body checks the flags, builds the board and writes one output.
    """
    from medlens.analysis.score_source import parse_score_source
    from medlens.board import BoardOptions, build_board
    from medlens.core.errors import MedlensError, SpecError
    from medlens.report.board import FORMATS, finite, render_board

    if format not in FORMATS:
        raise SpecError(f"--format: unknown format {format!r} (use {', '.join(FORMATS)})")
    if format == "xlsx" and output is None and not as_json:
        raise MedlensError("--format xlsx is binary: give --output FILE")
    if not as_json:
        refuse_page_on_terminal(format, output)
    if base is not None and not across:
        raise SpecError("--base goes with --across (gains across benchmarks); use --pairs here")
    tracking = log_target(log)
    options = BoardOptions(
        runs=list(runs), by=split_list(by), where=where,
        pairs=pairs, meta=meta, reference=reference, across=across, base=base, align=align,
        min_n=min_n, n_resamples=resamples, layout=layout, judge=judge,
        score=parse_score_source(score), allow_partial=allow_partial,
    )  # fmt: skip
    result = build_board(options)
    if solved_by_all is not None and not across and result["difficulty"].get("continuous"):
        raise SpecError(f"--solved-by-all {solved_by_all}: {result['difficulty']['note']}")
    if human:
        from medlens.board.calibrated import board_calibration

        result["calibrated"] = board_calibration(list(runs), parse_score_source(score), human)
    _warn_on_mixed_environments(result, list(runs))
    warnings = [c["warning"] for c in (result.get("coverage") or {}).values() if c.get("warning")]
    print_warnings(warnings)
    result["score_warnings"] = warnings
    rendered: str | bytes
    if as_json:
        rendered = json.dumps(finite(result), ensure_ascii=False, allow_nan=False) + "\n"
    else:
        rendered = render_board(result, format)
    if output is None:
        if isinstance(rendered, str):
            (write_json_text if as_json else write_text)(rendered)
    else:
        write_output(output, rendered)
    if solved_by_all is not None and not across:
        from medlens.board.difficulty import solved_ids_text

        ids = result["difficulty"]["solved_by_all_ids"]
        write_output(solved_by_all, solved_ids_text(ids))
    log_after(tracking, list(runs))


def _warn_on_mixed_environments(result: dict[str, Any], runs: list[Path]) -> None:
    """Runs made with other package versions or served models, or sharing cached answers: a
    warning, also in the JSON."""
    from medlens.analysis.artifacts import fresh_served
    from medlens.cli.common import err_console
    from medlens.runs.provenance import run_notes

    notes, shared = run_notes(runs, served_of=fresh_served)
    result["environment_differ"] = notes
    result["shared_cache"] = shared
    for note in [*notes, *shared]:
        err_console.print(f"warning: {note}", highlight=False, markup=False, soft_wrap=True)
