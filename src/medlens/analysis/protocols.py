"""How the published rows of each seed benchmark were produced — prompt, reading, judge — and
how a run departs from that, in one line.

Compared for every run beside a shipped table (``calibrate``, ``board --reference`` and the
paper layouts), after its item set was found comparable:

- **prompt**: the medlens style that sends what the published rows sent (GMAI-MMBench:
  VLMEvalKit's ``vlmeval``; MMBU: its official runner's ``mmbu``); Med-CMR publishes no prompt
  (not checked, and said so). A user's template (``file:NAME``) is never the published prompt.
- **reading**: the rules the published rows read answers with (GMAI-MMBench: VLMEvalKit's,
  ``vlmeval``); MMBU's closed answers were read by its own parser, which medlens does not
  replicate (so a run is always read otherwise, and the line says so); Med-CMR's MCQ reading is
  not published (not checked).
- **judge** (judged columns only: MMBU's open classification, Med-CMR's ``open_all``): the
  medlens protocol that follows the published judge (MMBU: ``mmbu``, its ``open_per_dataset_v3``;
  Med-CMR: ``rubric`` with weights 1/1/4/4) and the published judge model
  (Qwen2.5-32B-Instruct-AWQ; DeepSeek-V3.2-Exp), matched by name in the judge's spec or served
  model; scores by the rules where the paper's were a judge's are a difference.
- also a leakage probe, a prompting strategy other than zero-shot, the MCQ → open rewrite and
  answers entered by hand (``run --manual``): the published rows had none of them.

Sources: PROTOCOL_NOTES.md (VLMEvalKit ``image_mcq.py``; dcunhrya/MMBU-vlm-eval 3aab73e and
``docs/open_vqa_per_dataset_judge.md``; the Med-CMR paper, arXiv:2512.00818).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PublishedProtocol:
    """What produced a family's published rows (None: not published, so not checked)."""

    prompt: str | None
    extract: str | None
    reading_note: str = ""
    """Said when the published reading has no medlens replica (``extract`` is then None)."""
    judge: str | None = None
    judge_model: str | None = None
    weights: Mapping[str, float] = field(default_factory=dict)
    unchecked: tuple[str, ...] = ()


PUBLISHED: dict[str, PublishedProtocol] = {
    "gmai": PublishedProtocol(prompt="vlmeval", extract="vlmeval"),
    "mmbu": PublishedProtocol(
        prompt="mmbu",
        extract=None,
        reading_note="MMBU's own answer parser, which medlens does not replicate",
        judge="mmbu",
        judge_model="Qwen2.5-32B-Instruct-AWQ",
    ),
    "medcmr": PublishedProtocol(
        prompt=None,
        extract=None,
        judge="rubric",
        judge_model="DeepSeek-V3.2-Exp",
        weights={
            "consistency": 1.0,
            "coherence": 1.0,
            "visual_accuracy": 4.0,
            "ground_truth_correctness": 4.0,
        },
        unchecked=("prompt and MCQ reading (the paper publishes neither)",),
    ),
}
"""By layout name (``ReferenceTable.layout``)."""


def differences(
    layout: str | None,
    spec: Mapping[str, Any],
    judge: Mapping[str, Any] | None = None,
    judged: bool = False,
) -> list[str]:
    """How a run (its `spec`; `judge`: the judge.json of the judge that scored it, None for the
    rules) departs from the published protocol of `layout`; `judged`: the compared column was
    the paper's judge's."""
    published = PUBLISHED.get(layout or "")
    if published is None:
        return []
    found = _setup(spec)
    for key in ("prompt", "extract"):
        wanted = getattr(published, key)
        if wanted is not None and spec.get(key) != wanted:
            found.append(f"{key} {spec.get(key)!r} (published: {wanted!r})")
    if published.extract is None and published.reading_note:
        found.append(f"extract {spec.get('extract')!r} (published: {published.reading_note})")
    if judged and published.judge is not None:
        found += _judge(published, judge)
    return found


def unchecked(layout: str | None) -> tuple[str, ...]:
    published = PUBLISHED.get(layout or "")
    return published.unchecked if published else ()


def _setup(spec: Mapping[str, Any]) -> list[str]:
    found = []
    if spec.get("probe"):
        found.append(f"probe {spec['probe']!r} (published: none)")
    strategy = (spec.get("strategy") or {}).get("name")
    if strategy:
        found.append(f"strategy {strategy!r} (published: zero-shot)")
    if spec.get("rewrite"):
        found.append(f"rewrite {spec['rewrite']!r} (published: the items as released)")
    if spec.get("manual"):
        found.append(f"{spec['manual'].get('items')} answers entered by hand (published: none)")
    return found


def _judge(published: PublishedProtocol, judge: Mapping[str, Any] | None) -> list[str]:
    wanted = f"{published.judge!r} by {published.judge_model}"
    if judge is None:
        return [f"judge: none, scored by the rules (published: {wanted})"]
    protocol = judge.get("protocol") or {}
    found = []
    if protocol.get("name") != published.judge:
        found.append(f"judge protocol {protocol.get('name')!r} (published: {published.judge!r})")
    weights = protocol.get("weights") or {}
    if published.weights and {k: float(v) for k, v in weights.items()} != dict(published.weights):
        shown = "/".join(f"{published.weights[k]:g}" for k in published.weights)
        found.append(f"judge weights {weights} (published: {shown})")
    if not _names_model(judge, str(published.judge_model)):
        found.append(f"judge model {judge.get('judge')!r} (published: {published.judge_model})")
    return found


def _names_model(judge: Mapping[str, Any], model: str) -> bool:
    """The judge's spec or a served model names `model` (case, '/' prefixes ignored)."""
    wanted = model.lower()
    served = ((judge.get("judge_fingerprint") or {}).get("served_models") or {}).keys()
    names = [str(judge.get("judge", "")), *map(str, served)]
    return any(wanted in name.lower().replace("/", " ") for name in names)
