"""Images and questions a benchmark split shares with its loader's other splits (the leakage check)."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterator, Sequence

from medlens.checks.result import SHOWN, CheckResult
from medlens.core.errors import ItemError
from medlens.core.items import (
    Benchmark,
    Item,
)
from medlens.core.specs import Spec


class _ContentHashes:
    """Content hashes of a benchmark's images (each distinct image read once).

    A text-only item is identified by its normalised question and options instead, so the same
    check finds questions repeated across splits.
    """

    def __init__(self) -> None:
        self.by_hash: dict[bytes, str] = {}
        self._done: dict[tuple[str, str, int, str], bytes] = {}

    def digests(self, item: Item) -> Iterator[bytes]:
        if not item.images:
            words = " ".join([item.question, *item.options.values()]).casefold().split()
            yield hashlib.blake2b(" ".join(words).encode("utf-8"), digest_size=16).digest()
        for image in item.images:
            key = (image.source, image.path, image.offset, image.name)
            if key not in self._done:
                try:
                    data = image.read_bytes()
                except ItemError:
                    continue
                self._done[key] = hashlib.blake2b(data, digest_size=16).digest()
            yield self._done[key]

    def add(self, item: Item) -> None:
        for digest in self.digests(item):
            self.by_hash.setdefault(digest, item.id)


def _leakage_check(mine: _ContentHashes, other: Benchmark) -> CheckResult:
    theirs = _ContentHashes()
    leaked_items, shared_content = 0, set()
    examples: list[str] = []
    for item in other.items():
        shared = [d for d in theirs.digests(item) if d in mine.by_hash]
        if shared:
            leaked_items += 1
            shared_content.update(shared)
            if len(examples) < SHOWN:
                first = mine.by_hash[shared[0]]
                examples.append(f"{other.split} item {item.id} shares content with item {first}")
    name = f"leakage[{other.split}]"
    data = {"against": other.spec, "items": leaked_items, "shared": len(shared_content)}
    if leaked_items:
        summary = (
            f"{len(shared_content):,} images/questions of this split also appear in "
            f"{other.split} ({leaked_items:,} items there)"
        )
        return CheckResult(name, "warn", summary, tuple(examples), data)
    return CheckResult(name, "pass", f"no image or question shared with {other.split}", data=data)


def sibling_specs(benchmark: Benchmark) -> list[Spec]:
    """Specs of the other splits a loader knows (its module's ``SPLITS``), for leakage checks."""
    from medlens.sources import SOURCES

    spec = benchmark.source
    if spec is None:
        return []
    entry = next((e for e in SOURCES if e.name == spec.name), None)
    if entry is None:
        return []
    module = importlib.import_module(entry.target.partition(":")[0])
    splits: Sequence[str] = getattr(module, "SPLITS", ())
    return [
        Spec(spec.name, spec.argument, {**spec.options, "split": split})
        for split in splits
        if split != benchmark.split
    ]


def sibling_benchmarks(benchmark: Benchmark) -> tuple[list[Benchmark], list[str]]:
    """The loader's other splits that exist here, and why the others could not be opened."""
    from medlens.core.errors import MedlensError
    from medlens.sources import load_benchmark

    loaded, skipped = [], []
    for spec in sibling_specs(benchmark):
        try:
            loaded.append(load_benchmark(spec, lenient=True))
        except MedlensError as exc:
            skipped.append(f"{spec.canonical()}: {exc}")
    return loaded, skipped
