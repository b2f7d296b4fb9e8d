"""The board's comparison tables: paired families (tuned − base) and the tests across pairs,
scores against model metadata (per run and per pair), and win shares between groups of models
(owns how the board's comparisons beyond the ranking are tabled)."""

from __future__ import annotations

from typing import Any

from medlens.report.board_cells import (
    BoardTable,
    ci_cell,
    g_cell,
    num,
    p_cell,
    pct,
    r_cell,
    r_ci_cell,
    signed,
    signed_ci,
    t,
)


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
            rows.append([t(column), t(label), num(c["n"]), r_cell(c["spearman"]),
                         r_ci_cell(c["ci"]["spearman"]), r_cell(c["pearson"]), r_ci_cell(c["ci"]["pearson"]),
                         g_cell(c["slope"]), g_cell(c["intercept"]), r_cell(c["r2"])])  # fmt: skip
    notes = ["score (0–1) against each numeric --meta column; CIs: Fisher z; line: least squares"]
    return BoardTable("correlations", "Scores and model metadata", headers, rows, notes, 2)


def pair_correlation_table(results: dict[str, dict[str, Any]]) -> BoardTable:
    headers = ["column", "pair measure", "pairs", "Spearman", "95% CI", "Pearson", "95% CI",
               "slope", "intercept", "R²"]  # fmt: skip
    rows = []
    for column, measures in results.items():
        for measure, c in measures.items():
            rows.append([t(column), t(measure.replace("_", " ")), num(c["n"]), r_cell(c["spearman"]),
                         r_ci_cell(c["ci"]["spearman"]), r_cell(c["pearson"]), r_ci_cell(c["ci"]["pearson"]),
                         g_cell(c["slope"]), g_cell(c["intercept"]), r_cell(c["r2"])])  # fmt: skip
    notes = ["each pair's win rate (items the tuned model wins / n) and difference against the "
             "tuned run's value of the column"]  # fmt: skip
    return BoardTable("pair correlations", "Pairs and model metadata", headers, rows, notes, 2)


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
