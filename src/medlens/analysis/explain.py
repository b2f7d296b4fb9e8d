"""``medlens explain RUN --against MODE|RUN2``: why two readings of the same outputs score
differently, item by item.

The run's records are read under their own mode (the recorded verdicts) and under MODE (each
stored output read and scored again: ``scoring.item_scores.read_and_score``), or paired with the
records of RUN2, a run of the same benchmark (content hash) that read the same items another
way. Items whose verdicts differ are grouped by the pair of rules that decided them (the
run's method, the other reading's method: ``leading_word`` vs ``medevalkit:both_or_neither``),
and the score gap is attributed to the groups: a group's contribution is Σ(score − other) / n
over its items, so the contributions sum to the gap exactly, and its net item count to
n × gap. Under chain-of-thought only the final answer is read again, as the run read it.
Against a peer mode, ``departures`` names what medlens's reimplementation still does not
reproduce of the peer's own number (the exact cause, or nothing when it reproduces it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.layout import is_run, run_file
from medlens.runs.view import RunView

EXAMPLES = 3


@dataclass(frozen=True)
class Verdict:
    score: float
    method: str
    answer: str | None


@dataclass
class Group:
    """The items where the two readings' rules were this pair and their verdicts differ."""

    rule: str
    against_rule: str
    ids: list[str] = field(default_factory=list)
    net: float = 0.0
    """Σ (this run's score − the other reading's score) over the group's items."""
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, n: int) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "against_rule": self.against_rule,
            "n": len(self.ids),
            "net_items": self.net,
            "contribution": self.net / n if n else 0.0,
            "examples": self.examples,
        }


def explain_run(run_dir: Path, against: str) -> dict[str, Any]:
    """The explanation as one JSON-ready dict (see the module docstring)."""
    store = RunView(run_dir)
    items = {item.id: item for item in store.items()}
    records = store.records()
    spec = store.run["spec"]
    mode = str(spec.get("extract", "medlens"))
    other, label = _other_reading(run_dir, store, against, list(items.values()))
    mine: dict[str, Verdict] = {}
    theirs: dict[str, Verdict] = {}
    for item_id, record in records.items():
        item = items.get(item_id)
        if item is None or record.get("error") is not None or record.get("score") is None:
            continue
        found = other(item, record)
        if found is None:
            continue
        extraction = record.get("extraction") or {}
        mine[item_id] = Verdict(
            float(record["score"]), str(extraction.get("method")), extraction.get("answer")
        )
        theirs[item_id] = found
    result = _attribution(store.path.name, mode, label, mine, theirs, records)
    result["departures"] = peer_departures(against)
    return result


def peer_departures(against: str) -> list[str]:
    """What a peer mode still does not reproduce of the peer's own number (its module's
    ``DEPARTURES``); empty for medlens's and VLMEvalKit's readings and for another run."""
    from medlens.extract.peers import is_peer_mode, peer_module

    return list(peer_module(against).DEPARTURES) if is_peer_mode(against) else []


Reader = Callable[[Item, Record], Verdict | None]


def _other_reading(
    run_dir: Path, store: RunView, against: str, items: list[Item]
) -> tuple[Reader, str]:
    from medlens.extract.extraction import EXTRACT_MODES

    if against in EXTRACT_MODES:
        return _mode_reader(store, against, items), against
    other_dir = Path(against)
    if not is_run(other_dir):
        raise SpecError(
            f"--against {against!r}: neither a reading mode ({', '.join(EXTRACT_MODES)}) "
            "nor a run directory"
        )
    return _run_reader(store, RunView(other_dir), other_dir), str(other_dir)


def _mode_reader(store: RunView, mode: str, items: list[Item]) -> Reader:
    from medlens.extract.peers import check_supported, is_peer_mode
    from medlens.scoring.item_scores import read_and_score

    if is_peer_mode(mode):
        check_supported(mode, items, "--against")
    final_only = _final_answer_reader(store.run["spec"])
    if mode == "lmms-eval":
        return _document_order_reader(store, items, final_only)

    def read(item: Item, record: Record) -> Verdict | None:
        output = final_only(record.get("output"))
        found, value = read_and_score(item, output, mode, record.get("finish_reason"))
        return None if value is None else Verdict(float(value), found.method, found.answer)

    return read


