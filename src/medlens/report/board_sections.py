"""The board's tables, laid out once from its JSON object for text, markdown, HTML and xlsx.

A cell is (shown text, sort value, exported value): text and markdown print the text, HTML shows
it and sorts by the sort value, xlsx writes the exported value (numbers stay numbers; a
composite cell such as "45.2% [40.1–50.3]" is exported as its text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from string import ascii_lowercase
from typing import Any

from medlens.report.model_label import model_label
from medlens.report.sections import percent, percent_ci

Value = float | int | str | None
Cell = tuple[str, Value, Value]
BEST = "▲"
SMALL = "†"
PAGE_WIDTH = 120
"""Characters a text or markdown table may take (the board's default console width)."""
CELL_PADDING = 3
"""Per column: rich's ``│ `` + `` `` (markdown's ``| `` + `` ``)."""


@dataclass(frozen=True)
class BoardTable:
    key: str
    """Short name (xlsx sheet, HTML id)."""
    title: str
    headers: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)
    text_columns: int = 1


def t(text: object, sort: Value = None) -> Cell:
    """A text cell (exported as its text), sorted by `sort` in HTML."""
    return (str(text), sort, str(text))


def shown(text: str, value: float | int | None) -> Cell:
    """A number shown as `text`, exported as the number itself."""
    return ("–", None, None) if value is None else (text, value, value)


def num(value: float | int | None) -> Cell:
    return shown(str(value), value)


def pct(value: float | None) -> Cell:
    return shown(percent(value), value)


def ci_cell(ci: Sequence[float] | None) -> Cell:
    return t(percent_ci(list(ci) if ci else None), None if not ci else ci[0])


def p_cell(p: float | None) -> Cell:
    return shown(f"{p:.3g}" if p is not None else "", p)


def signed(value: float | None) -> Cell:
    return shown(f"{100 * value:+.1f}" if value is not None else "", value)


def signed_ci(ci: Sequence[float] | None) -> Cell:
    if not ci:
        return t("–")
    return t(f"{100 * ci[0]:+.1f}…{100 * ci[1]:+.1f}", ci[0])


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


def column_widths(table: BoardTable) -> list[int]:
    """Each column's widest shown text (header included), in characters."""
    widths = [len(header) for header in table.headers]
    for row in table.rows:
        widths = [max(w, len(cell[0])) for w, cell in zip(widths, row, strict=False)]
    return widths


def table_width(widths: Sequence[int]) -> int:
    """Characters a table of these column widths takes (rich's and markdown's padding)."""
    return sum(widths) + CELL_PADDING * len(widths) + 1


def pair_tables(board: dict[str, Any]) -> list[BoardTable]:
    headers = ["base", "tuned", "cell", "n", "base", "tuned", "Δ (points)", "95% CI", "W/T/L",
               "McNemar p"]  # fmt: skip
    rows = []
    for pair in board["pairs"]:
        cells = [("overall", pair["overall"])]
        cells += [(f"{axis}={v}", c) for axis, t_ in pair["by"].items() for v, c in t_.items()]
        for label, c in cells:
            rows.append([
                t(pair["base"]), t(pair["tuned"]), t(label), num(c["n"]), pct(c["score_a"]),
                pct(c["score_b"]), signed(c["difference"]), signed_ci(c["ci"]),
                t(f"{c['wins']}/{c['ties']}/{c['losses']}", c["wins"]), p_cell(c["mcnemar_p"]),
            ])  # fmt: skip
    tables = [BoardTable("pairs", "Paired families (tuned − base)", headers, rows, text_columns=3)]
    tests = list((board.get("pair_tests_by") or {}).values()) or (
        [board["pair_tests"]] if board["pair_tests"] else []
    )
    if tests:
        rows = [[t(test["over"]), num(test["n"]), num(test["n_nonzero"]),
                 t(f"{test['positive']}/{test['negative']}"), signed(test["median_difference"]),
                 p_cell(test["sign_p"]), p_cell(test["wilcoxon_p"]), p_cell(test["min_p"])]
                for test in tests]  # fmt: skip
        headers = ["differences over", "n", "non-zero", "+/−", "median Δ (points)", "sign p",
                   "Wilcoxon p", "smallest possible p"]  # fmt: skip
        notes = ["two-sided exact tests, zero differences dropped (scipy); "
                 f"Wilcoxon: {tests[0]['wilcoxon_method']}"]  # fmt: skip
        if len(tests) > 1:
            notes.append(
                "one test per axis: two axes' cells hold the same items, so they are never pooled"
            )
        tables.append(BoardTable("pair tests", "Tests across pairs", headers, rows, notes))
    return tables


