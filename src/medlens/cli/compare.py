"""`medlens compare`: paired comparison of two runs on the same items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import SCORE_HELP, command, console, print_warnings, write_json
from medlens.core.notation import split_list
from medlens.stats.cells import TOO_FEW_IMAGES

if TYPE_CHECKING:
    from rich.table import Table

    from medlens.analysis.compare import Comparison, PairedCell


@command("compare", short_help="Compare two runs: B − A with paired CI and McNemar p.")
def compare(
    run_a: Annotated[Path, typer.Argument(help="First run directory (A, e.g. the base model)")],
    run_b: Annotated[Path, typer.Argument(help="Second run directory (B, e.g. fine-tuned)")],
    by: Annotated[str, typer.Option("--by", help="Also compare per value of these axes")] = "",
    adjust: Annotated[
        str, typer.Option("--adjust", help="p_adjusted across a --by table: holm, bh or none")
    ] = "holm",
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Compare two runs: B − A with paired CI, (image-level) McNemar p and win/tie/loss."""
    from medlens.analysis.compare import compare_runs
    from medlens.analysis.score_source import parse_score_source

    if run_a.resolve() == run_b.resolve():
        from medlens.core.errors import SpecError

        raise SpecError(
            f"compare {run_a} {run_b}: that compares a run with itself (every difference is 0); "
            "give two runs"
        )
    if _split_pair(run_a, run_b):  # one model on VAL and TEST: different items, an unpaired gap
        from medlens.analysis.split_gap import split_gap, split_gap_lines

        gap = split_gap(run_a, run_b)
        if as_json:
            write_json({"split_gap": gap})
            return
        for line in split_gap_lines(gap):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    axes = split_list(by)
    from medlens.analysis.artifacts import fresh_served
    from medlens.runs.provenance import run_notes

    source = parse_score_source(score)
    result = compare_runs(run_a, run_b, axes, adjust=adjust, source=source)
    notes, shared = run_notes([run_a, run_b], served_of=fresh_served)
    warnings = [c["warning"] for c in result.coverage if c and c.get("warning")]
    print_warnings(notes + shared + warnings)
    if as_json:
        data = {**result.to_json(), "environment_differ": notes, "shared_cache": shared,
                "score_warnings": warnings}  # fmt: skip
        write_json(data)
        return
    from medlens.analysis.artifacts import imageless

    _print_text(result, imageless(run_a) and imageless(run_b))


def _split_pair(run_a: Path, run_b: Path) -> bool:
    from medlens.analysis.split_gap import is_split_pair
    from medlens.runs.view import RunView

    return is_split_pair(RunView(run_a).run, RunView(run_b).run)


def _print_text(result: Comparison, no_images: bool = False) -> None:
    """`no_images`: neither run's items carry an image (the images column shows "–")."""
    from rich.text import Text

    a_name = _name("A", result.run_a, result.probe_a)
    b_name = _name("B", result.run_b, result.probe_b)
    console.print(Text(f"{a_name}\n{b_name}"), soft_wrap=True)
    if result.score_source != "rules":
        from medlens.analysis.score_source import coverage_text, parse_score_source

        covered = "; ".join(
            f"{letter} {coverage_text(c)}" for letter, c in zip("AB", result.coverage, strict=True)
        )
        title = parse_score_source(result.score_source).title()
        console.print(Text(f"{title}; {covered}"), soft_wrap=True)
    if result.settings:
        console.print(Text(f"note: the runs also differ in {result.settings}"), soft_wrap=True)
    if result.only_a or result.only_b:
        console.print(
            Text(f"left out: {result.only_a} items scored only in A, {result.only_b} only in B")
        )
    if result.overall.n == 0:
        console.print(Text("no items are scored in both runs (no gold answers, or disjoint runs)"))
        return
    suffix = "" if result.score_source == "rules" else f" (scores: {result.score_source})"
    console.print(paired_table([result.overall], "overall" + suffix, no_images=no_images))
    for axis, cells in result.by.items():
        title = f"by {axis}{suffix}"
        console.print(paired_table(cells, title, adjusted=True, no_images=no_images))
    if result.by:
        method = next(iter(result.by.values()))[0].adjust if any(result.by.values()) else "none"
        console.print(Text(f"adj. p: p adjusted across each table ({method})"))
    if not no_images and any(
        c.images == 1 for c in [result.overall, *(c for v in result.by.values() for c in v)]
    ):
        console.print(Text("images = 1: that row speaks for one image's questions only"))
    if result.probe_a or result.probe_b:
        console.print(
            Text(
                "random: expected score of a blind guess; a probed run far above it "
                "answers without the information the probe removed"
            )
        )


def _name(letter: str, path: str, probe: str | None) -> str:
    return f"{letter}: {path}" + (f" (probe: {probe})" if probe else "")


def paired_table(
    cells: Sequence[PairedCell], title: str, adjusted: bool = False, no_images: bool = False
) -> Table:
    """One row per paired cell; `no_images`: the images column shows "–"."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left")
    headers: tuple[str, ...] = ("cell", "n", "images", "A %", "B %", "chance %", "B−A")
    headers += ("95% CI", "W/T/L", "p")
    headers += ("adj. p",) if adjusted else ()
    for header in headers:
        if header == "cell":
            table.add_column(header, overflow="fold", ratio=1, min_width=8)
        else:
            table.add_column(header, justify="right", no_wrap=True)
    for cell in cells:
        table.add_row(
            Text(", ".join(v for _, v in cell.key) or "overall"),
            str(cell.n),
            "–" if no_images and cell.images == cell.n else str(cell.images),
            f"{100 * cell.score_a:.1f}",
            f"{100 * cell.score_b:.1f}",
            "–" if cell.random is None else f"{100 * cell.random:.1f}",
            f"{100 * cell.difference:+.1f}",
            TOO_FEW_IMAGES
            if cell.too_few_images
            else f"{100 * cell.ci[0]:+.1f}…{100 * cell.ci[1]:+.1f}",
            f"{cell.wins}/{cell.ties}/{cell.losses}",
            "–" if cell.p is None else f"{cell.p:.3g}",
            *(("–" if cell.p_adjusted is None else f"{cell.p_adjusted:.3g}",) if adjusted else ()),
        )
    return table
