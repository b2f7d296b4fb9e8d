"""One line of a benchmark's integrity checklist (shared by the checks, protocol checks and readiness)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "warn", "info"]
SHOWN = 10
"""Examples a check line lists at most."""


@dataclass(frozen=True)
class CheckResult:
    """One line of the checklist."""

    name: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "details": list(self.details),
            "data": dict(self.data),
        }
