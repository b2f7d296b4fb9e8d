"""The result of reading one model output: Extraction(answer, status, method)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "unparsed", "refused", "empty"]
Mode = Literal["medlens", "vlmeval", "lmms-eval", "evalscope", "medevalkit", "multimedeval"]
EXTRACT_MODES: tuple[str, ...] = (
    "medlens", "vlmeval", "lmms-eval", "evalscope", "medevalkit", "multimedeval",
)  # fmt: skip
"""``--extract`` values: medlens's reading, VLMEvalKit's, and the peers' (``extract.peers``)."""
STATUSES: tuple[str, ...] = ("ok", "unparsed", "refused", "empty")


@dataclass(frozen=True)
class Extraction:
    answer: str | None
    """Letter, sorted letters (``"AC"``), ``yes``/``no``/``maybe``, text, or boxes as JSON text
    (``detect``); None when nothing was read."""
    status: Status
    """``ok`` (an answer was read), ``unparsed`` (none, or an ambiguous one), ``refused`` (the
    model declined) or ``empty`` (no output)."""
    method: str
    """Name of the rule that fired (or why none did), e.g. ``boxed``, ``answer_phrase:ambiguous``."""

    def to_json(self) -> dict[str, Any]:
        return {"answer": self.answer, "status": self.status, "method": self.method}