def correlation_table(correlations: dict[str, dict[str, Any]]) -> BoardTable:
    headers = ["column", "cell", "n", "Spearman", "95% CI", "Pearson", "95% CI", "slope",
               "intercept", "R²"]  # fmt: skip
    rows = []
    for column, result in correlations.items():
        cells = [("overall", result)]
        cells += [(f"{a}={v}", c) for a, table in result["by"].items() for v, c in table.items()]
        for label, c in cells:
            rows.append([t(column), t(label), num(c["n"]), _r(c["spearman"]),
                         _r_ci(c["ci"]["spearman"]), _r(c["pearson"]), _r_ci(c["ci"]["pearson"]),
                         _g(c["slope"]), _g(c["intercept"]), _r(c["r2"])])  # fmt: skip
    notes = ["score (0–1) against each numeric --meta column; CIs: Fisher z; line: least squares"]
    return BoardTable("correlations", "Scores and model metadata", headers, rows, notes, 2)


def pair_correlation_table(results: dict[str, dict[str, Any]]) -> BoardTable:
    headers = ["column", "pair measure", "pairs", "Spearman", "95% CI", "Pearson", "95% CI",
               "slope", "intercept", "R²"]  # fmt: skip
    rows = []
    for column, measures in results.items():
        for measure, c in measures.items():
            rows.append([t(column), t(measure.replace("_", " ")), num(c["n"]), _r(c["spearman"]),
                         _r_ci(c["ci"]["spearman"]), _r(c["pearson"]), _r_ci(c["ci"]["pearson"]),
                         _g(c["slope"]), _g(c["intercept"]), _r(c["r2"])])  # fmt: skip
    notes = ["each pair's win rate (items the tuned model wins / n) and difference against the "
             "tuned run's value of the column"]  # fmt: skip
    return BoardTable("pair correlations", "Pairs and model metadata", headers, rows, notes, 2)


def _r(value: float | None) -> Cell:
    return shown(f"{value:.2f}" if value is not None else "", value)


def _g(value: float | None) -> Cell:
    return shown(f"{value:.4g}" if value is not None else "", value)


RANK_GROUP_NOTE = (
    "rank intervals and tied groups are two inferences and can differ: an interval is each "
    "model's 95% range of ranks with no multiplicity correction, a group joins models no "
    "Holm-adjusted pairwise test separates; overlapping intervals need not mean a tie, nor "
    "disjoint ones a significant difference after Holm"
)


def _r_ci(ci: Sequence[float] | None) -> Cell:
    return t("–") if not ci else t(f"{ci[0]:.2f}…{ci[1]:.2f}", ci[0])


def win_share_tables(shares: dict[str, Any]) -> list[BoardTable]:
    tables = []
    for column, entries in shares.items():
        if isinstance(entries, dict):
            continue  # skipped: too many groups
        headers = ["groups (wins of the first)", "cell", "items", "wins", "ties", "losses",
                   "win share", "95% CI"]  # fmt: skip
        rows = []
        for e in entries:
            label = f"{e['group']} ({e['models'][0]}) vs {e['versus']} ({e['models'][1]})"
            cells = [("overall", e["overall"])]
            cells += [(f"{a}={v}", c) for a, table in e["by"].items() for v, c in table.items()]
            for cell_label, c in cells:
                rows.append([t(label), t(cell_label), num(c["items"]), num(c["wins"]),
                             num(c["ties"]), num(c["losses"]), pct(c["win_share"]),
                             ci_cell(c["ci"])])  # fmt: skip
            per_value = e.get("per_value")
            if per_value:
                rows.append([t(label), t(f"per {per_value['axis']} value ({per_value['values']} values)"),
                             t(""), num(per_value["wins"]), num(per_value["ties"]),
                             num(per_value["losses"]), pct(per_value["win_share"]),
                             t(f"mean lead {signed(per_value['mean_lead'])[0]} points")])  # fmt: skip
        first = entries[0]["group"] if entries else "the first group"
        notes = ["per-item comparisons of every model pair across the groups; wins, losses and "
                 f"the win share count for the first group named (e.g. {first}): win share = its "
                 "wins / (wins + losses); CI: images resampled"]  # fmt: skip
        if any(e.get("per_value") for e in entries):
            notes.append("per value: each model pair's mean scores on each value compared; "
                         "win share = wins / comparisons (MMBU's sub-modality share)")  # fmt: skip
        tables.append(BoardTable(f"wins {column}", f"Win shares by {column}", headers, rows,
                                 notes, 2))  # fmt: skip
    return tables


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
