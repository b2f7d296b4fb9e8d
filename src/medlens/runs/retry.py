"""What rerunning a run does for its errors, in one hint line for `run`'s summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from medlens.runs.store import PERMANENT_ERRORS


def retry_hint(records: Iterable[Mapping[str, Any]]) -> str:
    """What a rerun does for these errors: transient ones are retried; permanent ones (an
    unreadable image, bad input) are skipped on resume until the file is fixed and
    --retry-errors asks again, so the hint names the first bad file instead."""
    errors = [r["error"] for r in records if r.get("error")]
    permanent = [e for e in errors if e["type"] in PERMANENT_ERRORS]
    transient = len(errors) - len(permanent)
    retried = f"rerun to retry the {transient} transient failure(s)" if transient else ""
    if not permanent:
        return retried
    fix = f"(e.g. {permanent[0]['message']}): fix the file(s), then rerun with --retry-errors"
    if not transient:
        return f"all {len(permanent)} errors are permanent {fix}"
    return f"{retried}; {len(permanent)} are permanent {fix}"
