"""Near-duplicate images between two benchmarks or splits, by perceptual hash (``imagehash``).

``medlens check --against`` finds images shared byte for byte; benchmarks built from the same
public sources (GMAI-MMBench and OmniMedVQA, a VQA set's train and test splits) share images that
were re-encoded, resized or converted on the way, which a byte hash misses. Each image is decoded
as a request would decode it and hashed with ``imagehash.phash`` (a 64-bit DCT hash, robust to
re-encoding and rescaling); two images are near-duplicates when their hashes differ in at most
`max_distance` bits (default 4 of 64: the distance imagehash's authors suggest for "same image").
Every image of A is compared with every image of B, 256 at a time, as XOR and popcount on
uint64 arrays; images with identical bytes are hashed once. Counts are per item image: an image
that several questions share counts once per question, as the questions are what leak.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medlens.core.errors import ItemError, SpecError
from medlens.core.extras import require_extra
from medlens.core.items import Benchmark, decode_image

DEFAULT_DISTANCE = 4
CHUNK = 256
"""Rows of A compared at once: 256 × |B| uint64 (53 MB for |B| = 26,000)."""
SHOWN = 20


@dataclass
class HashedImages:
    """One perceptual hash per image, and which item (and source) it belongs to."""

    hashes: list[int] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    owners: list[tuple[str, int, str]] = field(default_factory=list)
    """(item id, image index, source)."""
    unreadable: int = 0


def hash_images(benchmark: Benchmark, on_item: Callable[[], None] | None = None) -> HashedImages:
    """pHash every image of `benchmark` (identical bytes hashed once; undecodable ones counted)."""
    require_extra("medlens check overlap", "overlap", ("imagehash",))
    import imagehash

    out, seen = HashedImages(), dict[str, int]()
    for item in benchmark.items():
        for index, image in enumerate(item.images):
            data = image.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest not in seen:
                try:
                    picture = decode_image(data, name=image.name or image.path)
                except ItemError:
                    out.unreadable += 1
                    continue
                seen[digest] = int(str(imagehash.phash(picture)), 16)
            out.hashes.append(seen[digest])
            out.digests.append(digest)
            out.owners.append((item.id, index, item.meta.get("source", "")))
        if on_item is not None:
            on_item()
    return out


def nearest(a: Iterable[int], b: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """For each hash of `a`: the smallest Hamming distance to `b` and the index reaching it."""
    left = np.fromiter(a, dtype=np.uint64)
    right = np.fromiter(b, dtype=np.uint64)
    best = np.full(left.size, 65, dtype=np.int64)
    where = np.full(left.size, -1, dtype=np.int64)
    if right.size == 0:
        return best, where
    for start in range(0, left.size, CHUNK):
        block = np.bitwise_count(left[start : start + CHUNK, None] ^ right[None, :])
        found = block.argmin(axis=1)
        where[start : start + CHUNK] = found
        best[start : start + CHUNK] = block[np.arange(found.size), found]
    return best, where


def overlap_result(
    a: HashedImages, b: HashedImages, names: tuple[str, str], max_distance: int = DEFAULT_DISTANCE
) -> dict[str, Any]:
    """Images of A with a near-duplicate in B (identical bytes counted apart), by source."""
    if not 0 <= max_distance <= 32:
        raise SpecError(f"--max-distance {max_distance}: expected 0 to 32 bits (of 64)")
    best, where = nearest(a.hashes, b.hashes)
    near = np.flatnonzero(best <= max_distance)
    identical = sum(1 for i in near if a.digests[i] == b.digests[where[i]])
    by_source = Counter(a.owners[i][2] or "(no source)" for i in near)
    totals = Counter(owner[2] or "(no source)" for owner in a.owners)
    examples = [
        {"a": a.owners[i][0], "a_image": a.owners[i][1], "b": b.owners[where[i]][0],
         "b_image": b.owners[where[i]][1], "distance": int(best[i]),
         "identical_bytes": a.digests[i] == b.digests[where[i]]}
        for i in sorted(near.tolist(), key=lambda i: (best[i], a.owners[i][0]))[:SHOWN]
    ]  # fmt: skip
    return {
        "a": names[0], "b": names[1], "max_distance": max_distance,
        "images_a": len(a.hashes), "images_b": len(b.hashes),
        "unreadable": [a.unreadable, b.unreadable],
        "near_duplicates": int(near.size), "identical_bytes": identical,
        "only_perceptual": int(near.size) - identical,
        "by_source": {s: {"near": by_source[s], "images": totals[s]} for s in sorted(by_source)},
        "examples": examples,
    }  # fmt: skip


def overlap_lines(result: dict[str, Any]) -> list[str]:
    """What ``medlens overlap`` prints."""
    share = result["near_duplicates"] / result["images_a"] if result["images_a"] else 0.0
    lines = [
        f"{result['a']} ({result['images_a']:,} images) vs {result['b']} "
        f"({result['images_b']:,} images): {result['near_duplicates']:,} images of A "
        f"({100 * share:.1f}%) have a near-duplicate in B (pHash distance ≤ "
        f"{result['max_distance']} of 64 bits); {result['identical_bytes']:,} byte-identical, "
        f"{result['only_perceptual']:,} found only perceptually"
    ]
    for source, counts in result["by_source"].items():
        lines.append(f"  source {source}: {counts['near']:,} of {counts['images']:,} images")
    for row in result["examples"]:
        kind = "identical bytes" if row["identical_bytes"] else f"distance {row['distance']}"
        lines.append(f"  A {row['a']} image {row['a_image']} ~ B {row['b']} image "
                     f"{row['b_image']} ({kind})")  # fmt: skip
    if any(result["unreadable"]):
        lines.append(f"  unreadable images left out: A {result['unreadable'][0]}, "
                     f"B {result['unreadable'][1]}")  # fmt: skip
    return lines
