"""A board's paper layout (``board --layout``) as tables, for text, markdown, HTML and xlsx.

The main table prints each run's cells as ``value [95% CI]`` (judged cells add their coverage,
``cov verdicts/scope``), a row of item counts, the chance row and the published rows (marked
"(published)", unranked, with their citation); runs that are not like for like with the
published table carry ``not comparable: <reason>``. Med-CMR and GMAI print percentages with two
decimals as their papers do, MMBU micro-F1 with three.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlens.report.board_cells import (
    BoardTable,
    Cell,
    ci_cell,
    num,
    p_cell,
    pct,
    shown,
    signed,
    t,
)
from medlens.report.board_sections import board_tables, run_labels

DIGITS = {"medcmr": (100.0, 2), "gmai": (100.0, 2), "mmbu": (1.0, 3)}


def layout_tables(board: dict[str, Any]) -> list[BoardTable]:
    layout = board.get("layout")
    if not layout:
        return []
    labels = run_labels(board)
    tables = [main_table(layout, labels)]
    if layout.get("dimensions"):
        tables.append(dimension_table(layout["dimensions"], labels))
    pairs = layout.get("pairs")
    if pairs and layout["name"] == "medcmr":
        tables += medcmr_pair_tables(pairs)
    if pairs and layout["name"] == "mmbu":
        tables += mmbu_pair_tables(pairs)
    if layout.get("correlations"):
        tables.append(correlation_table(layout["correlations"]))
    if layout["name"] == "gmai":
        tables += gmai_axis_tables(board, layout)
    return tables


def _value(layout: str, value: float | None) -> str:
    scale, digits = DIGITS[layout]
    return "–" if value is None else f"{scale * value:.{digits}f}"


def cell_text(layout: str, cell: dict[str, Any] | None) -> Cell:
    if not cell or cell.get("value") is None:
        return t("–")
    text = _value(layout, cell["value"])
    ci = cell.get("ci")
    if ci:
        text += f" [{_value(layout, ci[0])}–{_value(layout, ci[1])}]"
    cover = cell.get("coverage")
    if cover:
        text += f" cov {cover['verdicts']}/{cover['scope']}"
    return (text, cell["value"], cell["value"] if not ci else text)


def main_table(layout: dict[str, Any], labels: dict[str, str] | None = None) -> BoardTable:
    """The paper's table: a row per run (named as every board table names it), the chance row
    and the published rows."""
    name, columns = layout["name"], layout["columns"]
    headers = ["run / model", "", *columns]
    runs = [row for row in layout["rows"] if not row.get("published") and not row.get("chance")]
    counts = [t("n (items)"), t("")]
    for column in columns:
        ns = sorted({row["cells"][column]["n"] for row in runs if column in row["cells"]})
        counts.append(t("–" if not ns else "/".join(map(str, ns[:3])), ns[0] if ns else None))
    rows = [counts]
    notes = [f"value [95% CI]; {_scale_note(name)}; scores: {layout['score_source']}; "
             "published rows are unranked (the models table maps runs to models)"]  # fmt: skip
    for row in layout["rows"]:
        label = (labels or {}).get(row.get("run") or "") or row.get("run") or row["model"]
        second = "published" if row.get("published") else ("run" if row.get("run") else "")
        rows.append(
            [
                t(label, row["model"]),
                t(second),
                *(cell_text(name, row["cells"].get(c)) for c in columns),
            ]
        )
        if row.get("not_comparable"):
            notes.append(f"{row.get('run')}: {row['not_comparable']}")
    notes += gap_notes(layout, labels)
    sources = sorted({row["source"] for row in layout["rows"] if row.get("published")})
    notes += [f"published: {source}" for source in sources]
    if any("coverage" in c for row in runs for c in row["cells"].values()):
        notes.append(
            "cov: items with a judge's verdict / items of the judged scope (no verdict: left out, never 0)"
        )
    return BoardTable("layout", layout["title"], headers, rows, notes, text_columns=2)


def gap_notes(layout: dict[str, Any], labels: dict[str, str] | None = None) -> list[str]:
    """MMBU's headline closed − open gap of each run and of the published rows."""
    from medlens.analysis.task_mean import mmbu_gap_lines, published_gap_text

    gap = layout.get("gap") or {}
    notes = []
    for run, found in (gap.get("runs") or {}).items():
        name = (labels or {}).get(run) or run
        notes += [f"{name}: {line.strip()}" for line in mmbu_gap_lines(found)]
    if gap.get("published"):
        notes.append(published_gap_text(gap["published"]))
    return notes


