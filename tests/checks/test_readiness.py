"""DAIMS data readiness in `medlens check`: computed items scored, the rest listed as manual."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from data_paths import realdata_dir
from medlens.checks.readiness import DAIMS_ITEMS, ReadinessTally, assess, readiness_summary
from medlens.core.items import Item

CLEAN_CHECKS = {"duplicate_ids": "pass", "gold_in_options": "pass", "axis_variants": "pass",
                "images_decode": "pass"}  # fmt: skip


def _item(index: int, question: str = "", **meta: str) -> Item:
    return Item(
        id=str(index),
        question=question or f"Which finding is shown in case {index}?",
        kind="choice",
        options={"A": "effusion", "B": "nodule"},
        answer="A",
        meta={"modality": "CT", **meta},
    )


def _statuses(items: list[Item], checks: dict[str, str] = CLEAN_CHECKS) -> dict[int, str]:
    tally = ReadinessTally()
    for item in items:
        tally.add(item)
    return {entry.number: entry.status for entry in assess(tally, checks)}


def test_the_checklist_has_the_24_daims_items() -> None:
    assert len(DAIMS_ITEMS) == 24
    assert DAIMS_ITEMS[1].startswith("Each patient has a unique identifier")
    assert DAIMS_ITEMS[23].startswith("No sensitive data")


def test_clean_items_pass_every_computed_item() -> None:
    statuses = _statuses([_item(i) for i in range(10)])
    computed = {n: s for n, s in statuses.items() if s != "manual"}
    assert set(computed.values()) == {"pass"}
    assert sorted(computed) == [2, 3, 4, 7, 8, 9, 12, 13, 17, 18, 20, 21, 24]


@pytest.mark.parametrize(
    ("planted", "number"),
    [
        (_item(99, "Which finding is shown in case 0?"), 4),  # same content as item 0
        (_item(99, "Quelle lésion ?"), 3),
        (_item(99, "这是什么器官？"), 18),  # non-Latin script is non-ASCII too (item 3)
        (_item(99, "Contact john.doe@example.org about case 99"), 24),
        (_item(99, "Call 555-123-4567 for case 99"), 24),
        (_item(99, size="1,050,099"), 7),
        (_item(99, weight="1,2"), 17),
        (_item(99, modality="MR"), 13),  # one MR among ten CT items: a rare category
        (Item(id="99", question="", kind="open", answer="x"), 9),
    ],
)
def test_each_planted_problem_fails_its_item(planted: Item, number: int) -> None:
    statuses = _statuses([*(_item(i) for i in range(10)), planted])
    failed = {n for n, status in statuses.items() if status == "fail"}
    assert failed == ({3, 18} if number == 18 else {number})


def test_mixed_missing_markers_fail_item_8() -> None:
    items = [_item(i, sex="") for i in range(5)] + [_item(i + 5, sex="nan") for i in range(5)]
    assert _statuses(items)[8] == "fail"


def test_checklist_results_feed_their_items() -> None:
    checks = {**CLEAN_CHECKS, "duplicate_ids": "fail", "axis_variants": "warn"}
    statuses = _statuses([_item(i) for i in range(10)], checks)
    assert (statuses[2], statuses[20], statuses[12]) == ("fail", "fail", "pass")


def test_summary_counts() -> None:
    tally = ReadinessTally()
    for i in range(10):
        tally.add(_item(i, "这是什么？" if i == 0 else ""))
    summary = readiness_summary(assess(tally, CLEAN_CHECKS))
    assert (summary["passed"], summary["computed"]) == (11, 13)
    assert summary["manual"] == [1, 5, 6, 10, 11, 14, 15, 16, 19, 22, 23]
    assert len(summary["items"]) == 24


def test_check_json_on_real_slake_reports_readiness() -> None:
    folder = realdata_dir("slake")
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "check", f"slake:{folder}?lang=all", "--json", "--sample", "4"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    readiness = next(c for c in report["checks"] if c["name"] == "readiness")
    assert readiness["status"] == "info"
    by_number = {entry["number"]: entry for entry in readiness["data"]["items"]}
    assert by_number[18]["status"] == "fail"  # the Chinese half of SLAKE
    assert by_number[18]["evidence"].startswith("1033 item(s) hold non-Latin script")
    assert readiness["data"]["computed"] == 13


def test_readiness_is_printed_out_of_24_with_the_items_that_need_a_human() -> None:
    folder = realdata_dir("vqa_rad")
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "check", f"vqa-rad:{folder}", "--sample", "4", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    readiness = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "readiness")
    passed = sum(1 for entry in readiness["data"]["items"] if entry["status"] == "pass")
    assert readiness["data"]["score"] == f"{passed}/24"
    assert readiness["summary"].startswith(
        f"DAIMS data readiness {passed}/24 ({passed} of 13 computable items pass; "
        "items 1, 5, 6, 10, 11, 14, 15, 16, 19, 22, 23 need a human)")  # fmt: skip
    human = [d for d in readiness["details"] if "[needs a human]" in d]
    assert len(human) == 11 and human[0] == " 1. [needs a human] " + DAIMS_ITEMS[0]
