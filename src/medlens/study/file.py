"""Reading a study file: TOML in, a checked and parsed :class:`~medlens.study.entries.Study` out.

This is where a study's spec texts enter medlens, so they are parsed here, once (the parse-once
check lists this module beside ``api.py``). Every problem is one :class:`InputError` naming the
file, the line and the key (``val.toml, line 7, key benchmarks.gmai.limt: unknown key …``),
raised before anything is planned or started. Deeper checks that need the data (does the
benchmark load, does the backend accept its options) happen when the study is planned, and
name the entry's line too.
This module reads the sections into entries; ``file_values`` owns the file's text, its key lines
and the typed readers of its values.

The file's keys (docs/studies.md): top level ``name``, ``seed``, ``concurrency``, ``budget``;
``[models]`` label → spec or ``{spec, concurrency, price, training_cutoff, sample, adaptive}``
(sample: :mod:`medlens.study.sample_checks`; adaptive: :mod:`medlens.study.adaptive_checks`); ``[benchmarks]`` label → spec or ``{spec, limit, where,
sample, stratify, strategy, prompt, extract, probe, exemplars, exclude}``; ``[judges.LABEL]``
``{spec, protocol, scope, benchmarks, repeats, weights, images, with_question, reports,
concurrency, price}``; ``[[boards]]`` ``{benchmark, name, layout, judge,
pairs, meta, reference, by, where, allow_partial}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medlens.analysis.paper_columns import LAYOUT_NAMES
from medlens.analysis.score_source import parse_score_source
from medlens.core.errors import MedlensError
from medlens.core.model_info import parse_model_info
from medlens.core.specs import Spec, parse_spec
from medlens.execution.strategies import parse_strategy
from medlens.study.adaptive_checks import check_adaptive_models, parse_adaptive
from medlens.study.board_checks import check_board_axes, check_board_judges, check_self_judging
from medlens.study.entries import BenchmarkEntry, BoardEntry, JudgeEntry, ModelEntry, Study
from medlens.study.file_values import (
    StudyFile,
    bool_value,
    budget_value,
    comma_list,
    concurrency_value,
    int_value,
    is_number,
    optional_int,
    price_value,
    str_value,
)
from medlens.study.sample_checks import check_sampled_models
from medlens.study.tomlkeys import KeyPath

TOP_KEYS = ("name", "seed", "concurrency", "budget", "models", "benchmarks", "judges", "boards")
MODEL_KEYS = ("spec", "concurrency", "price", "training_cutoff", "sample", "adaptive")
BENCHMARK_KEYS = ("spec", "limit", "where", "sample", "stratify", "strategy", "prompt", "extract",
                  "probe", "exemplars", "exclude")  # fmt: skip
JUDGE_KEYS = ("spec", "protocol", "scope", "benchmarks", "repeats", "weights", "images",
              "with_question", "reports", "concurrency", "price")  # fmt: skip
BOARD_KEYS = ("benchmark", "name", "layout", "judge", "score", "pairs", "meta", "reference", "by",
              "where", "allow_partial")  # fmt: skip
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def load_study(path: Path | str) -> Study:
    """Read, check and parse the study file at `path` (see the module docstring)."""
    study = StudyFile(Path(path))
    values = study.values
    study.check_keys((), values, TOP_KEYS)
    name = _name(study, values)
    models = {
        label: _model(study, label, raw)
        for label, raw in _labelled(study, "models", values.get("models"), required=True)
    }
    benchmarks = {
        label: _benchmark(study, label, raw)
        for label, raw in _labelled(study, "benchmarks", values.get("benchmarks"), True)
    }
    judges = {
        label: _judge(study, label, raw, benchmarks)
        for label, raw in _labelled(study, "judges", values.get("judges"), required=False)
    }
    boards = _boards(study, values.get("boards", []), models, benchmarks)
    check_board_judges(study, boards, judges)
    check_board_axes(study, boards, benchmarks)
    check_self_judging(study, models, judges)
    check_sampled_models(study, models, benchmarks, boards)
    check_adaptive_models(study, models, benchmarks, boards)
    budget = values.get("budget")
    return Study(
        name=name, path=Path(path), sha256=study.sha256, models=models, benchmarks=benchmarks,
        judges=judges, boards=boards, seed=int_value(study, ("seed",), values.get("seed", 0), None),
        concurrency=concurrency_value(study, ("concurrency",), values.get("concurrency")),
        budget=None if budget is None else budget_value(study, budget), budget_line=study.line(("budget",)),
    )  # fmt: skip


def _name(study: StudyFile, values: Mapping[str, Any]) -> str:
    if "name" in values:
        return _label(study, ("name",), values["name"], "study name")
    stem = study.path.stem
    if not LABEL.fullmatch(stem) or "--" in stem:
        study.fail((), f'give the study a name = "..." (the file name {stem!r} is no folder name)')
    return stem


def _labelled(study: StudyFile, section: str, table: Any, required: bool) -> list[tuple[str, Any]]:
    """The (label, value) pairs of ``[models]``, ``[benchmarks]`` or ``[judges]``."""
    what = section[:-1]
    if table is None:
        if required:
            study.fail((), f"no [{section}] table: a study names at least one {what}")
        return []
    if not isinstance(table, dict):
        study.fail((section,), f"expected a table of label = {what}")
    if required and not table:
        study.fail((section,), f"the [{section}] table is empty")
    return [(_label(study, (section, label), label, "label"), raw) for label, raw in table.items()]


def _label(study: StudyFile, key: KeyPath, value: Any, what: str) -> str:
    if not isinstance(value, str) or not LABEL.fullmatch(value) or "--" in value:
        study.fail(
            key,
            f"{what} {value!r}: use letters, digits, '.', '_' and single '-' (up to 64; "
            "it names folders, and '--' joins model and benchmark in a run's folder name)",
        )
    return value


def _entry(
    study: StudyFile, key: KeyPath, raw: Any, known: tuple[str, ...]
) -> tuple[dict[str, Any], Spec]:
    """A label's value: a spec string, or a table with `spec` and the `known` keys."""
    table = {"spec": raw} if isinstance(raw, str) else raw
    if not isinstance(table, dict):
        study.fail(key, 'expected a spec string or a table with spec = "..."')
    study.check_keys(key, table, known)
    if "spec" not in table:
        study.fail(key, 'missing spec = "..."')
    spec = study.parsed((*key, "spec") if isinstance(raw, dict) else key, parse_spec,
                        str_value(study, (*key, "spec"), table["spec"]))  # fmt: skip
    return table, spec


