"""`medlens benchmarks` / `medlens models`: every registered name listed, within the width asked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("command", "names"), [
    ("benchmarks", ("gmai", "slake", "vqa-rad", "pubmedqa", "mmlu")),
    ("models", ("random", "oracle", "openai", "replay", "hf")),
])  # fmt: skip
@pytest.mark.parametrize("columns", [80, 120])
def test_listing_fits_the_columns_asked_for(
    command: str, names: tuple[str, ...], columns: int
) -> None:
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", command],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns
    assert all(any(f"│ {name} " in line for line in lines) for name in names)
