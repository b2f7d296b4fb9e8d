"""The board's tables, laid out once from its JSON object for text, markdown, HTML and xlsx
(owns which tables a board has, in reading order, and the ranking, per-axis, difficulty,
across-benchmarks and published tables; the cells are ``board_cells``, the comparison tables
``board_comparisons``).

A cell is (shown text, sort value, exported value): text and markdown print the text, HTML shows
it and sorts by the sort value, xlsx writes the exported value (numbers stay numbers; a
composite cell such as "45.2% [40.1–50.3]" is exported as its text).
"""

from __future__ import annotations

from string import ascii_lowercase
from typing import Any

from medlens.report.board_cells import (
    BEST,
    CELL_PADDING,
    PAGE_WIDTH,
    SMALL,
    BoardTable,
    Cell,
    Value,
    ci_cell,
    column_widths,
    num,
    pct,
    shown,
    signed_ci,
    t,
    table_width,
)
from medlens.report.board_comparisons import (
    correlation_table,
    pair_correlation_table,
    pair_tables,
    win_share_tables,
)
from medlens.report.model_label import model_label
from medlens.report.percent_text import percent, percent_ci

__all__ = [  # what renderers, tests and users import from here (cells and comparisons next door)
    "BEST",
    "CELL_PADDING",
    "PAGE_WIDTH",
    "SMALL",
    "BoardTable",
    "Cell",
    "Value",
    "axis_table",
    "board_tables",
    "board_title",
    "column_widths",
    "group_letters",
    "models_table",
    "run_labels",
    "shown",
    "t",
    "table_width",
    "win_share_tables",
]


def board_tables(board: dict[str, Any]) -> list[BoardTable]:
    """Every table of the board, in reading order."""
    if board.get("across"):
        return [across_table(board["across"]), *references_only(board)]
    tables = [models_table(board)]
    tables += [axis_table(axis, values, board) for axis, values in board["by"].items()]
    if board["pairs"]:
        tables += pair_tables(board)
    if board["correlations"]:
        tables.append(correlation_table(board["correlations"]))
    if board.get("pair_correlations"):
        tables.append(pair_correlation_table(board["pair_correlations"]))
    tables += win_share_tables(board.get("win_shares") or {})
    if board.get("reference_table"):
        tables.append(published_table(board["reference_table"]))
    tables.append(difficulty_table(board["difficulty"]))
    return tables


def group_letters(board: dict[str, Any]) -> dict[str, str]:
    """run → letters of the tied groups it belongs to (a, b, …; groups may overlap)."""
    letters: dict[str, str] = {}
    for k, group in enumerate(board["tied"]):
        letter = ascii_lowercase[k % 26]
        for run in group:
            letters[run] = letters.get(run, "") + letter
    return letters


def models_table(board: dict[str, Any]) -> BoardTable:
    letters = group_letters(board)
    headers = ["model", "run", "rank", "rank 95% CI", "n", "images", "score", "95% CI", "tied"]
    no_images = bool(board.get("imageless"))
    rows = []
    for m in board["models"]:
        flag = f" {SMALL}" if m["small"] else ""
        flag += " — not comparable (see below)" if m.get("not_comparable") else ""
        rows.append([
            t(model_label(m["name"]) + flag, m["name"]), t(m["run"]), num(m["rank"]),
            t(f"{m['rank_ci'][0]}–{m['rank_ci'][1]}", m["rank_ci"][0]), num(m["n"]),
            t("–") if no_images and m["images"] == m["n"] else num(m["images"]), pct(m["score"]),
            ci_cell(m["ci"]),
            t(letters.get(m["run"], "")),
        ])  # fmt: skip
    chance = board["chance"]
    rows.append([t("chance (random guess)"), t(""), t("unranked"), t(""), num(chance["n"]),
                 t(""), pct(chance["score"]), t("– (expectation)"), t("")])  # fmt: skip
    for e in board.get("estimated") or []:
        extra = " (extrapolating)" if e.get("extrapolating") else ""
        rows.append([t(f"{e['name']} — {e['label']}{extra}", e["name"]), t(e["run"]), t("unranked"),
                     t(""), num(e["n"]), t(""), pct(e["estimate"]), ci_cell(e["ci"]), t("")])  # fmt: skip
    footnotes = []  # provenance of published rows below the table, not squeezed into its cells
    for number, ref in enumerate(board["references"], start=1):
        mark = f"‡{number}"
        rows.append([t(f"{ref['model']} (published) {mark}", ref["model"]), t(""),
                     t("unranked"), t(""), t(""), t(""), pct(ref["score"]), t("–"), t("")])  # fmt: skip
        footnotes.append(f"{mark} {ref['model']}: published score {pct(ref['score'])[0]}, split "
                         f"{ref.get('split') or '?'}; source: {ref.get('source') or 'not given'}")  # fmt: skip
    notes = [
        f"rank interval: paired bootstrap of items ({_resampled(board)}); "
        f"tied: groups not significantly different ({board['tied_test']}); "
        f"{SMALL}: n < 50 or items from under 10 images",
        RANK_GROUP_NOTE,
    ]
    notes += [f"{run}: {label}" for run, label in (board.get("not_comparable") or {}).items()]
    if board.get("estimated"):
        notes.append("estimated from N items: a run on a designed subset (medlens items sample), "
                     "its full-benchmark score estimated by AIPW with a design-based 95% interval; "
                     "unranked (not on the same items)")  # fmt: skip
        if any(" of " in str(e.get("label")) for e in board["estimated"]):
            notes.append("estimated from N of M items: an adaptive run (medlens run --adaptive) "
                         "that asked N of the M items, its full-benchmark score estimated with a "
                         "design-based 95% interval (docs/statistics.md); unranked")  # fmt: skip
        notes += [f"{e['run']}: {e['note']}" for e in board["estimated"] if e.get("note")]
    notes += list(board.get("near_ceiling") or [])
    dropped = {run: k for run, k in board["align"]["dropped"].items() if k}
    if dropped:
        listing = ", ".join(f"{run} {k}" for run, k in dropped.items())
        notes.append(f"--align intersect: {board['align']['n']} common items; dropped {listing}")
    return BoardTable("models", "Models", headers, rows, [*notes, *footnotes], text_columns=2)


