"""``medlens audit``: contamination audit by n-gram overlap between benchmark items and a corpus.

Each item's question plus options is split into lower-case word tokens and its n-grams (8 by
default, as in the PaLM / Med-PaLM contamination analyses) are hashed to 64 bits. The corpus
(files or folders, any size) is streamed once, line by line, carrying the last n − 1 tokens over
line breaks; its n-grams are hashed the same way and looked up in the sorted array of the
benchmark's n-gram hashes, so memory grows with the benchmark, never with the corpus. An item
is flagged when at least ``threshold`` of its n-grams occur in the corpus (PaLM: 70%). Items
with fewer than n tokens cannot be audited and are counted apart.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import InputError, MedlensError, SpecError
from medlens.core.items import Benchmark, Item
from medlens.core.limits import MAX_NGRAM

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_N = 8
DEFAULT_THRESHOLD = 0.7
_TOKEN = re.compile(r"\w+")
_BATCH_TOKENS = 1 << 16
_CHUNK_CHARS = 1 << 20
_MULTIPLIER = 0x100000001B3  # FNV-64 prime: a rolling polynomial over token hashes


@dataclass(frozen=True)
class ItemOverlap:
    """How much of one item's text the corpus contains."""

    id: str
    source: str
    n_grams: int
    matched: int
    flagged: bool

    @property
    def overlap(self) -> float:
        return self.matched / self.n_grams if self.n_grams else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "n_grams": self.n_grams,
            "matched": self.matched,
            "overlap": round(self.overlap, 4),
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class AuditReport:
    """The audit of one benchmark against one corpus."""

    spec: str
    n: int
    threshold: float
    corpus_files: int
    corpus_tokens: int
    items: tuple[ItemOverlap, ...]
    too_short: int
    """Items with fewer than n tokens: not audited."""

    def flagged(self) -> list[ItemOverlap]:
        return [item for item in self.items if item.flagged]

    def by_source(self) -> dict[str, dict[str, Any]]:
        """n, flagged and flagged rate per ``source`` value."""
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for item in self.items:
            totals[item.source][0] += 1
            totals[item.source][1] += item.flagged
        return {
            source: {"n": n, "flagged": f, "rate": f / n if n else 0.0}
            for source, (n, f) in sorted(totals.items())
        }

    def to_json(self) -> dict[str, Any]:
        flagged = self.flagged()
        audited = len(self.items)
        return {
            "spec": self.spec,
            "n_gram": self.n,
            "threshold": self.threshold,
            "corpus": {"files": self.corpus_files, "tokens": self.corpus_tokens},
            "audited": audited,
            "too_short": self.too_short,
            "flagged": len(flagged),
            "rate": len(flagged) / audited if audited else 0.0,
            "by_source": self.by_source(),
            "items": [item.to_json() for item in self.items if item.matched],
        }


def tokens(text: str) -> list[str]:
    """Lower-case word tokens after Unicode normalisation (NFKC)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def item_text(item: Item) -> str:
    """What is audited: the question followed by the option texts."""
    return " ".join([item.question, *item.options.values()])


class _TokenHasher:
    """64-bit token hashes, memoised (bounded) because corpora repeat their words endlessly."""

    def __init__(self, limit: int = 200_000) -> None:
        self._memo: dict[str, int] = {}
        self._limit = limit

    def __call__(self, words: Sequence[str]) -> npt.NDArray[np.uint64]:
        import numpy as np

        memo = self._memo
        if len(memo) > self._limit:
            memo.clear()
        out = np.empty(len(words), dtype=np.uint64)
        for index, word in enumerate(words):
            value = memo.get(word)
            if value is None:
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                value = memo[word] = int.from_bytes(digest, "little")
            out[index] = value
        return out


def ngram_hashes(token_hashes: npt.NDArray[np.uint64], n: int) -> npt.NDArray[np.uint64]:
    """Hash of every window of n token hashes (polynomial, wrapping at 2^64)."""
    import numpy as np

    count = len(token_hashes) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    combined = np.zeros(count, dtype=np.uint64)
    multiplier = np.uint64(_MULTIPLIER)
    with np.errstate(over="ignore"):
        for offset in range(n):
            combined = combined * multiplier + token_hashes[offset : offset + count]
    return combined


def corpus_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The files named, and every file under the folders named (sorted, hidden ones skipped)."""
    for path in paths:
        if path.is_dir():
            found = False
            for child in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
                if child.is_file() and not hidden:
                    found = True
                    yield child
            if not found:  # an audit of nothing would report "no contamination"
                raise InputError(path, None, "corpus folder holds no files")
        elif path.is_file():
            yield path
        else:
            raise InputError(path, None, "corpus path does not exist")


