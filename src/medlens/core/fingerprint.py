"""A benchmark's fingerprint: what a run records about it, and the content hash that tells two
benchmarks' items apart, images included (issue 49: the bytes a model is sent, not file names).

The content hash is the sha256 over the canonical JSON of every item (question, options,
answer, meta …) with each image as its name and the sha256 of its bytes
(:mod:`medlens.core.image_digests`, cached by file, size and modification time). Runs whose
hashes differ are not on the same items: ``compare`` and ``board`` refuse to pair them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from medlens.core.image_digests import digest_cache
from medlens.core.items import (
    CANONICAL_AXES,
    CONTENT_HASH_VERSION,
    Benchmark,
    BenchmarkInfo,
    ImageRef,
    Item,
)

_IDENTITY_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
"""``json.dumps(..., sort_keys=True, ensure_ascii=False)`` without building an encoder per item."""


def describe(benchmark: Benchmark, items: Iterable[Item]) -> BenchmarkInfo:
    """Summarise and fingerprint a benchmark from its items (every image's bytes are read, or
    their digests found in the cache: :mod:`medlens.core.image_digests`)."""
    keys: set[str] = set()

    def counted() -> Iterable[Item]:
        for item in items:
            keys.update(item.meta)
            yield item

    content_hash, count = _hash_items(counted())
    return BenchmarkInfo(
        name=benchmark.name,
        spec=benchmark.spec,
        split=benchmark.split,
        n_items=count,
        has_answers=benchmark.has_answers,
        content_hash=content_hash,
        axes=axes_of(keys),
        description=benchmark.description,
    )


def items_content_hash(items: Iterable[Item]) -> str:
    """The content hash of `items` alone (a run's few-shot exemplars, recorded in its spec)."""
    return _hash_items(items)[0]


def _hash_items(items: Iterable[Item]) -> tuple[str, int]:
    """(sha256 over every item's identity line, images by their bytes; the number of items)."""
    digest = hashlib.sha256()
    count = 0
    with digest_cache() as images:
        for item in items:
            count += 1
            line = _IDENTITY_ENCODER.encode(_identity(item, images.digest))
            digest.update(line.encode("utf-8") + b"\n")
    return digest.hexdigest(), count


def axes_of(keys: Iterable[str]) -> tuple[str, ...]:
    """Metadata keys as a fingerprint lists them: canonical axes first, then the rest sorted."""
    keys = set(keys)
    return tuple([a for a in CANONICAL_AXES if a in keys] + sorted(keys - set(CANONICAL_AXES)))


def item_axes(items: Iterable[Item]) -> tuple[str, ...]:
    """The axes :func:`describe` would list, without hashing anything."""
    return axes_of(key for item in items for key in item.meta)


def _identity(item: Item, image_digest: Callable[[ImageRef], str]) -> dict[str, Any]:
    data = item.to_json(with_images=False)
    data["images"] = [
        [image.name or os.path.basename(image.path), image_digest(image)] for image in item.images
    ]
    return data


def older_hash_note(*benchmarks: Mapping[str, Any]) -> str:
    """``; …`` when some of the recorded benchmarks (run.json's ``benchmark``) were hashed by
    the rule before issue 49 and others not: their hashes differ whatever the images."""
    versions = {int(bench.get("content_hash_version") or 1) for bench in benchmarks}
    if len(versions) < 2:
        return ""
    return (
        "; the older hash named images without reading them (medlens before content hash "
        f"version {CONTENT_HASH_VERSION}): rerun that run with this medlens to pair them"
    )