def _model(study: StudyFile, label: str, raw: Any) -> ModelEntry:
    key = ("models", label)
    table, spec = _entry(study, key, raw, MODEL_KEYS)
    cutoff = table.get("training_cutoff")
    if cutoff is not None:  # checked as run --model-info checks it, located at its key
        study.parsed((*key, "training_cutoff"), parse_model_info,
                     f"cutoff={str_value(study, (*key, 'training_cutoff'), cutoff)}")  # fmt: skip
    return ModelEntry(
        label, spec, concurrency_value(study, (*key, "concurrency"), table.get("concurrency")),
        price_value(study, (*key, "price"), table.get("price")), study.line(key),
        None if cutoff is None else str(cutoff),
        optional_int(study, (*key, "sample"), table.get("sample"), 1),
        parse_adaptive(study, (*key, "adaptive"), table.get("adaptive")),
    )  # fmt: skip


def _benchmark(study: StudyFile, label: str, raw: Any) -> BenchmarkEntry:
    key = ("benchmarks", label)
    table, spec = _entry(study, key, raw, BENCHMARK_KEYS)

    def text(name: str) -> str | None:
        value = table.get(name)
        return None if value is None else str_value(study, (*key, name), value)

    strategy = study.parsed((*key, "strategy"), parse_strategy, text("strategy") or "zero-shot")
    exemplars = text("exemplars")
    return BenchmarkEntry(
        label, spec, limit=optional_int(study, (*key, "limit"), table.get("limit"), 1),
        where=text("where"), sample=optional_int(study, (*key, "sample"), table.get("sample"), 1),
        stratify=",".join(comma_list(study, (*key, "stratify"), table.get("stratify"))) or None,
        strategy=strategy, prompt=text("prompt") or "medlens", extract=text("extract") or "medlens",
        probe=text("probe"), exemplars=None if exemplars is None else study.parsed(
            (*key, "exemplars"), parse_spec, exemplars), exclude=text("exclude"),
        line=study.line(key),
    )  # fmt: skip