def _scale_note(name: str) -> str:
    return "micro-F1 (0–1)" if name == "mmbu" else "percent (0–100)"


def dimension_table(dimensions: dict[str, Any], labels: dict[str, str] | None = None) -> BoardTable:
    columns = dimensions["columns"]
    weights = dimensions.get("weights") or {}
    headers = ["run", *[f"{c} (w {weights.get(c, 1):g})" for c in columns]]
    rows = []
    for row in dimensions["rows"]:
        cells = []
        for column in columns:
            cell = row["cells"].get(column) or {}
            value, ci = cell.get("value"), cell.get("ci")
            text = (
                "–"
                if value is None
                else f"{value:.2f}" + (f" [{ci[0]:.2f}–{ci[1]:.2f}]" if ci else "")
            )
            cells.append((text + (f" n={cell['n']}" if value is not None else ""), value, value))
        run = row.get("run") or ""
        rows.append([t((labels or {}).get(run) or run or row["model"]), *cells])
    notes = [
        "mean points on the rubric's 0–10 scale [95% CI inside 0–10]; open items with a verdict"
    ]
    return BoardTable(
        "rubric dimensions", "Judge rubric dimensions (open items)", headers, rows, notes
    )


def medcmr_pair_tables(pairs: dict[str, Any]) -> list[BoardTable]:
    dims = pairs["dimensions"]
    headers = ["base", "tuned", "answers", "all [95% CI]", "W/T/L", *dims]
    rows = []
    for row in pairs["rows"]:
        for form, label in (("mcq", "MCQ"), ("open", "open (judged)")):
            every = row.get(f"{form}_all") or {}
            rows.append([t(row["base"]), t(row["tuned"]), t(label), _difference(every),
                         t(f"{every['wins']}/{every['ties']}/{every['losses']}" if every else "–"),
                         *(signed(row[form].get(d)) for d in dims)])  # fmt: skip
    table = BoardTable("layout pairs", "Base → medical fine-tune: tuned − base per dimension (points)",
                       headers, rows, text_columns=3)  # fmt: skip
    return [
        table,
        tests_table(pairs["tests"], "layout pair tests", "Tests across pairs × dimensions"),
    ]


def _difference(cell: dict[str, Any]) -> Cell:
    if not cell or not cell.get("ci"):
        return t("–" if not cell else cell.get("note") or "–")
    lo, hi = cell["ci"]
    return t(
        f"{100 * cell['difference']:+.1f} [{100 * lo:+.1f}…{100 * hi:+.1f}]", cell["difference"]
    )


def tests_table(tests: dict[str, dict[str, Any]], key: str, title: str) -> BoardTable:
    headers = [
        "differences over",
        "n",
        "+/−",
        "median Δ (points)",
        "sign p",
        "Wilcoxon p",
        "smallest possible p",
    ]
    rows = [[t(test["over"]), num(test["n"]), t(f"{test['positive']}/{test['negative']}"),
             signed(test["median_difference"]), p_cell(test["sign_p"]), p_cell(test["wilcoxon_p"]),
             p_cell(test["min_p"])] for test in tests.values()]  # fmt: skip
    notes = [
        "two-sided exact tests (scipy), zero differences dropped; MCQ and open answers tested apart"
    ]
    return BoardTable(key, title, headers, rows, notes)


