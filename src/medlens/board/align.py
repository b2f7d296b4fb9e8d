"""N runs on the same items: one score matrix (runs × items) with the items' axes and images.

Each run's scores come from its derived score file (``analysis.artifacts``, written when the run
finished) while it is fresh; otherwise from two columns of its records (id and score, through
the run view: pyarrow where that reads as the store does). Items (axes, images, chance levels)
come from one run per benchmark content hash, through :func:`medlens.analysis.results.score_table`,
the same join every report uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.board.judged import JudgedCover, judged_scores
from medlens.core.errors import MedlensError, RunMismatchError
from medlens.runs.arrow import arrow_numbers, arrow_strings
from medlens.runs.columns import FLOAT, STR
from medlens.runs.view import RunView

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

ALIGN_MODES = ("same", "intersect")


@dataclass(frozen=True)
class BoardRun:
    """One run directory on the board."""

    path: Path
    run: str
    """Folder name: how --pairs, --meta and --base refer to the run."""
    name: str
    """The model spec the run recorded, with its probe if any (display name)."""
    spec: dict[str, Any]
    label: str = ""
    """What tables name the run by: its study label (with probe/strategy) where it has one,
    else its run name (never the spec: two runs of one spec are two rows)."""

    @property
    def benchmark(self) -> dict[str, Any]:
        return dict(self.spec.get("benchmark") or {})


@dataclass(frozen=True)
class Aligned:
    """Scores of every run on the items scored in all of them (after --where)."""

    runs: list[BoardRun]
    ids: np.ndarray
    scores: np.ndarray
    """(runs, items) main scores; no NaN."""
    cluster: np.ndarray
    """Integer image codes 0…G−1 (an item without ``image_id`` is its own image)."""
    random: np.ndarray
    """Chance level per item (NaN for open kinds)."""
    meta: dict[str, np.ndarray]
    dropped: dict[str, int]
    """Per run: scored items left out because another run did not score them."""
    codes: dict[str, tuple[list[str], np.ndarray]] = field(default_factory=dict, compare=False)
    """Per axis: its values and each item's code (filled by ``board.axes.axis_values``)."""
    source: str = "rules"
    """The score source (``--score``) of `scores`."""
    judged: JudgedCover | None = None
    """Under a judged source: each run's scope and verdicts over every item of the benchmark."""
    scored: dict[str, int] = field(default_factory=dict)
    """Per run: items its rules scored (errored and ungraded items not)."""

    @property
    def n_images(self) -> int:
        return int(self.cluster.max(initial=-1)) + 1


def open_runs(
    paths: Sequence[Path], labels: Mapping[str, str] | None = None, label_runs: bool = True
) -> list[BoardRun]:
    """Read each run.json; refuse a run being written and two runs with the same folder name.

    `labels` gives runs (by path) the model name they show (a study's model labels); with
    `label_runs` the label also replaces the folder name as the run's name (--pairs, --meta)."""
    runs: list[BoardRun] = []
    seen: dict[str, Path] = {}
    for path in paths:
        label = (labels or {}).get(str(path))
        view = RunView(path)
        _refuse_if_being_written(view)
        spec = view.spec
        path = view.path
        run = (label if label_runs else None) or path.name
        if run in seen:
            raise MedlensError(
                f"{path}: two runs are named {run!r} ({seen[run]} too); "
                "the board names runs by folder, so rename one"
            )
        seen[run] = path
        name = label or str(spec.get("model", path.name))
        if spec.get("probe"):  # a probed run is not the model's own score
            name += f" (probe {spec['probe']})"
        if spec.get("strategy"):  # nor is a few-shot or self-consistency run its zero-shot one
            name += f" ({spec['strategy']['name']})"
        runs.append(BoardRun(path, run, name, spec, label=name if label else run))
    return runs


def _refuse_if_being_written(view: RunView) -> None:
    """A run another process is writing gives moving numbers: refuse it (issue 10's run lock)."""
    holder = view.being_written()
    if holder is not None:
        raise MedlensError(f"{view.path}: the run is being written ({holder}); board it when done")


def check_same_benchmark(runs: Sequence[BoardRun], mode: str) -> None:
    """Same split always; same content hash unless --align intersect."""
    first = runs[0]
    for other in runs[1:]:
        a, b = first.benchmark, other.benchmark
        if a.get("split") != b.get("split"):
            raise RunMismatchError(
                f"{other.path}: split {b.get('split')!r} differs from {first.path}'s "
                f"{a.get('split')!r}; a board compares runs on the same split"
            )
        if mode == "same" and a.get("content_hash") != b.get("content_hash"):
            from medlens.core.fingerprint import older_hash_note

            raise RunMismatchError(
                f"{other.path} ran on {b.get('spec')} ({b.get('n_items')} items, content "
                f"{str(b.get('content_hash'))[:12]}) but {first.path} on {a.get('spec')} "
                f"({a.get('n_items')} items, content {str(a.get('content_hash'))[:12]}); a board "
                "needs the same benchmark (--align intersect compares on the common items)"
                f"{older_hash_note(a, b)}"
            )


