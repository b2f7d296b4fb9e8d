"""``medlens subset``: a frozen, runnable benchmark cut from another one, with its recipe.

One streaming pass over the source decides what to keep (filters as the items go by, then the
sample over the kept ids) and fingerprints the source (``BenchmarkInfo.content_hash``, the hash a
run on that source records). Then the output is written:

- GMAI/VLMEvalKit TSV → TSV: each kept row is copied byte for byte from the source (images are
  never decoded or re-encoded). A kept row whose image cell refers to a row that was not kept
  gets that row's base64 text instead (the first such row; later ones refer to it).
- anything → jsonl: items as ``Item.to_json()`` with their image files copied into
  ``OUT_images/``; anything → TSV: image bytes base64-encoded as they are (DICOM, which
  VLMEvalKit cannot read, becomes a PNG of its windowed pixels).

This module owns the pass and the writing; what a subset refuses is ``subset_checks``, how its
images become files ``unpack``.

``subset.json`` beside the output records the recipe, the source (spec, n, content hash) and the
output's own n and content hash, so a run on the output can show where it came from.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.builder.output import (
    Entry,
    claim_output,
    letters_for,
    output_format,
    tsv_columns,
    write_benchmark,
    write_jsonl,
    write_tsv,
)
from medlens.builder.subset_checks import (
    check_answerable,
    check_flagged,
    check_runs,
    check_sidecar_free,
)
from medlens.builder.unpack import UNPACKED_IMAGES, UNPACKED_ITEMS, picture, unpack
from medlens.core.errors import SpecError
from medlens.core.fingerprint import describe
from medlens.core.items import Benchmark, BenchmarkInfo, ImageRef, Item
from medlens.core.specs import Spec
from medlens.execution.selection import Filter, Recipe, sample_ids
from medlens.sources import load_benchmark
from medlens.sources.sidecar import TSV_LOADERS

__all__ = ["UNPACKED_IMAGES", "UNPACKED_ITEMS", "Drawn", "Population", "subset", "unpack"]

SCHEMA = 1


@dataclass
class Population:
    """The kept ids of one pass, by stratum, and what writing them needs."""

    info: BenchmarkInfo
    order: list[str] = field(default_factory=list)
    strata: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)
    """Kept items (non-TSV sources; a TSV source keeps only row spans and image refs)."""
    spans: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    images: dict[str, ImageRef] = field(default_factory=dict)
    tsv_path: str = ""
    every_id: set[str] = field(default_factory=set)
    """Every item id of the source, kept or not (``--drop-flagged`` is checked against them)."""


def subset(
    source: Spec,
    output: Path,
    recipe: Recipe,
    force: bool = False,
    drawn: Drawn | None = None,
) -> dict[str, Any]:
    """Write the subset and its sidecar; returns the sidecar's content (with ``"note"``: the
    folder made outside the working folder, if any). An existing output needs `force`.
    `drawn`: ids chosen by a design of the caller's (``medlens items sample``) instead of the
    recipe's sample, and the design, recorded in the sidecar as ``design``."""
    fmt = output_format(output)
    recipe.check()
    if output.resolve() == Path(source.argument).expanduser().resolve():
        raise SpecError(f"--output {output}: that is the source benchmark itself")
    note = claim_output(output, force)
    check_sidecar_free(output)
    benchmark = load_benchmark(source)
    spec = str(source)  # as the user gave it: recorded, and part of the sample's seed
    if benchmark.name in TSV_LOADERS:
        population = _scan_tsv(benchmark, recipe)
    else:
        population = _scan_items(benchmark, recipe)
    check_runs(recipe, population.info)
    check_flagged(recipe, population.info, population.every_id)
    chosen = sample_ids(population.strata, recipe, spec) if drawn is None else drawn.ids
    if drawn is not None and drawn.content_hash != population.info.content_hash:
        raise SpecError(
            f"{spec}: the benchmark changed while the sample was drawn (content "
            f"{population.info.content_hash[:12]}, not {drawn.content_hash[:12]})"
        )
    ids = population.order if chosen is None else [i for i in population.order if i in chosen]
    if not ids:
        raise SpecError(f"{spec}: the selection keeps no items (nothing to write)")
    if fmt == "jsonl":
        check_answerable(output, spec, [population.items[i] for i in ids if i in population.items])
    content: dict[str, Any] = {}

    def write(staged: Path, staged_images: Path) -> int:
        if fmt == "tsv" and population.tsv_path:
            return _copy_rows(population, ids, staged)
        entries = _entries(benchmark, population, ids, fmt)
        if fmt == "jsonl":
            return write_jsonl(entries, staged, staged_images)
        kept = [population.items[i] for i in ids] if population.items else None
        return _write_items_tsv(entries, staged, kept)

    def sidecar(staged: Path) -> dict[str, Any]:
        loader = "jsonl" if fmt == "jsonl" else benchmark.name if population.tsv_path else "gmai"
        written = load_benchmark(Spec(loader, str(staged)))
        out_info = describe(written, written.items())
        content.update(_sidecar(output, loader, out_info, population, spec, recipe, set(ids)))
        if drawn is not None:
            content["design"] = drawn.design
        return content

    write_benchmark(output, write, sidecar)
    return {**content, "note": note} if note else content