def _judge(
    study: StudyFile, label: str, raw: Any, benchmarks: Mapping[str, BenchmarkEntry]
) -> JudgeEntry:
    from medlens.judges.options import SCOPES
    from medlens.judges.protocols import parse_weights

    key = ("judges", label)
    if not isinstance(raw, dict):
        study.fail(key, "expected a table: [judges.LABEL] with spec and protocol")
    table, spec = _entry(study, key, raw, JUDGE_KEYS)
    if "protocol" not in table:
        study.fail(key, 'missing protocol = "equivalence|rubric|choice|file:PATH"')
    scope = table.get("scope")
    if scope is not None and scope not in SCOPES:
        study.fail((*key, "scope"), f"scope {scope!r}: expected {' or '.join(SCOPES)}")
    weights = table.get("weights", {})
    if isinstance(weights, str):
        weights = study.parsed((*key, "weights"), parse_weights, weights)
    elif not isinstance(weights, dict) or not all(is_number(v) for v in weights.values()):
        study.fail((*key, "weights"), 'expected a table of name = number (or "a=1,b=2")')
    flags = {flag: bool_value(study, (*key, flag), table.get(flag, False))
             for flag in ("images", "with_question", "reports")}  # fmt: skip
    return JudgeEntry(
        label, spec, str_value(study, (*key, "protocol"), table["protocol"]), scope,
        _judged_benchmarks(study, (*key, "benchmarks"), table.get("benchmarks"), benchmarks),
        int_value(study, (*key, "repeats"), table.get("repeats", 1), 1),
        {k: float(v) for k, v in weights.items()}, **flags,
        concurrency=concurrency_value(study, (*key, "concurrency"), table.get("concurrency")),
        price=price_value(study, (*key, "price"), table.get("price")), line=study.line(key),
        protocol_line=study.line((*key, "protocol")),
    )  # fmt: skip


def _judged_benchmarks(
    study: StudyFile, key: KeyPath, value: Any, benchmarks: Mapping[str, BenchmarkEntry]
) -> tuple[str, ...] | None:
    if value is None:
        return None
    labels = comma_list(study, key, value)
    for label in labels:
        if label not in benchmarks:
            study.fail(key, f"{label!r} is not a benchmark of this study "
                            f"(benchmarks: {', '.join(benchmarks)})")  # fmt: skip
    return labels


def _boards(
    study: StudyFile, value: Any, models: Mapping[str, ModelEntry],
    benchmarks: Mapping[str, BenchmarkEntry],
) -> tuple[BoardEntry, ...]:  # fmt: skip
    if not isinstance(value, list) or not all(isinstance(b, dict) for b in value):
        study.fail(("boards",), "expected [[boards]] tables")
    boards: list[BoardEntry] = []
    for index, table in enumerate(value):
        key: KeyPath = ("boards", index)
        study.check_keys(key, table, BOARD_KEYS)
        if "benchmark" not in table:
            study.fail(key, 'missing benchmark = "LABEL" (one of the study\'s benchmarks)')
        bench = str_value(study, (*key, "benchmark"), table["benchmark"])
        if bench not in benchmarks:
            study.fail((*key, "benchmark"), f"{bench!r} is not a benchmark of this study "
                                            f"(benchmarks: {', '.join(benchmarks)})")  # fmt: skip
        name = _label(study, (*key, "name"), table.get("name", bench), "board name")
        if any(b.name == name for b in boards):
            study.fail(key, f'a second board named {name!r}: give each board its own name = "..."')
        boards.append(_board(study, key, table, name, bench, models))
    return tuple(boards)


def _board(
    study: StudyFile, key: KeyPath, table: Mapping[str, Any], name: str, bench: str,
    models: Mapping[str, ModelEntry],
) -> BoardEntry:  # fmt: skip
    pairs = []
    for term in comma_list(study, (*key, "pairs"), table.get("pairs")):
        base, colon, tuned = (part.strip() for part in term.partition(":"))
        if not colon or base not in models or tuned not in models or base == tuned:
            study.fail((*key, "pairs"), f"{term!r}: expected BASE:TUNED, two different model "
                                        f"labels (models: {', '.join(models)})")  # fmt: skip
        pairs.append((base, tuned))
    meta = table.get("meta")

    def text(name: str) -> str | None:
        value = table.get(name)
        return None if value is None else str_value(study, (*key, name), value)

    layout = text("layout")
    if layout is not None and layout not in LAYOUT_NAMES:
        study.fail((*key, "layout"), f"unknown layout {layout!r} (use {', '.join(LAYOUT_NAMES)})")
    score = text("score")
    score_judge = None
    if score is not None:
        try:
            parsed = parse_score_source(score)
        except MedlensError as exc:
            study.fail((*key, "score"), str(exc).removeprefix("--score "))
        if parsed.kind == "judge" and layout is not None:
            study.fail((*key, "score"), f"a layout reads combined scores: use "
                       f'score = "combined:{parsed.judge}"')  # fmt: skip
        score, score_judge = parsed.label, parsed.judge
    return BoardEntry(
        name, bench, layout=layout, judge=text("judge"), score=score, score_judge=score_judge,
        pairs=tuple(pairs),
        meta=None if meta is None else Path(str_value(study, (*key, "meta"), meta)),
        reference=text("reference"), by=comma_list(study, (*key, "by"), table.get("by")),
        where=text("where") or "", line=study.line(key),
        allow_partial=None if "allow_partial" not in table
        else bool_value(study, (*key, "allow_partial"), table["allow_partial"]),
    )  # fmt: skip