def run_scores(run: BoardRun) -> tuple[Any, np.ndarray]:
    """Ids (a pyarrow string array) and main scores of the items the run scored (errored and
    ungraded items left out: their records hold no score)."""
    import pyarrow.compute as pc

    from medlens.analysis.artifacts import fresh_score_file

    derived = fresh_score_file(run.path)
    if derived is not None:  # what `run` wrote when it finished: no record is parsed
        from medlens.analysis.score_file import read_columns

        table = read_columns(derived[0], ["id", "score"])
        score = table["score"].combine_chunks()
        scored = pc.invert(pc.is_nan(score))  # unscored (errored, no gold) items hold NaN
        values = arrow_numbers(score)
        return table["id"].combine_chunks().filter(scored), values[~np.isnan(values)]
    columns = RunView(run.path).record_columns({"score": FLOAT, "error.type": STR})
    score = columns.floats["score"]
    kept = score.present & np.array([e is None for e in columns.strings["error.type"]], bool)
    ids = np.asarray(columns.keys, dtype=object)[kept]
    return arrow_strings(ids.tolist()), score.values[kept]


def align_runs(
    runs: Sequence[BoardRun],
    mode: str = "same",
    where: str = "",
    source: ScoreSource | None = None,
) -> Aligned:
    """The items every run scored, in the first run's item order, filtered by `where`.

    Under a judged `source` (``judge:NAME``, ``combined:NAME``) each run's scores come from its
    judge (``board.judged``); items of a judged scope lacking a verdict in some run are left
    out for all (counted in each run's coverage), while ``--align same`` still compares the
    runs' rule-scored items, so runs on different items are refused as before. Rule scores and
    the items' axes come from the runs' fresh score files where they have them.
    """
    from medlens.core.errors import SpecError

    if mode not in ALIGN_MODES:
        raise SpecError(f"--align: unknown mode {mode!r} (use same or intersect)")
    check_same_benchmark(runs, mode)
    judging = source is not None and source.judged
    known = None if judging else _derived_items(runs)
    items: Any = known.ids if known is not None else _items_by_id(runs)
    scored = [run_scores(run) for run in runs]
    positions, counts = _positions(list(items), scored)
    everywhere = np.all([p >= 0 for p in positions], axis=0) if positions else np.zeros(0, bool)
    if mode == "same":
        _refuse_different_items(runs, counts, int(everywhere.sum()))
    rule_counts = {run.run: k for run, k in zip(runs, counts, strict=True)}
    judged = None
    if judging:
        assert source is not None
        table = _item_table(items, list(items))
        scored, judged = judged_scores(runs, items, table.meta, scored, source)
        positions, counts = _positions(list(items), scored)
        everywhere = np.all([p >= 0 for p in positions], axis=0)
        table = _subset_table(table, everywhere)
    common = [i for i, keep in zip(items, everywhere.tolist(), strict=True) if keep]
    if not judging:
        table = _rule_item_table(runs, known, items, common)
    return _aligned(runs, table, common, where, positions, scored, everywhere, counts, source,
                    judged, rule_counts)  # fmt: skip


def _rule_item_table(runs: Sequence[BoardRun], known: Any, items: Any, common: list[str]) -> Any:
    """The common items' axes: the first run's score table when it holds every one of them."""
    if known is not None and len(common) == len(known.ids):
        return known
    return _item_table(items if known is None else _items_by_id(runs), common)


def _aligned(
    runs: Sequence[BoardRun], table: Any, common: list[str], where: str, positions: Any,
    scored: Any, everywhere: np.ndarray, counts: Sequence[int], source: ScoreSource | None,
    judged: Any, rule_counts: dict[str, int],
) -> Aligned:  # fmt: skip
    """The aligned score matrix of the common items that match `where`."""
    mask = _where_mask(table.meta, len(common), where)
    ids = np.asarray(common, dtype=object)[mask]
    if ids.size == 0:
        raise MedlensError(
            "board: no item is scored by every run"
            + (f" and matches --where {where!r}" if where.strip() else "")
            + " (no gold answers, errors, or runs on disjoint items)"
        )
    chosen = np.flatnonzero(everywhere)[mask]
    matrix = np.array([s[p[chosen]] for p, (_, s) in zip(positions, scored, strict=True)])
    cluster = np.unique(table.cluster[mask].astype(str), return_inverse=True)[1].ravel()
    return Aligned(
        runs=list(runs),
        ids=ids,
        scores=matrix.reshape(len(runs), ids.size),
        cluster=cluster.astype(np.intp),
        random=table.random[mask],
        meta={k: v[mask] for k, v in table.meta.items()},
        dropped={run.run: k - len(common) for run, k in zip(runs, counts, strict=True)},
        source=source.label if source is not None else "rules",
        judged=judged,
        scored=rule_counts,
    )


