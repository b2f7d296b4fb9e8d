"""GMAI-MMBench's official files, as VLMEvalKit downloads and checks them
(``vlmeval/dataset/image_mcq.py``, ``GMAIMMBenchDataset.DATASET_URL`` / ``DATASET_MD5``):
the VAL TSV and the TEST split published as 11 parts that VLMEvalKit concatenates in order.
``gmai:DIR`` reads a folder holding the 11 parts as the TEST split; ``medlens check`` tells the
official files apart by MD5 and compares the distinct tasks, departments and modalities with
the published 18 / 18 / 38."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from medlens.core.errors import InputError

VAL_NAME = "GMAI-MMBench_VAL"
TEST_NAME = "GMAI-MMBench_TEST"
TEST_PARTS = 11
OFFICIAL_MD5: dict[str, str] = {
    "254bd581627866f1c499d3d6b4422324": VAL_NAME,
    "900d735231230a63f4ed45665c078ef4": "GMAI_mm_bench_TEST_part_1",
    "1b27ab621386945d7e4a765ad2d22b0e": "GMAI_mm_bench_TEST_part_2",
    "44bdc2b6267dd505d529b8cad06f0fb2": "GMAI_mm_bench_TEST_part_3",
    "5a04a04fcac9f1466709f242fdb80acb": "GMAI_mm_bench_TEST_part_4",
    "c70baf8909eda9af0ddeab275c721336": "GMAI_mm_bench_TEST_part_5",
    "825abc39596b644dead9350d0cfa3b96": "GMAI_mm_bench_TEST_part_6",
    "defb8aed2fb77365a76b6b9abd6a2701": "GMAI_mm_bench_TEST_part_7",
    "ff490d60b85f2bb0abb67a435b298c65": "GMAI_mm_bench_TEST_part_8",
    "ff67c86f40da93b09139ac1d1ba5dc6b": "GMAI_mm_bench_TEST_part_9",
    "3dae94627b9ac0fe00180d4780fbf6dc": "GMAI_mm_bench_TEST_part_10",
    "d08dc813f0eb6bbab63cae2a9d113c4b": "GMAI_mm_bench_TEST_part_11",
}
"""MD5 → official file name (VLMEvalKit's ``DATASET_MD5``)."""
PUBLISHED_COUNTS = {"task": 18, "department": 18, "modality": 38}
"""Distinct clinical VQA tasks, departments and modalities the GMAI-MMBench paper reports."""
_PART = re.compile(r"^GMAI_mm_bench_TEST_part_(\d+)\.tsv$")


def part_number(path: Path) -> int | None:
    match = _PART.match(path.name)
    return int(match.group(1)) if match else None


def test_parts(folder: Path) -> list[Path]:
    """The 11 TEST parts of `folder` in part order; any missing is a one-line error."""
    found = {part_number(p): p for p in folder.iterdir() if part_number(p) is not None}
    missing = [n for n in range(1, TEST_PARTS + 1) if n not in found]
    if missing:
        names = ", ".join(f"GMAI_mm_bench_TEST_part_{n}.tsv" for n in missing[:4])
        more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        raise InputError(folder, None, f"missing TEST parts: {names}{more} (the split has 11)")
    return [found[n] for n in range(1, TEST_PARTS + 1)]


def file_md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_name(path: Path, split: str) -> str:
    """VLMEvalKit's dataset name: GMAI-MMBench_VAL / _TEST, or a custom TSV's file stem."""
    if path.is_dir() or part_number(path) is not None or split == "test":
        return TEST_NAME
    if path.name == f"{VAL_NAME}.tsv" or split == "val":
        return VAL_NAME
    return path.stem
