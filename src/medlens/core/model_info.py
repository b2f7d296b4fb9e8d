"""What a user states about a model that no spec can carry: its training cutoff
(``run --model-info cutoff=YYYY-MM``), recorded in run.json beside the spec, read by the
contamination rows of the protocol card (``checks.contamination``)."""

from __future__ import annotations

import re

from medlens.core.notation import bad, settings

_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")
MODEL_INFO_KEYS = {"cutoff": "training_cutoff"}


def parse_model_info(text: str) -> dict[str, str]:
    """``cutoff=YYYY-MM`` → ``{"training_cutoff": "YYYY-MM"}``; SpecError names the bad part."""
    out: dict[str, str] = {}
    for key, value in settings(text, "--model-info", "cutoff=YYYY-MM", MODEL_INFO_KEYS):
        if not _MONTH.match(value):
            raise bad("--model-info", text, f"cutoff {value!r} is not a month YYYY-MM")
        out[MODEL_INFO_KEYS[key]] = value
    if not out:
        raise bad("--model-info", text, "expected cutoff=YYYY-MM")
    return out
