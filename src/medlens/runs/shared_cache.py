"""Runs that hold one set of response-cache entries: the same requests to the same answerer,
answered from the cache on at least one side, so the second run repeats the first instead of
measuring anything (``compare`` and ``board`` warn; ``run --no-cache`` asks again)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def cache_sharing_notes(paths: Sequence[Path]) -> list[str]:
    """:func:`shared_cache_notes` of the runs, read only when one of them holds a cached
    answer (records are compact JSON, so ``"cached":true`` is in the bytes)."""
    from medlens.runs.view import RunView

    views = [RunView(path) for path in paths]
    if not any(view.records_mention(b'"cached":true') for view in views):
        return []
    return shared_cache_notes([(view.name, view.records().values()) for view in views])


def _entry(record: Mapping[str, Any]) -> str | None:
    """The cache entry a record's answer belongs to (records older than cache keys: their
    request fingerprint, which was the key then)."""
    key = record.get("cache_key") or record.get("fingerprint")
    return str(key) if key and record.get("error") is None else None


def shared_cache_notes(runs: Sequence[tuple[str, Iterable[Mapping[str, Any]]]]) -> list[str]:
    """One line per two runs holding answers from one set of response-cache entries (the same
    request to the same answerer, answered from the cache on at least one side): the second
    run repeats the first instead of measuring anything."""
    records = [(name, list(rows)) for name, rows in runs]
    cached_keys = {_entry(r) for _, rows in records for r in rows if r.get("cached")} - {None}
    if not cached_keys:
        return []
    holders: dict[str, list[tuple[int, bool]]] = {}
    for index, (_, rows) in enumerate(records):
        for record in rows:
            key = _entry(record)
            if key is not None and key in cached_keys:
                holders.setdefault(key, []).append((index, bool(record.get("cached"))))
    pairs: Counter[tuple[int, int]] = Counter()
    for held in holders.values():
        for a in range(len(held)):
            for b in range(a + 1, len(held)):
                (i, cached_i), (j, cached_j) = held[a], held[b]
                if i != j and (cached_i or cached_j):
                    pairs[(min(i, j), max(i, j))] += 1
    return [
        f"{records[i][0]} and {records[j][0]} share {n} answers from one set of response-cache "
        "entries (same requests to the same server or weights, answered from the cache): they "
        "are one evaluation, not two; rerun one with --no-cache to ask the model again"
        for (i, j), n in sorted(pairs.items())
    ]
