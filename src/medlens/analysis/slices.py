"""The lexical tree: filter, group and cube a run over its metadata axes, with honest n and CIs.

Group-bys run in DuckDB over an Arrow table (one row per item with a record). Each cell gets
the same statistics as ``results.json`` (see ``medlens.analysis.results.cell``): n, score, a 95% CI,
random baseline and unparsed/refused/empty/error rates. The CI comes from the
cell's units (its images, and its items when scores are fractional) as DuckDB collapses them,
through ``intervals.spread``: the method and the numbers of ``bootstrap.group_cis``, which
``results.json`` uses, so a cell shows the same interval in ``slice`` and in ``report``.
Every cell also counts its images (clusters); few images make a cell small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.analysis.groupable import check_by_axes, per_item_field
from medlens.analysis.slice_cells import Cell, key_label
from medlens.core.errors import SpecError
from medlens.core.where import Condition, check_values
from medlens.stats.cells import DEFAULT_MIN_N, is_small

__all__ = ["Cell", "SliceTable", "apply_where", "cube", "key_label", "load_slice_table"]

if TYPE_CHECKING:
    import pyarrow as pa

    from medlens.analysis.score_source import ScoreSource
    from medlens.analysis.score_table import ScoreTable
    from medlens.stats.intervals import Spread
    from medlens.stats.units import Units

MAX_AXES = 4
CONFIDENCE = 0.95
WORST_ALPHA = 0.05
"""Level of the Holm-adjusted test behind a worst cell's ``below_chance``."""
# Internal column names cannot clash with metadata keys, which never start with "__".
_SCORE, _VLMEVAL, _RANDOM, _STATUS, _CLUSTER, _SCOPE = (
    "__score",
    "__vlmeval",
    "__random",
    "__status",
    "__cluster",
    "__scope",
)
_RATES = ("unparsed", "refused", "empty")


@dataclass(frozen=True)
class SliceTable:
    """One row per item with a record: internal score/status columns plus one column per axis."""

    table: pa.Table
    axes: tuple[str, ...]
    """Metadata keys available for grouping and filtering."""
    has_answers: bool = True
    """False for splits without gold answers (nothing can be scored)."""
    score_source: str = "rules"
    """The ``--score`` source the scores come from (``analysis.score_source``)."""


def _check_groupable(table: SliceTable, axes: Sequence[str]) -> None:
    """`--by` on known, non-per-item axes; the whole metadata is read only to explain a refusal."""

    def column(axis: str) -> np.ndarray:
        return np.asarray(table.table.column(axis).to_pylist(), dtype=object)

    if all(a in table.axes and not per_item_field(a, column(a)) for a in axes):
        return
    check_by_axes(axes, {axis: column(axis) for axis in table.axes})


# -- building the table ------------------------------------------------------------------------
def load_slice_table(run_dir: Path, source: ScoreSource | None = None) -> SliceTable:
    """The slice table of a run directory (items joined with their latest records), scored
    by `source` (``--score``; rules by default, straight from the fresh score file)."""
    from medlens.analysis.artifacts import fresh_score_file, sourced_score_table
    from medlens.analysis.score_file import slice_columns
    from medlens.analysis.score_source import RULES
    from medlens.runs.view import RunView

    source = source or RULES
    view = RunView(run_dir)
    has_answers = bool(view.spec["benchmark"].get("has_answers", True))
    found = None if source.judged else fresh_score_file(view)
    if found is not None:  # straight from the score file's columns
        names = {"score": _SCORE, "vlmeval": _VLMEVAL, "random": _RANDOM}
        names.update({"status": _STATUS, "cluster": _CLUSTER})
        columns, axes = slice_columns(found[0], names)
        return SliceTable(columns, axes, has_answers, source.label)
    table = slice_table(sourced_score_table(Path(run_dir), source)[0])
    return SliceTable(table.table, table.axes, has_answers, source.label)


