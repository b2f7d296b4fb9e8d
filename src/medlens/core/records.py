"""What a run writes per item: one record (a line of ``records.jsonl``).

The schema: docs/architecture/records.md."""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]
