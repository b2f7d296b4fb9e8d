"""Terminal (text) report (the JSON report is `medlens.report.render_json`)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from medlens.analysis.medcmr_split import medcmr_lines
from medlens.report import load_results
from medlens.report.percent_text import images_text
from medlens.report.protocol_lines import protocol_lines, single_multi_line
from medlens.report.source_label import source_lines, source_suffix
from medlens.runs.health import health_lines
from medlens.scoring.closed_open import pairing_text

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

SMALL_N = 50
VLMEVAL_COLUMN_NOTE = (
    "'vlmeval rules' re-reads the same outputs with VLMEvalKit's exact matching (a letter it "
    "finds on its own, or one option's full text), so it differs where an answer needs medlens's "
    "reading"
)


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def fmt_ci(ci: list[float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def render_text(run_dir: Path, score: ScoreSource | None = None, width: int = 110) -> str:
    """Summary tables for a terminal."""
    results = load_results(run_dir, score)
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    for block in summary_blocks(results, run_dir):
        console.print(block)
    from medlens.report.card import card_lines, citation_lines, protocol_card

    card = protocol_card(Path(run_dir))
    for line in ["", "protocol card", *card_lines(card), "", "citations", *citation_lines(card)]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(card.usage, markup=False, highlight=False)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    return str(output)


def _pending_word(spec: dict[str, Any]) -> str:
    """An adaptive run leaves items unasked by design; any other run has them still to do."""
    return "not asked (adaptive run)" if spec.get("adaptive") else "pending"


def summary_blocks(results: dict[str, Any], run_dir: Path | None = None) -> list[Any]:
    """The pieces of the text report, in order (`run_dir` as the user should type it)."""
    from medlens.execution.selection import provenance_rows
    from medlens.report.sections import answers_hint

    spec = results["spec"]
    bench = spec["benchmark"]
    counts = results["counts"]
    blocks: list[Any] = [
        f"run {results['run']}: {bench['spec']} ({bench['split']}, {bench['n_items']} items) × "
        f"{spec['model']}; prompt {spec['prompt']}, extract {spec['extract']}"
        + (f", probe {spec['probe']}" if spec.get("probe") else "")
        + (f", strategy {_strategy(results)}" if spec.get("strategy") else ""),
        f"records {counts['records']}/{counts['items']}, errors {counts['errors']}"
        + (f", {_pending_word(spec)} {counts['pending']}" if counts["pending"] else ""),
        *(Text(line) for line in health_lines(results.get("health"))),  # paths: no markup
        *(Text(line) for line in source_lines(results)),
    ]
    blocks += [f"{name}: {value}" for name, value in provenance_rows(spec)]
    if not results["has_answers"]:
        blocks.append(
            results.get("no_answers_reason", "This split has no answers.")
            + " {}:\n  {}".format(*answers_hint(run_dir if run_dir is not None else results["run"]))
        )
        blocks.extend(single_multi_line(results))
        return blocks
    blocks.append(overall_table(results))
    blocks.extend(Text(line) for line in medcmr_lines(results))
    if run_dir is not None:
        from medlens.report.estimated import estimate_rows

        blocks += [Text(f"{name}: {value}") for name, value in estimate_rows(run_dir, spec)]
    blocks.extend(detail_lines(results))
    if results.get("leakage_suspects") is not None:
        from medlens.report.deficiency import suspect_summary

        blocks.append(
            f"leakage suspects under probe {spec['probe']} (text-prior or leakage): "
            + suspect_summary(results["leakage_suspects"])
        )
    for axis, cells in results["by"].items():
        if len(cells) > 1:  # a one-value table would repeat the overall row
            blocks.append(axis_table(axis, cells, source_suffix(results), results))
    from medlens.report.judges import text_blocks

    blocks.extend(text_blocks(results))
    return blocks


def detail_lines(results: dict[str, Any]) -> list[str]:
    """Extraction sensitivity, closed/open gap, secondary metrics and token usage, when present."""
    from medlens.report.sections import fmt_diff_ci, secondary_text

    lines = []
    if results.get("manual"):
        from medlens.execution.manual import manual_text

        lines.append(manual_text(results["manual"], results["counts"]["records"]))
    decided = results["counts"].get("vocabulary")
    if decided:
        lines.append(f"decided by a vocabulary entry: {decided} items (medlens reading vocab)")
    corrected = results["overall"].get("chance_corrected")
    if corrected is not None:
        lines.append(f"chance-corrected score (score − chance)/(1 − chance): {corrected:+.3f}")
    sensitivity = results.get("extraction_sensitivity")
    if sensitivity:
        lines.append(
            f"extraction sensitivity ({results['spec']['extract']} scored this run): medlens "
            f"{sensitivity['medlens']:.3f} vs VLMEvalKit rules "
            f"{sensitivity['vlmeval']:.3f} (Δ {sensitivity['difference']:+.3f}, 95% CI "
            f"{fmt_diff_ci(sensitivity.get('ci'))})"
        )
        if abs(sensitivity["difference"]) > 1e-12:
            lines.append(VLMEVAL_COLUMN_NOTE)
    gap = (results.get("closed_open") or {}).get("overall")
    if gap and gap["delta"] is not None:
        lines.append(
            f"closed {gap['closed']:.3f} (n={gap['n_closed']}) vs open {gap['open']:.3f} "
            f"(n={gap['n_open']}): Δ {gap['delta']:+.3f}, 95% CI {fmt_diff_ci(gap.get('delta_ci'))}"
            f" ({pairing_text(gap)})"
        )
    if results.get("mmbu_gap"):
        from medlens.analysis.task_mean import mmbu_gap_lines

        lines += mmbu_gap_lines(results["mmbu_gap"])
    elif results.get("closed_open_task_mean"):
        from medlens.analysis.task_mean import task_mean_text

        lines.append(task_mean_text(results["closed_open_task_mean"]))
    box = results.get("box_image_gap")
    if box:
        lines.append(
            f"box − image: {box['difference']:+.3f} (box n={box['n_box']}, image "
            f"n={box['n_image']}), 95% CI {fmt_diff_ci(box['ci'])}"
        )
    if results.get("secondary"):
        lines.append(secondary_text(results))
    lines.extend(protocol_lines(results))
    usage = results.get("usage", {})
    for key, label in (("tokens", "tokens"), ("cached_tokens", "tokens of cache answers")):
        if usage.get(key):
            lines.append(
                f"{label}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(usage[key].items()))
            )
    return lines


def overall_table(results: dict[str, Any]) -> Table:
    overall, rates = results["overall"], results["rates"]
    table = Table(title="overall" + source_suffix(results), title_justify="left")
    for column in (
        "n",
        "images",
        "score",
        "95% CI",
        "random",
        "vlmeval rules",
        "unparsed",
        "refused",
        "empty",
        "error",
    ):
        table.add_column(column, justify="right")
    table.add_row(
        str(overall["n"]),
        images_text(results, overall),
        fmt(overall["score"]),
        fmt_ci(overall["ci"]),
        fmt(overall["random"]),
        fmt(overall["vlmeval_score"]),
        fmt(rates["unparsed"]),
        fmt(rates["refused"]),
        fmt(rates.get("empty", 0.0)),
        fmt(rates["error"]),
    )
    return table


def axis_table(
    axis: str,
    cells: dict[str, dict[str, Any]],
    suffix: str = "",
    results: Mapping[str, Any] | None = None,
) -> Table:
    from medlens.report.axis_rows import coverage_cell
    from medlens.stats.cells import MIN_IMAGES

    title = f"by {axis} (* n < {SMALL_N} or images < {MIN_IMAGES}){suffix}"
    table = Table(title=title, title_justify="left")
    table.add_column(axis, justify="left", overflow="fold", max_width=40)
    columns = ("n", "images", "score", "95% CI", "random", "vlmeval", "unparsed", "refused")
    judged = any("coverage" in c for c in cells.values())
    for column in (*columns, "error", *(("verdicts",) if judged else ())):
        table.add_column(column, justify="right")
    for value, c in cells.items():
        flag = "*" if c.get("small", c["n"] < SMALL_N) else ""
        covered = (coverage_cell(c),) if judged else ()
        table.add_row(
            value,
            f"{c['n']}{flag}",
            images_text(results or {}, c),
            fmt(c["score"]),
            fmt_ci(c["ci"]),
            fmt(c["random"]),
            fmt(c["vlmeval_score"]),
            fmt(c["unparsed"]),
            fmt(c["refused"]),
            fmt(c["error"]),
            *covered,
        )
    return table


def _strategy(results: dict[str, Any]) -> str:
    from medlens.report.sections import strategy_text

    return strategy_text(results)