def slice_table(scores: ScoreTable) -> SliceTable:
    """Arrow form of a results.ScoreTable; NaN scores become nulls, empty axis values nulls."""
    import pyarrow as pa

    columns: dict[str, pa.Array] = {
        _SCORE: pa.array(scores.score, type=pa.float64(), from_pandas=True),
        _VLMEVAL: pa.array(scores.vlmeval, type=pa.float64(), from_pandas=True),
        _RANDOM: pa.array(scores.random, type=pa.float64(), from_pandas=True),
        _STATUS: pa.array(scores.status.tolist(), type=pa.string()),
        _CLUSTER: pa.array([str(c) for c in scores.cluster.tolist()], type=pa.string()),
    }
    if scores.scope is not None:
        columns[_SCOPE] = pa.array(scores.scope, type=pa.bool_())
    for axis, values in scores.meta.items():
        columns[axis] = pa.array([v or None for v in values.tolist()], type=pa.string())
    return SliceTable(pa.table(columns), tuple(scores.meta))


def apply_where(table: SliceTable, conditions: Sequence[Condition]) -> SliceTable:
    """Rows matching every condition (missing values never equal anything)."""
    if not conditions:
        return table
    import pyarrow.compute as pc  # a tenth of a second: only when there is something to filter

    check_values(conditions, {
        c.axis: {str(v) for v in pc.unique(table.table[c.axis]).to_pylist() if v} for c in conditions
    })  # fmt: skip
    mask = None
    for condition in conditions:
        column = table.table[condition.axis]
        hit = pc.fill_null(pc.is_in(column, value_set=_pa_strings(condition.values)), False)
        term = pc.invert(hit) if condition.negate else hit
        mask = term if mask is None else pc.and_(mask, term)
    kept = table.table.filter(mask)
    if kept.num_rows == 0 and table.table.num_rows:
        raise SpecError(no_match_message(table, conditions))
    return SliceTable(kept, table.axes, table.has_answers, table.score_source)


def no_match_message(table: SliceTable, conditions: Sequence[Condition]) -> str:
    """`--where` matched nothing: name the axes' known values, so the typo is visible."""
    import pyarrow.compute as pc

    known = []
    for axis in dict.fromkeys(c.axis for c in conditions):
        values = sorted(str(v) for v in pc.unique(table.table[axis]).to_pylist() if v)
        shown = ", ".join(values[:20]) + (f", … ({len(values)} values)" if len(values) > 20 else "")
        known.append(f"{axis}: {shown or 'no values'}")
    return "--where matches no item (known values: " + "; ".join(known) + ")"


def _pa_strings(values: Sequence[str]) -> pa.Array:
    import pyarrow as pa

    return pa.array(list(values), type=pa.string())


