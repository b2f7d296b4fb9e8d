"""Agreement between medlens's reading and a careful reader's verdicts on the real-output
corpus (``scoring.reading_corpus``): each line replayed through ``read_and_score``, then per file
n, agreement, Cohen's κ (sklearn), medlens's score and the reader's, and the disagreements.

Agreement, per line: for closed kinds (choice, multi_choice, yes_no, classify) medlens's answer
(None unless its status is ``ok``) equals ``reader.answer`` (None = None agrees); for open lines
medlens's credit (score 1/0) equals ``reader.credited``. κ is computed over the same labels (the
answers with None as a label; open files on credited). Imports ``core`` and ``scoring``; only
``Item`` and ``read_and_score`` from medlens, so that ``bench/reading_corpus.py --before REF``
can replay an older medlens with this file."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from medlens.core.items import Item, ItemKind
from medlens.scoring.item_scores import read_and_score
from medlens.scoring.reading_corpus import CorpusLine

NONE_LABEL = "<none>"
GROUPS = ("open/yes-no VQA", "MCQ", "PubMedQA")
TOLERANCE = 0.005
"""A file's agreement may fall this much (half a point) below its committed figure."""


@dataclass(frozen=True)
class Verdict:
    """medlens's reading of one corpus line, and whether the reader agrees."""

    file: str
    line: int
    answer: str | None
    status: str
    method: str
    score: float | None
    agrees: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def item_of(line: CorpusLine) -> Item:
    """The item a corpus line describes (PubMedQA's yes/no lines are yes/no/maybe)."""
    meta = {"answer_set": "yes/no/maybe"} if _three_way(line) else {}
    return Item(
        id=line.id,
        question=line.question,
        kind=cast(ItemKind, line.kind),
        options=dict(line.options),
        answer=line.gold,
        meta=meta,
    )


def _three_way(line: CorpusLine) -> bool:
    return line.kind == "yes_no" and (line.dataset == "pubmedqa" or line.gold == "maybe")


def replay(line: CorpusLine) -> Verdict:
    """medlens's reading of `line` and the reader's agreement with it."""
    item = item_of(line)
    try:
        found, value = read_and_score(item, line.output, "medlens", line.finish_reason)
    except TypeError:  # a medlens before finish_reason was read (bench --before)
        found, value = read_and_score(item, line.output, "medlens")
    answer = found.answer if found.status == "ok" else None
    verdict = Verdict(line.file, line.line, answer, found.status, found.method, value, False)
    return Verdict(**{**asdict(verdict), "agrees": label(line, verdict) == reader_label(line)})


def label(line: CorpusLine, verdict: Verdict) -> str:
    """medlens's label for `line`: its credit (open) or its normalised answer."""
    if line.kind == "open":
        return str(verdict.score == 1.0)
    return _normalised(line, verdict.answer)


def reader_label(line: CorpusLine) -> str:
    if line.kind == "open":
        return str(line.reader_credited)
    return _normalised(line, line.reader_answer)


def _normalised(line: CorpusLine, answer: str | None) -> str:
    if answer is None or not answer.strip():
        return NONE_LABEL
    said = answer.strip()
    if line.kind in ("choice", "multi_choice"):
        return "".join(sorted(set(said.upper())))
    if line.kind == "classify":
        return line.options.get(said, said).strip().lower()  # a letter names its option
    return said.lower()


@dataclass(frozen=True)
class Figures:
    """Agreement figures of a set of lines (one file, a group, or the pool)."""

    n: int
    agreement: float
    kappa: float | None
    medlens_score: float
    reader_score: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def figures(lines: Sequence[CorpusLine], verdicts: Sequence[Verdict]) -> Figures:
    """n, agreement, Cohen's κ, and the mean score by medlens and by the reader."""
    n = len(lines)
    agreement = sum(v.agrees for v in verdicts) / n if n else math.nan
    scores = [v.score or 0.0 for v in verdicts]
    reader = [_reader_score(line) for line in lines]
    return Figures(
        n,
        agreement,
        kappa(lines, verdicts),
        sum(scores) / n if n else math.nan,
        sum(reader) / n if n else math.nan,
    )


def _reader_score(line: CorpusLine) -> float:
    return 1.0 if line.reader_credited else 0.0


def kappa(lines: Sequence[CorpusLine], verdicts: Sequence[Verdict]) -> float | None:
    """Cohen's κ between the reader's labels and medlens's; None when undefined (one label)."""
    from sklearn.metrics import cohen_kappa_score

    ours = [label(line, v) for line, v in zip(lines, verdicts, strict=True)]
    theirs = [reader_label(line) for line in lines]
    if len(set(ours) | set(theirs)) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(theirs, ours))
    return None if math.isnan(value) else value


def group_of(line: CorpusLine) -> str:
    """The issue's groups: PubMedQA (either format), MCQ (lettered and label items), and
    open/yes-no VQA."""
    if line.dataset == "pubmedqa":
        return "PubMedQA"
    return "MCQ" if line.kind in ("choice", "multi_choice", "classify") else "open/yes-no VQA"


def grouped(
    pairs: Iterable[tuple[CorpusLine, Verdict]],
) -> dict[str, tuple[list[CorpusLine], list[Verdict]]]:
    """Lines and verdicts per group, in :data:`GROUPS` order, empty groups left out."""
    found: dict[str, tuple[list[CorpusLine], list[Verdict]]] = {}
    for line, verdict in pairs:
        lines, verdicts = found.setdefault(group_of(line), ([], []))
        lines.append(line)
        verdicts.append(verdict)
    return {name: found[name] for name in GROUPS if name in found}


def rule_of(verdict: Verdict) -> str:
    """The rule that decided, without the vocabulary entry or option detail it names."""
    return verdict.method.split(":vocab:")[0]


def figure_drops(current: dict[str, Figures], committed: dict[str, Any]) -> list[tuple[str, str]]:
    """(file, why) for every file whose figure fails the committed one: agreement more than
    :data:`TOLERANCE` below it, a file without a committed figure, another n, or a committed
    figure for a file that is gone."""
    problems = []
    files = committed.get("files", {})
    for name, found in sorted(current.items()):
        was = files.get(name)
        if was is None:
            problems.append((name, "has no committed figure"))
        elif was.get("n") != found.n:
            problems.append((name, f"has {found.n} lines, its committed figure {was.get('n')}"))
        elif found.agreement < float(was["agreement"]) - TOLERANCE:
            problems.append(
                (name, f"agreement {found.agreement:.4f}, committed {float(was['agreement']):.4f}")
            )
    problems += [(name, "is committed but gone") for name in sorted(set(files) - set(current))]
    return problems
