"""`medlens runs [DIR]` and `medlens show RUN ID`: the runs in a folder, and one item of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from medlens.cli.common import command, console


@command("runs", short_help="List runs: model, benchmark, progress, score with its CI.")
def runs(
    folder: Annotated[Path, typer.Argument(help="Folder of run directories")] = Path("runs"),
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list")] = False,
) -> None:
    """List runs: name, benchmark and selection, model, done/total, n (errors), score with its
    CI, created."""
    from medlens.analysis.listing import list_runs

    found = list_runs(folder)
    if as_json:
        print(json.dumps([summary.to_json() for summary in found], indent=2))
        return
    table = Table(title=f"runs in {folder}", title_justify="left")
    # names, numbers and times stay on one line; the model and CI wrap. The selection sits
    # under the benchmark and the errors beside n, so that the table fits 120 columns.
    for column in ("name", "benchmark (selection)", "model", "done/total", "n (errors)", "score", "95% CI", "created"):  # fmt: skip
        wrap = column in ("benchmark (selection)", "model", "95% CI")
        table.add_column(column, overflow="fold", no_wrap=not wrap)
    for s in found:
        recipe = s.selection.partition(": ")[2]  # done/total has the counts
        table.add_row(
            Text(s.name + (" (running)" if s.writer else "")),
            Text(s.benchmark_label + (f"\n{recipe}" if recipe else "")),
            Text(s.model),
            f"{s.done}/{s.total}",
            f"{s.n} ({s.errors})",
            "–" if s.score is None else f"{s.score:.3f}",
            "–" if s.ci is None else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]",
            s.created[:19].replace("T", " "),  # to the second, without the zone
        )
    console.print(table if found else Text(f"no runs in {folder}"))


@command("show", short_help="One item of a run: prompt, raw output, reading, verdicts.")
def show(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    item_id: Annotated[str, typer.Argument(metavar="ID", help="Item id")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object")] = False,
) -> None:
    """One item of a run: question, options, gold, images, the exact prompt, raw output,
    extraction, scores and judge verdicts."""
    from medlens.analysis.listing import show_item
    from medlens.core.terminal import terminal_safe, terminal_safe_json

    shown = show_item(run, item_id)
    if as_json:
        print(terminal_safe_json(json.dumps(shown, indent=2, ensure_ascii=False)))
        return
    for line in item_lines(shown):  # model output never reaches the terminal raw
        console.print(Text(terminal_safe(line)), soft_wrap=True)


def item_lines(shown: dict[str, Any]) -> list[str]:
    """The text layout of `show` (model output is printed as plain text, never as markup)."""
    lines = [f"item {shown['id']} ({shown['kind']})", f"question: {shown['question']}"]
    if shown["context"]:
        lines.append(f"context: {shown['context']}")
    lines += [f"  {key}. {text}" for key, text in shown["options"].items()]
    lines.append(f"gold: {shown['gold']}")
    lines += [f"image: {image}" for image in shown["images"]]
    if shown.get("system"):
        lines += ["--- system message", shown["system"]]
    lines += ["--- prompt sent", shown["prompt"].rstrip("\n"), "---"]
    record = shown["record"]
    if record is None:
        lines.append("no record yet (not run)")
    else:
        lines += record_lines(record)
    cut = shown.get("cut")
    if cut:  # what a cut output committed to before the cut (issue 42)
        lines.append(f"cut output, read up to the cut: {cut['read'] or '(nothing committed)'}")
        lines.append(f"dropped after it: {cut['dropped'] or '(nothing)'}")
    for judge, verdicts in shown["judgements"].items():
        for verdict in verdicts:
            lines.append(
                f"judge {judge} (repeat {verdict.get('repeat')}, {verdict.get('by')}): "
                f"status {verdict.get('status')}, score {verdict.get('score')}, "
                f"verdict {json.dumps(verdict.get('verdict'), ensure_ascii=False)}"
            )
    return lines


def record_lines(record: dict[str, Any]) -> list[str]:
    if record.get("error"):
        error = record["error"]
        return [f"error: {error.get('type')}: {error.get('message')}"]
    extraction = record.get("extraction") or {}
    lines = [
        f"output: {record.get('output')}",
        f"extraction: answer {extraction.get('answer')!r}, status {extraction.get('status')}, "
        f"method {extraction.get('method')}",
        f"score: {record.get('score')}"
        + "".join(f", {k} {v}" for k, v in (record.get("scores") or {}).items()),
    ]
    vlmeval = record.get("vlmeval")
    if vlmeval:
        lines.append(
            f"VLMEvalKit rules: answer {vlmeval.get('answer')!r}, score {vlmeval.get('score')}"
        )
    extras = [f"cached {record.get('cached')}", f"latency {record.get('latency')}"]
    if record.get("served_model"):
        extras.append(f"served model {record['served_model']}")
    if record.get("retries"):
        extras.append("retries " + ", ".join(f"{k} {v}" for k, v in record["retries"].items()))
    lines.append("; ".join(extras))
    return lines