def _derived_items(runs: Sequence[BoardRun]) -> Any:
    """The first run's score table (axes, images, chance levels of the items it recorded, in
    item order) when every run is on one benchmark and that run's score file is fresh; None
    otherwise (items.jsonl is read then)."""
    from medlens.analysis.artifacts import fresh_score_file
    from medlens.analysis.score_file import read_columns, score_table_of

    if len({str(run.benchmark.get("content_hash")) for run in runs}) != 1:
        return None
    found = fresh_score_file(runs[0].path)
    return None if found is None else score_table_of(read_columns(found[0]))


def _items_by_id(runs: Sequence[BoardRun]) -> dict[str, Any]:
    """Items of the first run of each content hash; ids shared across hashes must agree."""
    items: dict[str, Any] = {}
    loaded: dict[str, Path] = {}
    for run in runs:
        digest = str(run.benchmark.get("content_hash"))
        if digest in loaded:
            continue
        own = {item.id: item for item in RunView(run.path, run={"spec": run.spec}).items()}
        if items:
            for item_id in own.keys() & items.keys():
                if _question(own[item_id]) != _question(items[item_id]):
                    raise RunMismatchError(
                        f"{run.path}: item {item_id!r} asks a different question than in "
                        f"{next(iter(loaded.values()))}; these runs are not on common items"
                    )
            items = {i: items[i] for i in items if i in own}
        else:
            items = own
        loaded[digest] = run.path
    return items


def _question(item: Any) -> tuple[Any, ...]:
    return item.question, tuple(item.options.items()), item.answer, item.kind


def _positions(
    item_ids: list[str], scored: list[tuple[Any, np.ndarray]]
) -> tuple[list[np.ndarray], list[int]]:
    """Per run: each item's row in the run's scores (−1: not scored), and how many it scored."""
    import pyarrow as pa
    import pyarrow.compute as pc

    reference = pa.array(item_ids, type=pa.string())
    positions = []
    for ids, _ in scored:
        found = pc.index_in(reference, value_set=ids)
        positions.append(found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.intp))
    return positions, [len(ids) for ids, _ in scored]


def _refuse_different_items(runs: Sequence[BoardRun], counts: Sequence[int], n_common: int) -> None:
    for run, own in zip(runs, counts, strict=True):
        if own != n_common:
            raise RunMismatchError(
                f"{run.path}: scores {own} items but only {n_common} are scored by every run "
                f"(errors, --limit or no gold); use --align intersect to compare on those {n_common}"
            )


def _item_table(items: dict[str, Any], ids: Sequence[str]) -> Any:
    """Axes, images and chance levels of `ids` (results.score_table's join, without scores)."""
    from medlens.analysis.score_table import score_table

    return score_table([items[i] for i in ids], {i: {} for i in ids})


def _subset_table(table: Any, keep: np.ndarray) -> Any:
    """The rows `keep` of an item table (``score_table``'s arrays)."""
    from dataclasses import replace

    return replace(
        table,
        ids=[i for i, k in zip(table.ids, keep.tolist(), strict=True) if k],
        score=table.score[keep], vlmeval=table.vlmeval[keep], random=table.random[keep],
        status=table.status[keep], cluster=table.cluster[keep],
        meta={k: v[keep] for k, v in table.meta.items()},
        secondary={k: v[keep] for k, v in table.secondary.items()},
        secondary_random={k: v[keep] for k, v in table.secondary_random.items()},
    )  # fmt: skip


def _where_mask(meta: dict[str, np.ndarray], size: int, where: str) -> np.ndarray:
    """Items matching every --where condition (slices.parse_where's syntax and rules)."""
    from medlens.core.where import check_values, parse_where

    mask = np.ones(size, dtype=bool)
    conditions = parse_where(where, sorted(meta)) if where.strip() else ()
    check_values(conditions, {c.axis: set(meta[c.axis].astype(str).tolist()) for c in conditions})
    for condition in conditions:
        hit = np.isin(meta[condition.axis].astype(str), list(condition.values))
        hit &= meta[condition.axis] != ""
        mask &= ~hit if condition.negate else hit
    return mask
