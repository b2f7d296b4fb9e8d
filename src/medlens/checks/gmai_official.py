"""``medlens check`` on GMAI-MMBench: is this the official file, and does it hold what the paper
publishes? The VAL TSV and each of the 11 TEST parts are recognised by their MD5 (VLMEvalKit's
``DATASET_MD5``, ``sources.gmai_files``); the row count and the distinct clinical VQA tasks,
departments and modalities are reported against the published 18 / 18 / 38.

Statuses: ``pass`` for an official file whose counts match, ``warn`` for the official VAL file
or the whole TEST split with other counts, or for a file that is not an official one (scores
would not be comparable with the leaderboard), ``info`` for a single TEST part (a part need not
hold every modality).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from medlens.checks.result import CheckResult, Status
from medlens.core.items import Benchmark
from medlens.sources.gmai_files import (
    OFFICIAL_MD5,
    PUBLISHED_COUNTS,
    TEST_PARTS,
    VAL_NAME,
    file_md5,
    part_number,
    test_parts,
)


def gmai_file_check(
    benchmark: Benchmark, axes: Mapping[str, Counter[str]], rows: int
) -> CheckResult | None:
    """The official-file line of a ``gmai:`` benchmark's checklist (None for other loaders)."""
    if benchmark.name != "gmai" or benchmark.source is None or not benchmark.source.argument:
        return None
    path = Path(benchmark.source.argument).expanduser()
    files = test_parts(path) if path.is_dir() else [path]
    names = [OFFICIAL_MD5.get(file_md5(file)) for file in files]
    counts = {axis: sum(1 for value in axes.get(axis, ()) if value) for axis in PUBLISHED_COUNTS}
    shown = " / ".join(str(counts[axis]) for axis in PUBLISHED_COUNTS)
    published = " / ".join(str(n) for n in PUBLISHED_COUNTS.values())
    measured = f"{rows:,} rows; tasks / departments / modalities {shown} (published {published})"
    data = {"files": [str(f) for f in files], "official": names, "rows": rows, "counts": counts,
            "published": dict(PUBLISHED_COUNTS)}  # fmt: skip
    unofficial = [file.name for file, name in zip(files, names, strict=True) if name is None]
    if unofficial:
        summary = f"not the official file(s) {', '.join(unofficial[:3])} (MD5 differs); {measured}"
        return CheckResult("gmai_official", "warn", summary, data=data)
    matches = counts == PUBLISHED_COUNTS
    if len(files) == TEST_PARTS:
        what = f"the official TEST split ({TEST_PARTS} parts, MD5s match)"
    elif names[0] == VAL_NAME:
        what = "the official VAL file (MD5 254bd581…)"
    else:
        number = part_number(path)
        return CheckResult(
            "gmai_official", "info", f"official TEST part {number} of {TEST_PARTS}; {measured}",
            data=data,
        )  # fmt: skip
    status: Status = "pass" if matches else "warn"
    return CheckResult("gmai_official", status, f"{what}: {measured}", data=data)
