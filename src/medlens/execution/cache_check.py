"""The live check of a server's cached answers: is the server still the model that wrote them?

A new checkpoint served under the old name at the old URL hits every cache entry of the old one.
Its identity may say so — the ``/v1/models`` entry (vLLM lists the folder it serves as ``root``),
the served model, the system fingerprint — and when it does not, only its answers can: the first
:data:`LIVE_CHECKS` cache hits of a process are asked live and compared with the stored answers
(text and identity). Until they have all agreed, no hit is answered from the cache ("when in
doubt, ask live"); one difference and every request of the process is asked live.

How many: two different models answering letters agree by chance on about 1 item in 4 or 5, but
a sibling checkpoint may agree on 80% of items or more. If each checked item agrees independently
with probability ``a``, a different model passes ``K`` checks with probability ``a**K``; for it to
pass at most 1% of the time at ``a = 0.8``: ``K >= ln(0.01) / ln(0.8) = 20.6``, so K = 21
(``a = 0.9``: 11% pass; ``a = 0.25``: 2e-13). ``bench/cache_check.py`` simulates the detection
rates; ``--cache-check N`` sets K (0: trust the cache without asking).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from typing import Any, Literal

from medlens.models.base import Response

LIVE_CHECKS = math.ceil(math.log(0.01) / math.log(0.8))
"""21: a sibling agreeing on 80% of items passes every check at most 1% of the time."""

Verdict = Literal["agreed", "mismatch", "not checked"]
UNREACHABLE = frozenset({"connection", "timeout"})
"""Error types of a live check that mean the server could not be asked (the cache answers)."""


def answer_differences(cached: Response, live: Response) -> list[str]:
    """What differs between a stored answer and the live one to the same deterministic
    request: the text, and the served model / system fingerprint when both name one."""
    found = []
    for field_name, words in (("served_model", "served model"),
                               ("system_fingerprint", "system fingerprint")):  # fmt: skip
        old, new = getattr(cached, field_name), getattr(live, field_name)
        if old is not None and new is not None and old != new:
            found.append(f"{words} {old} → {new}")
    if cached.text != live.text:
        found.append("the answer to a deterministic request differs")
    return found


def entry_differences(
    stored: Mapping[str, Any] | None, live: Mapping[str, Any] | None
) -> list[str]:
    """How the server's ``/v1/models`` entry now differs from the one a cache entry was
    written under (nothing when either is unknown)."""
    if not stored or not live:
        return []
    return [
        f"/v1/models {key} {stored.get(key)} → {live.get(key)}"
        for key in sorted(set(stored) & set(live))
        if key in stored and key in live and stored[key] != live[key]
    ]


class LiveCheck:
    """The state of one process's check: live asks begun, agreements, the verdict."""

    def __init__(self, needed: int) -> None:
        self.needed = needed
        self.started = 0
        self.agreed = 0
        self.verdict: Verdict | None = None if needed else "not checked"
        self.reason = "" if needed else "--cache-check 0: the cache was trusted unasked"
        self.differences: list[str] = []
        self._decided: asyncio.Event | None = None

    @property
    def decided(self) -> asyncio.Event:
        if self._decided is None:
            self._decided = asyncio.Event()
            if self.verdict is not None:
                self._decided.set()
        return self._decided

    def take_turn(self) -> bool:
        """True when this hit is to be asked live as one of the checks."""
        if self.verdict is None and self.started < self.needed:
            self.started += 1
            return True
        return False

    def agree(self) -> None:
        self.agreed += 1
        if self.agreed >= self.needed and self.verdict is None:
            self._settle("agreed")

    def disagree(self, differences: list[str]) -> None:
        if self.verdict == "mismatch":
            return
        self.differences = differences
        self._settle("mismatch")

    def unreachable(self, reason: str) -> None:
        """The server did not answer a check: the cache answers, unchecked."""
        if self.verdict is None:
            self.reason = reason
            self._settle("not checked")

    def give_back(self) -> None:
        """A check that failed for another reason (a server error): another hit takes its turn."""
        self.started -= 1

    def _settle(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.decided.set()

    def entry(self, identity: str, served_from_cache: int) -> dict[str, Any]:
        """The ``run.json["cache_checks"]`` entry of this process."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        result = self.verdict or "agreed"
        found: dict[str, Any] = {
            "checked": stamp, "identity": identity, "result": result, "needed": self.needed,
            "asked_live": self.started, "agreed": self.agreed,
            "answered_from_cache": served_from_cache,
        }  # fmt: skip
        if self.differences:
            found["differences"] = self.differences
        if self.reason:
            found["reason"] = self.reason
        return found


def cache_check_line(entry: Mapping[str, Any]) -> str | None:
    """The one line a run prints about its cache check (None when all agreed)."""
    where = str(entry.get("identity") or "the server").removeprefix("endpoint=")
    if entry.get("result") == "mismatch":
        return (
            f"warning: {where} no longer answers as its cached answers did "
            f"({'; '.join(entry['differences'])}): its cache entries are not used for this run"
        )
    if entry.get("result") == "not checked":
        return (
            f"warning: the response cache was not checked against {where} "
            f"({entry.get('reason')}): {entry.get('answered_from_cache', 0)} answers came from "
            "the cache unverified (rerun when the server answers, or with --no-cache)"
        )
    return None