def _document_order_reader(
    store: RunView, items: list[Item], final_only: Callable[[str | None], str | None]
) -> Reader:
    """lmms-eval's readings of every answered item at once, its random fallbacks drawn from
    one stream in document order as lmms-eval draws them (``extract.peers.lmms_eval``)."""
    from medlens.extract.peers.lmms_eval import read_in_document_order

    records = store.records()
    answered = [
        (item, final_only(records[item.id].get("output")) or "")
        for item in items
        if item.id in records and records[item.id].get("error") is None
    ]
    readings = dict(
        zip([item.id for item, _ in answered], read_in_document_order(answered), strict=True)
    )

    def read(item: Item, record: Record) -> Verdict | None:
        reading = readings.get(item.id)
        if reading is None or reading.score is None:
            return None
        found = reading.extraction("lmms-eval", record.get("output"))
        return Verdict(float(reading.score), found.method, found.answer)

    return read


def _final_answer_reader(spec: dict[str, Any]) -> Callable[[str | None], str | None]:
    from medlens.execution.strategies import final_answer_text, recorded_strategy

    if not recorded_strategy(spec).cot:
        return lambda text: text
    return lambda text: None if text is None else final_answer_text(text)


def _run_reader(store: RunView, other: RunView, other_dir: Path) -> Reader:
    mine, theirs = store.run["spec"]["benchmark"], other.run["spec"]["benchmark"]
    if mine.get("content_hash") != theirs.get("content_hash"):
        raise InputError(
            run_file(other_dir),
            "field 'spec.benchmark.content_hash'",
            f"{str(theirs.get('content_hash'))[:12]} ({theirs.get('spec')}) is not the "
            f"benchmark of {store.path} ({str(mine.get('content_hash'))[:12]}, {mine.get('spec')}): "
            "explain pairs the same items",
        )
    records = other.records()

    def read(item: Item, record: Record) -> Verdict | None:
        paired = records.get(item.id)
        if paired is None or paired.get("error") is not None or paired.get("score") is None:
            return None
        extraction = paired.get("extraction") or {}
        method = str(extraction.get("method"))
        return Verdict(float(paired["score"]), method, extraction.get("answer"))

    return read


def _attribution(
    run: str,
    mode: str,
    label: str,
    mine: dict[str, Verdict],
    theirs: dict[str, Verdict],
    records: dict[str, Record],
) -> dict[str, Any]:
    n = len(mine)
    groups: dict[tuple[str, str], Group] = {}
    for item_id in sorted(mine, key=_natural):
        a, b = mine[item_id], theirs[item_id]
        if a.score == b.score:
            continue
        group = groups.setdefault((a.method, b.method), Group(a.method, b.method))
        group.ids.append(item_id)
        group.net += a.score - b.score
        if len(group.examples) < EXAMPLES:
            group.examples.append({
                "id": item_id, "output": records[item_id].get("output"),
                "answer": a.answer, "score": a.score,
                "against_answer": b.answer, "against_score": b.score,
            })  # fmt: skip
    ordered = sorted(groups.values(), key=lambda g: (-abs(g.net), g.rule, g.against_rule))
    score = sum(v.score for v in mine.values()) / n if n else None
    other = sum(v.score for v in theirs.values()) / n if n else None
    return {
        "run": run,
        "reading": mode,
        "against": label,
        "n": n,
        "score": score,
        "against_score": other,
        "gap": (score - other) if score is not None and other is not None else None,
        "differing": sum(len(g.ids) for g in ordered),
        "groups": [group.to_json(n) for group in ordered],
    }


def _natural(item_id: str) -> tuple[int, int | str]:
    return (0, int(item_id)) if item_id.isdigit() else (1, item_id)