# -- the cube ----------------------------------------------------------------------------------
def cube(
    table: SliceTable,
    axes: Sequence[str],
    min_n: int = DEFAULT_MIN_N,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[Cell]:
    """Every cell of every grouping of `axes` (the full cube, overall cell first)."""
    if len(axes) > MAX_AXES:
        raise SpecError(f"--by: at most {MAX_AXES} axes at once (got {len(axes)})")
    _check_groupable(table, axes)
    if len(set(axes)) != len(axes):
        raise SpecError("--by: an axis is named twice")
    stats, by_image, by_value = _group(table, list(axes))
    spread = _cell_spread(stats, by_image, by_value)
    return _cells(stats, list(axes), spread, min_n)


def _group(
    table: SliceTable, axes: list[str]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """Per-cell aggregates and resampling units: (cell, score sum, size, count) per image, and
    per score value when some score is not 0/1 (else None)."""
    import duckdb

    connection = duckdb.connect()
    connection.register("rows", table.table)
    quoted = [_quote(a) for a in axes]
    grouping = f"GROUPING({', '.join(quoted)})" if axes else "0"
    cube_clause = f"CUBE ({', '.join(quoted)})" if axes else "()"
    keys = "".join(f", {q}" for q in quoted)
    # A rolled-up axis is NULL with its GROUPING bit set; a NULL value with the bit clear is an
    # item lacking that field, which forms no cell.
    present = " AND ".join(f"(GROUPING({q}) = 1 OR {q} IS NOT NULL)" for q in quoted) or "TRUE"
    scored = f"{_SCORE} IS NOT NULL"
    connection.execute(f"""
        CREATE TEMP TABLE cells AS
        SELECT row_number() OVER (ORDER BY gid{keys}) - 1 AS cell, * FROM (
          SELECT {grouping} AS gid{keys},
            count({_SCORE}) AS n, avg({_SCORE}) AS score,
            -- as results.cell: open items (no chance level) count as 0 beside closed ones
            CASE WHEN count({_RANDOM}) FILTER (WHERE {scored}) > 0
              THEN avg(coalesce({_RANDOM}, 0)) FILTER (WHERE {scored}) END AS random,
            avg({_VLMEVAL}) FILTER (WHERE {scored}) AS vlmeval,
            count(*) AS total,
            count(*) FILTER (WHERE {_STATUS} <> 'error') AS answered,
            count(*) FILTER (WHERE {_STATUS} = 'error') AS errors,
            {", ".join(f"count(*) FILTER (WHERE {_STATUS} = '{r}') AS {r}" for r in _RATES)}
            {_coverage_columns(table)}
          FROM rows GROUP BY {cube_clause} HAVING {present})""")
    stats = _columns(connection.sql("SELECT * FROM cells ORDER BY cell").to_arrow_table())
    join = " AND ".join(["c.gid = u.gid", *(f"c.{q} IS NOT DISTINCT FROM u.{q}" for q in quoted)])
    cluster_group = f"GROUP BY {_CLUSTER}, {cube_clause}" if axes else f"GROUP BY {_CLUSTER}"
    units = connection.sql(f"""
        WITH u AS (
          SELECT {grouping} AS gid{keys}, sum({_SCORE}) AS s, count(*) AS m
          FROM rows WHERE {scored} {cluster_group})
        SELECT c.cell, u.s, u.m, count(*) AS k FROM u JOIN cells c ON {join}
        GROUP BY c.cell, u.s, u.m ORDER BY c.cell, u.s, u.m""").to_arrow_table()
    by_value = None
    fractional = f"SELECT count(*) FROM rows WHERE {_SCORE} NOT IN (0, 1)"
    if connection.execute(fractional).fetchall()[0][0]:
        value_group = f"GROUP BY {_SCORE}, {cube_clause}" if axes else f"GROUP BY {_SCORE}"
        by_value = _columns(
            connection.sql(f"""
            WITH u AS (
              SELECT {grouping} AS gid{keys}, {_SCORE} AS s, count(*) AS k
              FROM rows WHERE {scored} {value_group})
            SELECT c.cell, u.s, 1.0 AS m, u.k FROM u JOIN cells c ON {join}""").to_arrow_table()
        )
    connection.close()
    return stats, _columns(units), by_value


def _coverage_columns(table: SliceTable) -> str:
    """Per-cell counts of a judged source's scope and of its items with a verdict."""
    if _SCOPE not in table.table.column_names:
        return ""
    return (f", count(*) FILTER (WHERE {_SCOPE}) AS scope_n"
            f", count({_SCORE}) FILTER (WHERE {_SCOPE}) AS verdicts_n")  # fmt: skip


def _columns(table: pa.Table) -> dict[str, np.ndarray]:
    """Numpy columns: numbers with NaN for nulls, text as objects with None for nulls."""
    import pyarrow as pa

    from medlens.runs.arrow import arrow_numbers

    out = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            out[name] = np.array(column.to_pylist(), dtype=object)
        else:
            out[name] = arrow_numbers(column)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cell_spread(
    stats: Mapping[str, np.ndarray],
    by_image: Mapping[str, np.ndarray],
    by_value: Mapping[str, np.ndarray] | None,
) -> Spread:
    """n, mean, images and standard errors per cell (``bootstrap.mean_cis``'s method)."""
    from medlens.stats.intervals import spread
    from medlens.stats.units import Units

    def units(columns: Mapping[str, np.ndarray]) -> Units:
        return Units(
            columns["cell"].astype(np.intp),
            columns["s"].astype(float),
            columns["m"].astype(float),
            columns["k"].astype(np.int64),
        )

    return spread(
        units(by_image), None if by_value is None else units(by_value), len(stats["cell"])
    )


def _cells(
    stats: Mapping[str, np.ndarray], axes: list[str], spread: Spread, min_n: int
) -> list[Cell]:
    """Python records for the cells; one loop over cells (not rows)."""
    from medlens.stats.intervals import chance_p

    lo, hi = spread.bounds(CONFIDENCE)
    images = spread.images.astype(np.int64).tolist()
    effective = spread.effective_images.tolist()
    p_below = chance_p(spread, stats["random"].astype(float), "below").tolist()
    columns = {name: values.tolist() for name, values in stats.items()}
    cells = []
    for i in range(len(columns["cell"])):
        n, answered, total = columns["n"][i], columns["answered"][i], columns["total"][i]
        key = tuple((a, columns[a][i]) for a in axes if columns[a][i] is not None)
        rates = {r: columns[r][i] / answered if answered else 0.0 for r in _RATES}
        cells.append(
            Cell(
                key=key,
                records=total,
                n=n,
                score=_number(columns["score"][i]),
                ci=(float(lo[i]), float(hi[i])) if n else None,
                random=_number(columns["random"][i]),
                vlmeval_score=_number(columns["vlmeval"][i]),
                unparsed=rates["unparsed"],
                refused=rates["refused"],
                empty=rates["empty"],
                error=columns["errors"][i] / total if total else 0.0,
                small=is_small(n, effective[i], min_n),
                images=images[i],
                effective_images=effective[i],
                spread=spread.row(i),
                p_below_chance=p_below[i],
                coverage=(
                    (int(columns["verdicts_n"][i]), int(columns["scope_n"][i]))
                    if "scope_n" in columns
                    else None
                ),
            )
        )
    return sorted(cells, key=lambda c: (len(c.key), c.key))


def _number(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


# -- views over cells --------------------------------------------------------------------------
def worst_cells(cells: Sequence[Cell], k: int, min_n: int = DEFAULT_MIN_N) -> list[Cell]:
    """The k lowest-scoring rankable cells (larger cells first among ties); never overall.

    Rankable: not small (n ≥ min_n and enough images) and not repeating a coarser cell (a task
    with one department holds the same items as the task). Each listed cell carries
    ``below_chance``: True only when its one-sided test against chance survives Holm's
    adjustment over every rankable cell, so picking the lowest of many does not by itself make
    a cell look worse than guessing; and its `ci` is the simultaneous interval over the same
    cells (Bonferroni, 1 − 0.05/m), so an interval wholly below chance implies the flag (the
    cell's own interval stays in ``ci_unadjusted``).
    """
    from dataclasses import replace

    n_by_key = {c.key: c.n for c in cells}

    def repeats_parent(cell: Cell) -> bool:
        parents = (cell.key[:i] + cell.key[i + 1 :] for i in range(len(cell.key)))
        return any(n_by_key.get(parent) == cell.n for parent in parents)

    ranked = [
        c
        for c in cells
        if c.key and c.score is not None
        and not is_small(c.n, c.images if c.effective_images is None else c.effective_images, min_n)
        and not repeats_parent(c)
    ]  # fmt: skip
    listed = sorted(ranked, key=lambda c: (c.score, -c.n, c.key))[:k]
    if not listed:
        return []
    from medlens.stats.multiplicity import adjust

    adjusted = adjust([c.p_below_chance for c in ranked], "holm")
    below = {c.key: bool(q < WORST_ALPHA) for c, q in zip(ranked, adjusted.tolist(), strict=True)}
    level = 1 - WORST_ALPHA / len(ranked)  # simultaneous: below it ⇒ Holm's flag
    out = []
    for c in listed:
        cell = replace(c, below_chance=below[c.key] and c.random is not None)
        if c.spread is not None and c.ci is not None:
            lo, hi = c.spread.bounds(level)
            cell = replace(cell, ci=(float(lo[0]), float(hi[0])), ci_unadjusted=c.ci,
                           adjusted_over=len(ranked))  # fmt: skip
        out.append(cell)
    return out


def cells_at(cells: Sequence[Cell], axes: Sequence[str]) -> list[Cell]:
    """The cells that fix exactly `axes`."""
    wanted = set(axes)
    return [c for c in cells if {a for a, _ in c.key} == wanted]


def cross_table(
    cells: Sequence[Cell], row_axis: str, column_axis: str
) -> tuple[list[str], list[str], dict[tuple[str, str], Cell]]:
    """Row values, column values and the (row, column) → cell map of a two-way table."""
    grid: dict[tuple[str, str], Cell] = {}
    for cell in cells_at(cells, [row_axis, column_axis]):
        key = dict(cell.key)
        grid[(key[row_axis], key[column_axis])] = cell
    rows = sorted({r for r, _ in grid})
    columns = sorted({c for _, c in grid})
    return rows, columns, grid