def _resampled(board: dict[str, Any]) -> str:
    models = board["models"]
    if models and models[0]["images"] < models[0]["n"]:
        return "whole images resampled, as questions share them"
    return "items resampled"


def run_labels(board: dict[str, Any]) -> dict[str, str]:
    """Run → the name its rows show: the study label where it has one, else the run name
    (never the model spec: two runs of one spec would be two identical rows)."""
    return {m["run"]: m.get("label") or m["run"] for m in board.get("models", [])}


def axis_table(
    axis: str, values: dict[str, list[dict[str, Any]]], board: dict[str, Any]
) -> BoardTable:
    """Runs × the axis's values; transposed (values × runs) when that is what fits the page:
    18 departments as columns run off it, as 18 rows they do not."""
    order = [m["run"] for m in board["models"]]
    labels = run_labels(board)
    columns = list(values)
    no_images = bool(board.get("imageless")) and all(
        cells[0]["images"] == cells[0]["n"] for cells in values.values()
    )  # every item its own cluster: no image count to show
    counts = {
        value: t(f"{cells[0]['n']}{'' if no_images else ' (' + str(cells[0]['images']) + ')'}"
                 f"{' ' + SMALL if cells[0]['small'] else ''}", cells[0]["n"])
        for value, cells in values.items()
    }  # fmt: skip
    chance = board.get("by_chance", {}).get(axis, {})
    grid = {(run, value): _axis_cell(values[value], run) for run in order for value in columns}
    notes = [f"{BEST}: best score in the column; [95% CI]; {SMALL}: small cell"]
    headers = ["run", *columns]
    rows = [[t("n" if no_images else "n (images)"), *(counts[v] for v in columns)]]
    rows += [[t(labels[run], labels[run]), *(grid[run, v] for v in columns)] for run in order]
    rows.append([t("chance (random guess)")] + [pct(chance.get(v)) for v in columns])
    wide = BoardTable(f"by {axis}", f"By {axis}", headers, rows, notes)
    if len(columns) <= len(order) or table_width(column_widths(wide)) <= PAGE_WIDTH:
        return wide
    best = f"{BEST}: best score in the row; [95% CI]; {SMALL}: small cell"
    headers = [axis, "n (images)", *(labels[run] for run in order), "chance (random guess)"]
    rows = [[t(v, v), counts[v], *(grid[run, v] for run in order), pct(chance.get(v))]
            for v in columns]  # fmt: skip
    return BoardTable(f"by {axis}", f"By {axis}", headers, rows, [best])


def _axis_cell(cells: list[dict[str, Any]], run: str) -> Cell:
    cell = next(c for c in cells if c["run"] == run)
    mark = f" {BEST}" if cell["best"] else ""
    return t(f"{percent(cell['score'])} [{percent_ci(cell['ci'])}]{mark}", cell["score"])


