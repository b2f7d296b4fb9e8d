"""Reading one judge reply, failing closed: only a reply that parses under its protocol gives a
verdict; every other reply is one of ``protocol.FAILURES`` and never turns into a score.

Checked before any parsing, so that no digit inside them can become a score (EvalScope #1575
scored ``[ERROR] … 500`` strings as full credit): a transport error, a reply that *is* an error
string, an empty reply, a reply cut at the token limit (``finish_reason: length``, whose
verdict may be missing or not the one the judge was heading for).
"""

from __future__ import annotations

from medlens.core.items import Item
from medlens.judges.mmbu import parse_result_line
from medlens.judges.protocol import JudgeProtocol, ParsedReply, parse_reply
from medlens.models.base import Response

ERROR_PREFIXES = ("[error]", "error:")
"""Replies that are a failing client's or proxy's error text, not a judge's words."""


def read_reply(protocol: JudgeProtocol, item: Item, response: Response) -> ParsedReply:
    """The verdict of `response` under `protocol`, or the failure that kept it from one."""
    if response.error is not None:
        return ParsedReply("error", problem=response.error.message, failure="error")
    text = response.text or ""
    if not text.strip():
        return ParsedReply("unparseable", problem="empty reply", failure="empty")
    if text.lstrip().lower().startswith(ERROR_PREFIXES):
        return ParsedReply("error", problem=f"an error text: {text.strip()[:200]}", failure="error")
    if response.finish_reason == "length":
        return ParsedReply(
            "unparseable", problem="reply cut at the token limit", failure="truncated"
        )
    if protocol.kind == "mmbu":
        return parse_result_line(text)
    return parse_reply(protocol, item, text)