def mmbu_pair_tables(pairs: dict[str, Any]) -> list[BoardTable]:
    headers = [
        "base",
        "adapted",
        "n",
        "base F1",
        "adapted F1",
        "change",
        "95% CI",
        "wins",
        "ties",
        "losses",
    ]
    rows = []
    for r in pairs["rows"]:
        if not r.get("n"):
            rows.append([t(r["base"]), t(r["tuned"]), num(0), *(t("–") for _ in headers[3:])])
            continue
        rows.append([t(r["base"]), t(r["tuned"]), num(r["n"]), _f1(r["base_f1"]), _f1(r["tuned_f1"]),
                     shown(f"{r['change']:+.3f}", r["change"]), t(f"{r['ci'][0]:+.3f}…{r['ci'][1]:+.3f}"),
                     _share(r["win_share"]), _share(r["tie_share"]), _share(r["loss_share"])])  # fmt: skip
    for p in pairs["published"]:
        rows.append([t(f"{p['base']} (published)"), t(p["adapted"]), t(""), _f1(p["base_f1"]),
                     _f1(p["adapted_f1"]), shown(f"{p['change']:+.3f}", p["change"]), t(""), t(""), t(""), t("")])  # fmt: skip
    notes = ["closed unanchored classification; change: paired CI (images as clusters); wins/ties/losses: "
             "shares of items the adapted model scores higher / equal / lower"]  # fmt: skip
    tables = [
        BoardTable(
            "base vs adapted", "Base vs adapted (MMBU)", headers, rows, notes, text_columns=2
        )
    ]
    fits = pairs.get("win_rate_fit") or {}
    if fits:
        fit_rows = [
            [t(name), num(c["n"]), _g(c["slope"]), _g(c["intercept"]), _g(c["r2"])]
            for name, c in fits.items()
        ]
        tables.append(BoardTable("win rate fit", "Win rate (%) regressed on model metadata",
                                 ["column", "pairs", "slope", "intercept", "R²"], fit_rows))  # fmt: skip
    return tables


def correlation_table(correlations: dict[str, dict[str, Any]]) -> BoardTable:
    headers = ["metadata", "column", "n", "Spearman", "Pearson", "95% CI", "slope", "R²"]
    rows = []
    for meta, by_column in correlations.items():
        for column, c in by_column.items():
            ci = c["ci"]["pearson"]
            rows.append([t(meta), t(column), num(c["n"]), _g(c["spearman"]), _g(c["pearson"]),
                         t("–" if not ci else f"{ci[0]:.2f}…{ci[1]:.2f}"), _g(c["slope"]), _g(c["r2"])])  # fmt: skip
    notes = [
        "each numeric --meta column against each column's run values (scores 0–1; rubric points 0–10)"
    ]
    return BoardTable(
        "layout correlations", "Model metadata against the table's columns", headers, rows, notes, 2
    )


def gmai_axis_tables(board: dict[str, Any], layout: dict[str, Any]) -> list[BoardTable]:
    from medlens.report.board_sections import axis_table

    view = {"models": board["models"], "by_chance": layout.get("by_chance", {})}
    return [
        axis_table(axis, values, view) for axis, values in layout.get("by", {}).items() if values
    ]


def _f1(value: float | None) -> Cell:
    return shown(f"{value:.3f}" if value is not None else "", value)


def _share(value: float | None) -> Cell:
    return shown(f"{100 * value:.1f}%" if value is not None else "", value)


def _g(value: float | None) -> Cell:
    return shown(f"{value:.3g}" if value is not None else "", value)


def all_tables(board: dict[str, Any]) -> list[BoardTable]:
    """The layout's tables first (the paper's main table), then every board table; under a
    judged score source every title names it."""
    from dataclasses import replace

    tables = [*layout_tables(board), *board_tables(_without_layout_axes(board)),
              *calibrated_tables(board)]  # fmt: skip
    source = board.get("score_source", "rules")
    if source == "rules":
        return tables
    return [replace(table, title=f"{table.title} (scores: {source})") for table in tables]


def _without_layout_axes(board: dict[str, Any]) -> dict[str, Any]:
    """The board without the per-axis cells its layout already tabulates (GMAI's granularity,
    task and department tables with ``--by task``: printed once, not twice)."""
    shown = set((board.get("layout") or {}).get("by") or ())
    if not shown or not board.get("by"):
        return board
    return {**board, "by": {axis: v for axis, v in board["by"].items() if axis not in shown}}


def calibrated_tables(board: dict[str, Any]) -> list[BoardTable]:
    """``--human``: each run's judged score calibrated on the human labels, beside the raw one."""
    found = board.get("calibrated")
    if not found:
        return []
    rows = [
        [t(row["run"]), pct(row["raw"]), pct(row["score"]), ci_cell(row["ci"]),
         num(row["n_human"]), num(row["n_judged"]), t(row["method"] or "")]
        for row in found["runs"]
    ]  # fmt: skip
    title = f"Judge {found['judge']} calibrated on human labels (PPI): {found['label']}"
    headers = ["run", "raw judged", "calibrated", "95% CI", "human labels", "judged", "method"]
    notes = [f"judge label: {found['label']} ({found['label_reason']})"]
    return [BoardTable("calibrated", title, headers, rows, notes)]


__all__: Sequence[str] = ["all_tables", "calibrated_tables", "layout_tables"]
