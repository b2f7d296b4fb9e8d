"""`medlens check overlap`: near-duplicate images between two benchmarks or splits (perceptual hash)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from medlens.cli.common import command, console, progress_bar, write_json
from medlens.cli.groups import check_app


@command("overlap", under=check_app)
def overlap(
    spec_a: Annotated[str, typer.Argument(help="Benchmark spec A, e.g. gmai:GMAI-MMBench_VAL.tsv")],
    spec_b: Annotated[str, typer.Argument(help="Benchmark spec B, e.g. vqa-rad:DIR?split=train")],
    max_distance: Annotated[
        int, typer.Option(help="Near-duplicate: pHash Hamming distance at most this (of 64 bits)")
    ] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Images of A that have a near-duplicate in B (re-encoded, resized or converted copies as
    well as byte-identical ones), by perceptual hash; needs pip install 'medlens[overlap]'."""
    from medlens.api import load_benchmark
    from medlens.checks.overlap import hash_images, overlap_lines, overlap_result
    from medlens.core.errors import SpecError
    from medlens.core.extras import require_extra

    if not 0 <= max_distance <= 32:
        raise SpecError(f"--max-distance {max_distance}: expected 0 to 32 bits (of 64)")
    require_extra("medlens check overlap", "overlap", ("imagehash",))
    benchmarks = [load_benchmark(spec_a), load_benchmark(spec_b)]
    with progress_bar("medlens check overlap") as bar:
        hashed = []
        for benchmark in benchmarks:
            task = bar.add_task(f"hashing {benchmark.name}", total=None)

            def advance(task: Any = task) -> None:
                bar.advance(task)

            hashed.append(hash_images(benchmark, on_item=advance))
    result = overlap_result(hashed[0], hashed[1], (spec_a, spec_b), max_distance)
    if as_json:
        write_json(result)
        return
    for line in overlap_lines(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