RANK_GROUP_NOTE = (
    "rank intervals and tied groups are two inferences and can differ: an interval is each "
    "model's 95% range of ranks with no multiplicity correction, a group joins models no "
    "Holm-adjusted pairwise test separates; overlapping intervals need not mean a tie, nor "
    "disjoint ones a significant difference after Holm"
)


def difficulty_table(d: dict[str, Any]) -> BoardTable:
    headers = ["models right", "share of models", "items"]
    if d.get("continuous"):
        return BoardTable(
            "difficulty", "Item difficulty", headers, [], [f"{d['n']} items: {d['note']}"]
        )
    rows = [[num(h["right"]), pct(h["share"]), num(h["items"])] for h in d["histogram"]]
    notes = [f"{d['n']} items: {d['solved_by_all']} solved by every run, "
             f"{d['solved_by_none']} by none; mean share right {percent(d['mean_share'])}"]  # fmt: skip
    return BoardTable("difficulty", "Item difficulty", headers, rows, notes)


def across_table(matrix: dict[str, Any]) -> BoardTable:
    headers = ["model", *matrix["benchmarks"]]
    cells = {(c["model"], c["benchmark"]): c for c in matrix["cells"]}
    rows = []
    for model in matrix["models"]:
        row = [t(model)]
        for bench in matrix["benchmarks"]:
            c = cells.get((model, bench))
            row.append(t("–") if c is None else t(_across_text(c), c["score"]))
        rows.append(row)
    base = matrix["base"]
    notes = ["score [95% CI], n" + (f"; gain vs {base} in points [paired 95% CI]" if base else "")]
    if any(c.get("estimated") for c in matrix["cells"]):
        notes.append("estimated from N items: a run on a designed subset, its full-benchmark "
                     "score estimated by AIPW with a design-based 95% interval")  # fmt: skip
    for gap in matrix.get("split_gaps") or []:
        low, high = gap["ci"]
        notes.append(
            f"{gap['model']}: {gap['splits'][0]} − {gap['splits'][1]} {100 * gap['gap']:+.1f} "
            f"points [{100 * low:+.1f}, {100 * high:+.1f}] (unpaired)"
            + (f" — {gap['alert']}" if gap["alert"] else "")
        )
    return BoardTable("across", "Models × benchmarks", headers, rows, notes)


def _across_text(c: dict[str, Any]) -> str:
    if c.get("estimated"):  # a run on a designed subset: the estimate, or why there is none
        if c["score"] is None:
            return f"no estimate (n={c['n']})"
        return f"{percent(c['score'])} [{percent_ci(c['ci'])}] {c['estimated']}"
    text = f"{percent(c['score'])} [{percent_ci(c['ci'])}] n={c['n']}"
    gain = c.get("gain")
    if gain:
        text += f"; {100 * gain['difference']:+.1f} [{signed_ci(gain['ci'])[0]}]"
    return text


def references_only(board: dict[str, Any]) -> list[BoardTable]:
    if not board["references"]:
        return []
    rows = [[t(r["model"]), pct(r["score"]), t(r.get("split") or ""), t(r.get("source") or "")]
            for r in board["references"]]  # fmt: skip
    return [BoardTable("references", "Published reference scores (unranked)",
                       ["model", "score", "split", "source"], rows)]  # fmt: skip


def published_table(table: dict[str, Any]) -> BoardTable:
    """A published table shown on its own (its columns are not the board's overall score)."""
    columns = table["columns"]
    rows = [[t(r["model"]), *(pct(r["cells"].get(c, {}).get("value")) for c in columns)]
            for r in table["rows"]]  # fmt: skip
    notes = [f"source: {table['citation']}; unranked, not comparable with the board's overall "
             "score (use --layout for the paper's own columns)"]  # fmt: skip
    return BoardTable(
        "published", f"Published table {table['name']}", ["model", *columns], rows, notes
    )


def board_title(board: dict[str, Any]) -> str:
    if board.get("across"):
        return f"medlens board: {len(board['across']['models'])} models × " + ", ".join(
            board["across"]["benchmarks"]
        )
    bench = board["benchmark"]
    where = f", where {board['where']}" if board.get("where") else ""
    source = board.get("score_source", "rules")
    scores = f", scores {source}" if source != "rules" else ""
    return (
        f"medlens board: {bench.get('name')} ({bench.get('split')}), "
        f"{len(board['models'])} run{'s' if len(board['models']) != 1 else ''}, "
        f"{board['align']['n']} items{where}{scores}"
    )