def audit(
    benchmark: Benchmark,
    corpus: Sequence[Path],
    *,
    n: int = DEFAULT_N,
    threshold: float = DEFAULT_THRESHOLD,
    on_tokens: Callable[[int], None] | None = None,
) -> AuditReport:
    """Overlap of every item's n-grams with the corpus; ``on_tokens(k)`` reports corpus progress."""
    import numpy as np

    if not 1 <= n <= MAX_NGRAM:
        raise SpecError(f"--n {n}: at most {MAX_NGRAM} word tokens (and at least 1)")
    hasher = _TokenHasher()
    ids, sources, spans, chunks, too_short = _benchmark_ngrams(benchmark, hasher, n)
    if not ids:  # stop before streaming a corpus that could match nothing
        raise MedlensError(
            f"{benchmark.spec}: no item has {n} word tokens (all {too_short:,} are shorter), "
            "so nothing can be audited; use a smaller --n"
        )
    every = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.uint64)
    unique, position = np.unique(every, return_inverse=True)
    seen = np.zeros(len(unique), dtype=bool)
    files, corpus_tokens = _scan_corpus(corpus, unique, seen, hasher, n, on_tokens)
    hits = seen[position]
    overlaps = []
    for item_id, source, (lo, hi) in zip(ids, sources, spans, strict=True):
        matched = int(hits[lo:hi].sum())
        flagged = matched / (hi - lo) >= threshold
        overlaps.append(ItemOverlap(item_id, source, hi - lo, matched, flagged))
    return AuditReport(
        benchmark.spec, n, threshold, files, corpus_tokens, tuple(overlaps), too_short
    )


def _benchmark_ngrams(
    benchmark: Benchmark, hasher: _TokenHasher, n: int
) -> tuple[list[str], list[str], list[tuple[int, int]], list[npt.NDArray[np.uint64]], int]:
    """Per audited item: id, source, span in the concatenated hashes, hashes; and the skipped."""
    ids: list[str] = []
    sources: list[str] = []
    spans: list[tuple[int, int]] = []
    chunks: list[npt.NDArray[np.uint64]] = []
    too_short = start = 0
    for item in benchmark.items():
        grams = ngram_hashes(hasher(tokens(item_text(item))), n)
        if len(grams) == 0:
            too_short += 1
            continue
        ids.append(item.id)
        sources.append(item.meta.get("source") or benchmark.name)
        spans.append((start, start + len(grams)))
        chunks.append(grams)
        start += len(grams)
    return ids, sources, spans, chunks, too_short


def _scan_corpus(
    corpus: Sequence[Path],
    unique: npt.NDArray[np.uint64],
    seen: npt.NDArray[np.bool_],
    hasher: _TokenHasher,
    n: int,
    on_tokens: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """Mark in ``seen`` the benchmark n-grams found in the corpus; returns (files, tokens)."""
    files = total = 0
    for path in corpus_files(corpus):
        files += 1
        for batch, fresh in _token_batches(path, n):
            total += fresh
            _mark(ngram_hashes(hasher(batch), n), unique, seen)
            if on_tokens is not None:
                on_tokens(fresh)
    return files, total


def _mark(
    grams: npt.NDArray[np.uint64], unique: npt.NDArray[np.uint64], seen: npt.NDArray[np.bool_]
) -> None:
    import numpy as np

    if len(unique) == 0 or len(grams) == 0:
        return
    index = np.searchsorted(unique, grams)
    index[index == len(unique)] = 0
    seen[index[unique[index] == grams]] = True


def _token_batches(path: Path, n: int) -> Iterator[tuple[list[str], int]]:
    """``(tokens, fresh)`` batches of one file, read in fixed-size chunks (one-line files too).

    Each batch starts with the previous batch's last n − 1 tokens so no n-gram is lost at a
    boundary; ``fresh`` counts the tokens not seen before.
    """
    batch: list[str] = []
    carried = 0
    rest = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            while chunk := handle.read(_CHUNK_CHARS):
                text = rest + chunk
                cut = max(text.rfind(" "), text.rfind("\n"))
                cut = len(text) if cut < 0 else cut  # one giant "word": take it whole
                batch.extend(tokens(text[:cut]))
                rest = text[cut:]
                if len(batch) >= _BATCH_TOKENS:
                    yield batch, len(batch) - carried
                    batch = batch[-(n - 1) :] if n > 1 else []
                    carried = len(batch)
    except OSError as exc:
        raise InputError(path, None, f"cannot read corpus file ({exc})") from None
    batch.extend(tokens(rest))
    if len(batch) > carried:
        yield batch, len(batch) - carried
