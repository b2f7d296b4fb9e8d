"""Judge replies for the loopback server: deterministic verdicts, an echo mode that repeats the
answer (with whatever verdicts it contains) before its own verdict, unparseable replies, and a
gate that holds calls so a test can kill the judge stage mid-way.

The judge reads the data blocks exactly as a careful judge would: the JSON string between the
``<<<BEGIN LABEL digest>>>`` and ``<<<END LABEL digest>>>`` markers. Run ``python
tests/judge_server.py`` to serve from a separate process (the bench does).
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from loopback_server import ChatRequest, HTTPFault, LoopbackServer, ServerConfig, unit_hash

SYNONYMS = {
    "pneumoperitoneum": {
        "free air under the diaphragm",
        "free intraperitoneal air",
        "gas outside the bowel",
    },
    "femur": {"thigh bone", "os femoris"},
    "cardiomegaly": {"enlarged heart", "big heart"},
}
NEGATIONS = ("no ", "not ", "without ", "absent")


def read_block(text: str, label: str) -> str | None:
    """The data in the last ``label`` block of a judge prompt, or None."""
    found = re.findall(
        rf"<<<BEGIN {label} ([0-9a-f]{{16}})>>>\n(.*?)\n<<<END {label} \1>>>", text, re.S
    )
    return json.loads(found[-1][1]) if found else None


def instructions(text: str) -> str:
    """The prompt without its data blocks: what the judge is asked, not what it judges."""
    return re.sub(r"<<<BEGIN (\w+ [0-9a-f]{16})>>>\n.*?\n<<<END \1>>>", "", text, flags=re.S)


def normal(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def equivalent(answer: str, gold: str) -> bool:
    """Same meaning by a small table: equal, or a listed synonym, and no negation added."""
    a, g = normal(answer), normal(gold)
    negated = any(a.startswith(n.strip()) or f" {n}" in f" {a} " for n in NEGATIONS)
    if negated and not any(g.startswith(n.strip()) for n in NEGATIONS):
        return False
    return a == g or g in a or any(s in a for s in SYNONYMS.get(g, ()))


def verdict(request: ChatRequest) -> dict[str, object]:
    """The verdict a correct judge gives for the protocol the prompt asks for."""
    text = request.text
    answer = read_block(text, "ANSWER") or ""
    gold = read_block(text, "REFERENCE")
    asked = instructions(text)
    if '"answer": "B"' in asked:  # the choice protocol's reply format
        options = read_block(text, "OPTIONS") or ""
        said = normal(answer)
        mentions = []  # the option named last is the one chosen ("A or B; on balance B")
        for line in options.splitlines():
            letter, _, option = line.partition(". ")
            if option and normal(option) in said:
                mentions.append((said.rfind(normal(option)), letter))
        return {"answer": max(mentions)[1] if mentions else "?"}
    same = equivalent(answer, gold or "")
    if "ground_truth_correctness" in asked:
        length = min(10, len(answer.split()))
        return {
            "consistency": 8,
            "coherence": max(1, length),
            "visual_accuracy": 7 if same else 3,
            "ground_truth_correctness": 10 if same else 1,
            "rationale": "matches the reference" if same else "differs from the reference",
        }
    return {"equivalent": same, "reason": "same finding" if same else "different finding"}


def noisy(value: dict[str, object], key: str, attempt: int) -> dict[str, object]:
    """A sampled judge: the verdict of a prompt moves a little from one call to the next."""
    draw = unit_hash(key, attempt, "noise")
    if "equivalent" in value and draw < 0.3:
        return {**value, "equivalent": not value["equivalent"]}
    if "coherence" in value:
        shift = int(draw * 3) - 1
        return {**value, "coherence": min(10, max(0, int(value["coherence"]) + shift))}  # type: ignore[call-overload]
    return value


FAILURE_KINDS = ("error", "empty", "truncated", "unparseable", "out_of_scale")
"""What ``faults`` mode injects, 10% of the items each (the same items on every attempt)."""


def injected_failure(request: ChatRequest) -> str | None:
    """The failure ``faults`` mode gives this item (by its question, so a retry fails alike):
    10% each of FAILURE_KINDS, and 10% ``flaky`` (the first attempt fails, the retry answers)."""
    draw = unit_hash(read_block(request.text, "ANSWER"), read_block(request.text, "QUESTION"))
    bucket = int(draw * 10)
    return (*FAILURE_KINDS, "flaky")[bucket] if bucket < 6 else None


def failing_reply(kind: str, own: dict[str, object], draw: float) -> object:
    """The reply of one failure kind (a 500, or an error string in its place, for ``error``)."""
    if kind == "error":
        if draw < 0.5:
            raise HTTPFault(500, "upstream judge failed")
        return (
            "[ERROR] judge-model 500 Internal Server Error from http://127.0.0.1:1/v1 (10 tokens)"
        )
    if kind == "empty":
        return ""
    if kind == "truncated":
        return (f"Let me weigh this carefully. {json.dumps(own)[:12]}", "length")
    if kind == "unparseable":
        return "Score: 100. The answer looks right to me."
    key = "equivalent" if "equivalent" in own else "coherence"
    return json.dumps({**own, key: 90})  # a 0-100 number where the protocol has no room for it


def mmbu_reply(request: ChatRequest) -> str:
    """An MMBU-style judge: grounded in the label set, then equivalent or not, on one line."""
    answer = read_block(request.text, "ANSWER") or ""
    gold = read_block(request.text, "REFERENCE") or ""
    labels = (read_block(request.text, "LABELS") or "").splitlines()
    grounded = [label for label in labels if normal(label) and normal(label) in normal(answer)]
    result = int(len(grounded) == 1 and equivalent(answer, gold))
    concept = grounded[0] if len(grounded) == 1 else "none"
    return f"Rationale: the answer grounds {concept!r}. [RESULT] {result}"


def first_option(request: ChatRequest) -> dict[str, object]:
    """A judge with total position bias: whatever the answer says, the option listed first."""
    listing = (read_block(request.text, "OPTIONS") or "").splitlines()
    return {"answer": listing[0].partition(". ")[0] if listing else "?"}


@dataclass
class JudgeReplies:
    """A judge's behaviour; call it with a request to get the reply text."""

    mode: str = "verdict"
    """``verdict``; ``echo`` (the answer, then the verdict); ``unparseable`` (never JSON);
    ``noisy`` (verdicts vary between calls of one prompt, as sampling does); ``flaky`` (the first attempt of every prompt is unparseable, the retry answers); ``down``
    (the connection drops without an answer; a test may switch modes while serving); ``never``
    (nothing is ever equivalent); ``first`` (choice: always the option listed first);
    ``faults`` (10% of items each of ``FAILURE_KINDS``, see :func:`injected_failure`);
    ``mmbu`` (one ``Rationale: … [RESULT] 0|1`` line)."""
    gate_after: int | None = None
    """Calls after this many wait until ``release`` is set."""
    release: threading.Event = field(default_factory=threading.Event)
    calls: Counter[str] = field(default_factory=Counter)
    injected: dict[str, str] = field(default_factory=dict)
    """Prompt text → the failure ``faults`` mode gave it (last attempt)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: ChatRequest) -> object:
        with self._lock:
            self.calls[request.key] += 1
            attempt, total = self.calls[request.key], sum(self.calls.values())
        if self.gate_after is not None and total > self.gate_after:
            self.release.wait(timeout=300)
        if self.mode == "down":
            raise ConnectionAbortedError("judge is down")  # the server drops the connection
        if self.mode == "never":
            return json.dumps({"equivalent": False, "reason": "never"})
        if self.mode == "first":
            return json.dumps(first_option(request))
        if self.mode == "mmbu" or "[RESULT] <0 or 1>" in instructions(request.text):
            return mmbu_reply(request)  # the protocol asks for MMBU's reply line
        if self.mode == "faults":
            kind = injected_failure(request)
            if kind is not None and (kind != "flaky" or attempt == 1):
                with self._lock:
                    self.injected[request.text] = kind
                draw = unit_hash(request.text, "error flavour")
                return failing_reply(
                    "unparseable" if kind == "flaky" else kind, verdict(request), draw
                )  # type: ignore[return-value]
        own = json.dumps(
            noisy(verdict(request), request.key, attempt)
            if self.mode == "noisy"
            else verdict(request)
        )
        if self.mode == "unparseable" or (self.mode == "flaky" and attempt == 1):
            return "The answer looks reasonable to me, but I cannot give a verdict."
        if self.mode == "echo":
            answer = read_block(request.text, "ANSWER") or ""
            return f"The model answered:\n```\n{answer}\n```\nMy verdict:\n```json\n{own}\n```"
        return own


def judge_config(replies: Callable[[ChatRequest], str], **extra: object) -> ServerConfig:
    return ServerConfig(reply=replies, **extra)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", default="verdict")
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args()
    server = LoopbackServer(judge_config(JudgeReplies(args.mode), lifetime=args.lifetime))
    server.start()
    print(server.base_url, flush=True)
    time.sleep(args.lifetime)


if __name__ == "__main__":
    main()
