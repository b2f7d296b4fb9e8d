"""A prediction ``.tsv`` read by the ``csv`` module gives pandas's values, or is left to pandas."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pandas as pd
import pytest

from medlens.models.prediction_table import read_columns, scan_tsv

TOKENS = (
    "a", "B", "1", " ", "\t", "\t", "\n", "\n", '"', '""', "\r\n", "\r", "é", "NA", "nan", "",
    "\ufeff", "x y", "#", "'", "\\", "\x00",
)  # fmt: skip
CELLS = (
    "a",
    "1",
    '"x\ty"',
    '"q""q"',
    "",
    "NA",
    " b ",
    'a"b',
    '"\n"',
    "1.0",
    "答案是B",
    "  ",
    '" "',
)
NAMES = ("index", "prediction", "question", "q", "A", '"index"', "image", "")


def pandas_columns(path: Path) -> dict[str, list[object]] | None:
    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (ValueError, OSError):
        return None
    return {str(column): frame[column].tolist() for column in frame.columns}


def fuzzed_tsv(rng: random.Random) -> str:
    header = "\t".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.5:  # free bytes: quoting, stray tabs, carriage returns, NULs
        return header + "\n" + "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 40)))
    width = header.count("\t") + 1
    rows = ("\t".join(rng.choice(CELLS) for _ in range(width)) for _ in range(rng.randint(0, 5)))
    return header + "\n" + "\n".join(rows)


@pytest.mark.parametrize("seed", range(6))
def test_fuzzed_files_read_as_pandas_reads_them_or_go_to_pandas(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "pred.tsv"
    fast = 0
    for _ in range(400):
        path.write_text(fuzzed_tsv(rng), encoding="utf-8", newline="")
        scanned = scan_tsv(path, lambda names: names)
        if scanned is None:
            continue
        fast += 1
        expected = pandas_columns(path)
        assert expected is not None, path.read_bytes()
        assert list(scanned) == list(expected), path.read_bytes()
        assert scanned == expected, path.read_bytes()
    assert fast > 30  # the scanner's path is taken, not always left to pandas


def vlmeval_outputs() -> list[str]:
    """What models write: letters, quotes, JSON, tabs and line breaks inside an answer."""
    options = {"A": "Drusen", "B": 'Glaucoma "open angle"', "C": "Cyst"}
    return [
        "B", "The answer is B.", f"B. {options['B']}", '```json\n{"answer": "B"}\n```',
        "答案是C", "Final answer: \\boxed{A}", "A\tB", '"A"', "", "NA", " C ", "Option A\n\nB",
    ]  # fmt: skip


def test_a_vlmeval_prediction_file_is_read_by_the_scanner_as_pandas_reads_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bench_GMAI.tsv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["index", "question", "A", "B", "answer", "prediction"])
        for index, output in enumerate(vlmeval_outputs()):
            out.writerow([index, f"What is shown ({index})?", "x", "y", "A", output])
    scanned = scan_tsv(path, lambda names: ["index", "question", "prediction"])
    assert scanned is not None
    assert scanned == {k: v for k, v in (pandas_columns(path) or {}).items() if k in scanned}
    assert scanned["prediction"] == vlmeval_outputs()


@pytest.mark.parametrize(
    "content",
    [
        b"index\tprediction\r\n1\tA\r2\tB\r\n",  # a lone CR ends a line for pandas
        b"index\n1\n  \n2\n",  # pandas skips a line of spaces
    ],
)
def test_a_file_the_scanner_leaves_is_read_by_pandas(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "pred.tsv"
    path.write_bytes(content)
    assert scan_tsv(path, lambda names: names) is None
    assert read_columns(path, lambda names: names) == pandas_columns(path)
    assert read_columns(path, lambda names: names)["index"] == ["1", "2"]
