"""Re-scoring a VLMEvalKit prediction file and reporting it import neither pandas nor
scipy.optimize: each costs a third of a second or more per command, more than re-reading a few
thousand answers (issue 36's per-row goal). pandas came in through reading the ``.tsv`` and
through pyarrow's first ``pa.array`` (the score file); scipy.optimize through the report's
full-benchmark estimate of runs that have no design. Its JSON report, which reads results.json,
imports neither scipy (scipy.special came in through the AUROC interval's module, ~0.2–0.3 s)
nor numpy (through the score table's module and the text report's imports, ~0.15 s)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from gmai_fixture import write_gmai_tsv

PROBE = """
import sys
from medlens.cli import main
sys.argv = ["medlens", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
print("IMPORTED", sorted(m for m in ("numpy", "pandas", "scipy.optimize", "scipy.special") if m in sys.modules))
"""


def medlens_imports(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True, text=True, check=False, env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_replay_and_its_json_report_import_neither_pandas_nor_more_scipy(tmp_path: Path) -> None:
    rows = write_gmai_tsv(tmp_path / "GMAI-MMBench_VAL.tsv", n_rows=12)
    predictions = tmp_path / "predictions.tsv"
    with predictions.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["index", "prediction"])
        for number, row in enumerate(rows):
            out.writerow([row.index, ["A", '{"answer": "B"}', "The answer is C.\tD"][number % 3]])
    run = [
        "run", "--bench", f"gmai:{tmp_path / 'GMAI-MMBench_VAL.tsv'}", "--model",
        f"replay:{predictions}", "--prompt", "vlmeval", "--extract", "vlmeval", "--out",
        str(tmp_path / "runs"), "--name", "replayed",
    ]  # fmt: skip
    assert medlens_imports(*run) == "IMPORTED ['numpy', 'scipy.special']"  # the intervals
    report = ["report", str(tmp_path / "runs" / "replayed"), "--format", "json"]
    assert medlens_imports(*report) == "IMPORTED []"