@dataclass(frozen=True)
class Drawn:
    """A sample drawn by a design outside the recipe, on the source with `content_hash`."""

    ids: set[str]
    design: dict[str, Any]
    content_hash: str


def _sidecar(
    output: Path,
    loader: str,
    out_info: BenchmarkInfo,
    population: Population,
    spec: str,
    recipe: Recipe,
    kept: set[str],
) -> dict[str, Any]:
    from medlens.core.version import __version__

    source = population.info
    strata = None
    if recipe.stratify:
        strata = {
            "|".join(key): {"population": len(ids), "selected": sum(i in kept for i in ids)}
            for key, ids in sorted(population.strata.items())
        }
    return {
        "schema": SCHEMA,
        "output": output.name,
        "spec": f"{loader}:{output.name}",
        "n_items": out_info.n_items,
        "content_hash": out_info.content_hash,
        "content_hash_version": out_info.content_hash_version,
        "source": {
            "spec": spec,
            "name": source.name,
            "split": source.split,
            "n_items": source.n_items,
            "content_hash": source.content_hash,
            "content_hash_version": source.content_hash_version,
            "population": len(population.order),
            "strata": strata,
        },
        "recipe": recipe.to_json(),
        "medlens_version": __version__,
    }


def _scan_tsv(benchmark: Benchmark, recipe: Recipe) -> Population:
    """One pass over a TSV: kept ids by stratum, every row's byte span, the source's hash."""
    from medlens.sources.vlmeval import iter_tsv_items, read_layout

    assert benchmark.source is not None  # a loaded TSV benchmark knows its spec
    path = os.path.abspath(os.path.expanduser(benchmark.source.argument))
    layout = read_layout(path)
    keep = Filter(recipe, [key for key, _ in layout.meta] + ["split", "image_id"])
    population = Population(info=_placeholder(benchmark), tsv_path=path)

    def observe(items: Iterable[Item]) -> Iterator[Item]:
        for item in items:
            population.every_id.add(item.id)
            if keep.keeps(item.id, item.meta):
                population.strata.setdefault(keep.stratum(item.meta), []).append(item.id)
                population.order.append(item.id)
                if item.images:
                    population.images[item.id] = item.images[0]
            yield item

    rows = iter_tsv_items(layout, benchmark.split, spans=population.spans)
    population.info = describe(benchmark, observe(rows))
    keep.check_ids(benchmark.spec)
    return population


def _scan_items(benchmark: Benchmark, recipe: Recipe) -> Population:
    items = list(benchmark.items())
    population = Population(info=describe(benchmark, items), every_id={i.id for i in items})
    keep = Filter(recipe, population.info.axes)
    for item in items:
        if keep.keeps(item.id, item.meta):
            population.strata.setdefault(keep.stratum(item.meta), []).append(item.id)
            population.order.append(item.id)
            population.items[item.id] = item
    keep.check_ids(benchmark.spec)
    return population


def _placeholder(benchmark: Benchmark) -> BenchmarkInfo:
    return BenchmarkInfo(benchmark.name, benchmark.spec, benchmark.split, 0, False, "")


def _copy_rows(population: Population, ids: list[str], staged: Path) -> int:
    """Kept TSV rows byte for byte; a reference to a dropped row carries that row's image."""
    from medlens.sources.tsv_scan import TsvScanner

    chosen = set(ids)
    carried: dict[str, str] = {}
    with TsvScanner(population.tsv_path) as scanner:
        header = scanner.read_row()
        header_span = (header.start if header else 0, scanner.position)
    with open(population.tsv_path, "rb") as source, open(staged, "wb") as out:
        out.write(_read(source, *header_span).rstrip(b"\r\n") + b"\n")
        for item_id in ids:
            start, end, offset, length = population.spans[item_id]
            row = _read(source, start, end).rstrip(b"\r\n")
            image = population.images.get(item_id)
            target = image.name if image is not None else item_id
            if target != item_id and target not in chosen:
                if target in carried:
                    cell = carried[target].encode("utf-8")
                else:
                    cell = _read(source, image.offset, image.offset + image.length)  # type: ignore[union-attr]
                    carried[target] = item_id
                row = row[: offset - start] + cell + row[offset - start + length :]
            out.write(row + b"\n")
    return len(ids)


def _read(handle: Any, start: int, end: int) -> bytes:
    handle.seek(start)
    data: bytes = handle.read(end - start)
    return data


def _entries(
    benchmark: Benchmark, population: Population, ids: list[str], fmt: str
) -> Iterator[Entry]:
    """The kept items with their image files (a TSV source is read a second time here)."""
    chosen = set(ids)
    names: dict[tuple[str, str, int], str] = {}
    source = (population.items[i] for i in ids) if population.items else (
        item for item in benchmark.items() if item.id in chosen
    )  # fmt: skip
    for item in source:
        pictures = tuple(picture(item, ref, names, fmt) for ref in item.images)
        yield item, pictures


def _write_items_tsv(entries: Iterable[Entry], staged: Path, kept: list[Item] | None) -> int:
    if kept is None:  # TSV sources take the row-copy path; never here
        raise AssertionError("items of a TSV source are not kept")
    columns = tsv_columns(k for item in kept for k in item.meta)
    return write_tsv(entries, staged, columns, letters_for(kept))
