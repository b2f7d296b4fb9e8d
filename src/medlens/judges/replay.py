"""The ``replay:FILE`` judge: answers each judge call with a stored judge reply.

FILE is a judge folder (``runs/<run>/judges/<name>``) or its ``judgements.jsonl``. Replaying
the raw replies through today's parser reproduces a judged score offline, with no judge model.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from medlens.core.errors import SpecError
from medlens.core.specs import Spec, check_options
from medlens.models.base import ModelError, Request, Response
from medlens.runs.judgements import stored_replies
from medlens.runs.layout import JUDGEMENTS_FILE


class ReplayJudge:
    """Looks up the stored reply of (item id, repeat)."""

    deterministic = True
    worth_caching = False  # a dictionary lookup is cheaper than the response cache

    def __init__(self, spec: str, source: Path, replies: dict[tuple[str, int], str]) -> None:
        self.spec = spec
        self.source = source
        self.replies = replies

    async def generate(self, request: Request) -> Response:
        key = (request.item.id, int(request.params.get("repeat", 0)))
        text = self.replies.get(key)
        if text is None:
            message = f"no stored judge reply for item {key[0]!r} repeat {key[1]} in {self.source}"
            return Response(None, error=ModelError("input", message))
        return Response(text)

    async def aclose(self) -> None:
        return None


def make_replay_judge(spec: Spec) -> ReplayJudge:
    check_options(spec, set())
    if not spec.argument:
        raise SpecError(f"replay judge needs a judge folder or {JUDGEMENTS_FILE}: replay:PATH")
    source = Path(spec.argument)
    replies = stored_replies(source)
    digest = hashlib.sha256(
        json.dumps(sorted(replies.items()), ensure_ascii=False).encode("utf-8")
    ).hexdigest()
    return ReplayJudge(f"replay:{source}?sha256={digest[:16]}", source, replies)
