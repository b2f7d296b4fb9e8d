"""`medlens items audit` flags on constructed cases, its outputs, and subset --drop-flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from items_fixtures import LETTERS, invoke, one_error_line, write_bench, write_runs

ABILITIES = tuple(round(-2.0 + 4.5 * k / 23, 3) for k in range(24))
"""24 runs: enough for the audit's tests to flag at q 0.1 (with 8 it can flag nothing)."""
STRONG = 12  # runs 12… are the stronger half


def key_of(i: int) -> str:
    return LETTERS[i % 4]


def other(i: int, shift: int = 1) -> str:
    return LETTERS[(i + shift) % 4]


OVERRIDES = {
    # q0: every strong run agrees on another letter than the key (a wrong key)
    "q0": lambda k: other(0) if k >= STRONG else LETTERS[k % 4],
    # q1: the strong runs split between the key and another letter
    "q1": lambda k: (key_of(1) if k % 2 else other(1)) if k >= STRONG else LETTERS[k % 4],
    # q2: every run right
    "q2": lambda k: key_of(2),
    # q3: everyone guesses evenly over the four letters
    "q3": lambda k: LETTERS[k % 4],
}


@pytest.fixture
def audited(tmp_path: Path) -> tuple[Path, list[Path], list[Path]]:
    bench = write_bench(tmp_path / "bench", 80)
    runs = write_runs(tmp_path / "runs", bench, ABILITIES, overrides=OVERRIDES)
    probes = write_runs(
        tmp_path / "probes", bench, (-2.0, -2.0, -2.0), prefix="p", seed=5,
        spec_extra={"probe": "no-image"}, overrides={"q4": lambda k: key_of(4)},
    )  # fmt: skip
    return bench, runs, probes


def audit_json(*args: object) -> dict:
    result = invoke("items", "audit", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_flags_on_constructed_items(audited: tuple[Path, list[Path], list[Path]]) -> None:
    _, runs, probes = audited
    found = audit_json(*runs, *[x for p in probes for x in ("--probe-runs", p)])
    by_id = {row["id"]: row for row in found["items"]}
    assert "key" in by_id["q0"]["flags"] and by_id["q0"]["suggested_answer"] == other(0)
    assert by_id["q0"]["flagged"]
    assert found["items"][0]["id"] == "q0"  # sorted by suspicion
    assert (
        by_id["q0"]["evidence"][other(0)]["mean_ability"]
        > by_id["q0"]["evidence"].get(key_of(0), {"mean_ability": -9})["mean_ability"]
    )
    # a 50/50 split of the strong runs is tested as "ambiguous" (never "key"); with 24 runs
    # and 80 items its evidence (p ≈ 0.06) does not clear q 0.1
    assert "ambiguous" in by_id["q1"]["q"] and "key" not in by_id["q1"]["flags"]
    assert by_id["q2"]["flags"] == ["saturated"] and not by_id["q2"]["flagged"]
    assert "at_chance" in by_id["q3"]["flags"]
    assert "solved_without_image" in by_id["q4"]["flags"]
    assert found["summary"]["saturated_share"] == pytest.approx(
        sum("saturated" in r["flags"] for r in found["items"]) / 80
    )
    assert set(found["summary"]["solved_without_image_share"]) == {"CT", "MR", "US"}
    assert found["items"] == sorted(found["items"], key=lambda r: (-r["suspicion"], r["id"]))
    for row in found["items"]:
        assert set(row["flags"]) <= set(found["flags"])


def test_drop_flagged_reads_the_audit(
    audited: tuple[Path, list[Path], list[Path]], tmp_path: Path
) -> None:
    bench, runs, _ = audited
    report = tmp_path / "audit.json"
    report.write_text(json.dumps(audit_json(*runs)))
    flagged = {r["id"] for r in json.loads(report.read_text())["items"] if r["flagged"]}
    out = tmp_path / "clean" / "c.jsonl"
    result = invoke("subset", f"jsonl:{bench}", "--drop-flagged", report, "--output", out)
    assert result.exit_code == 0, result.output
    kept = {json.loads(line)["id"] for line in out.read_text().splitlines()}
    assert "q0" in flagged and kept == {f"q{i}" for i in range(80)} - flagged


def test_drop_flagged_refuses_an_audit_of_another_benchmark(
    audited: tuple[Path, list[Path], list[Path]], tmp_path: Path
) -> None:
    bench, runs, _ = audited
    report = tmp_path / "audit.json"
    report.write_text(json.dumps(audit_json(*runs)))
    other_bench = write_bench(tmp_path / "other", 50)
    out = tmp_path / "clean" / "c.jsonl"
    out.parent.mkdir()
    line = one_error_line(
        invoke("subset", f"jsonl:{other_bench}", "--drop-flagged", report, "--output", out)
    )
    assert str(report) in line and "an audit of" in line and str(other_bench) in line
    assert list(out.parent.iterdir()) == []
    # an audit without a content hash (`medlens audit --json`) whose flagged ids are no items
    contamination = tmp_path / "contamination.json"
    contamination.write_text(json.dumps({"items": [{"id": "nope", "flagged": True}]}))
    line = one_error_line(
        invoke("subset", f"jsonl:{bench}", "--drop-flagged", contamination, "--output", out)
    )
    assert str(contamination) in line and "'nope'" in line
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({"benchmark": {}, "items": {"q1": {}}, "runs": {}, "fit": {}}, "`medlens items fit` bank"),
        ([{"id": "q1", "flagged": True}], "JSON list"),
        ("flagged", "JSON string"),
        ({"flagged": ["q1"]}, "field 'items' is missing"),
        ({"items": ["q1"]}, "items[0] is not an item with an 'id'"),
    ],
)
def test_drop_flagged_names_a_file_that_is_no_audit_in_words(
    tmp_path: Path, content: object, says: str
) -> None:
    """A bank, a list or a stray JSON given to --drop-flagged: what the file is, in words (it
    read "(AttributeError: 'str' object has no attribute 'get')"), one line, nothing written."""
    bench = write_bench(tmp_path / "bench", 20)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(content))
    out = tmp_path / "clean" / "c.jsonl"
    out.parent.mkdir()
    line = one_error_line(
        invoke("subset", f"jsonl:{bench}", "--drop-flagged", wrong, "--output", out)
    )
    assert str(wrong) in line and says in line and "Error" not in line, line
    assert "`medlens items audit --json`" in line
    assert list(out.parent.iterdir()) == []


def test_an_audit_of_runs_on_a_subset_cleans_the_subsets_source(tmp_path: Path) -> None:
    """The audit names the subset's content; subset.json beside it says it was cut from the
    source, so --drop-flagged on the source is no "audit of another benchmark"."""
    bench = write_bench(tmp_path / "bench", 80)
    cut = tmp_path / "cut" / "s.jsonl"
    made = invoke("subset", f"jsonl:{bench}", "--where", "task=a", "--output", cut)
    assert made.exit_code == 0, made.output
    runs = write_runs(tmp_path / "runs", cut, ABILITIES, overrides=OVERRIDES)
    report = tmp_path / "audit.json"
    report.write_text(json.dumps(audit_json(*runs)))
    flagged = {r["id"] for r in json.loads(report.read_text())["items"] if r["flagged"]}
    out = tmp_path / "clean" / "c.jsonl"
    result = invoke("subset", f"jsonl:{bench}", "--drop-flagged", report, "--output", out)
    assert result.exit_code == 0, result.output
    kept = {json.loads(line)["id"] for line in out.read_text().splitlines()}
    assert flagged and kept == {f"q{i}" for i in range(80)} - flagged


def test_audit_formats_and_output_file_as_report_and_board(
    audited: tuple[Path, list[Path], list[Path]], tmp_path: Path
) -> None:
    """`-f json` is `--json`, `-o FILE` writes the page (html is a file, as for report/board)."""
    _, runs, _ = audited
    as_format = invoke("items", "audit", *runs, "-f", "json")
    assert as_format.exit_code == 0, as_format.output
    assert json.loads(as_format.stdout) == audit_json(*runs)
    page = tmp_path / "out" / "audit.html"
    written = invoke("items", "audit", *runs, "-f", "html", "-o", page)
    assert written.exit_code == 0, written.output
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert "<html" not in written.stdout
    line = one_error_line(invoke("items", "audit", *runs, "--top", "0"))
    assert "--top 0" in line


def test_markdown_and_html_escape_model_text(
    audited: tuple[Path, list[Path], list[Path]], tmp_path: Path
) -> None:
    bench, _, _ = audited
    evil = {"q0": lambda k: "<script>alert(1)</script>" if k >= STRONG else "A"}
    runs = write_runs(tmp_path / "evil", bench, ABILITIES, overrides=evil, prefix="e")
    page = invoke("items", "audit", *runs, "--format", "html")
    assert page.exit_code == 0, page.output
    assert "<script>alert" not in page.stdout and "&lt;script&gt;" in page.stdout
    assert "http://127.0.0.1:8765/item/q0" in page.stdout
    md = invoke("items", "audit", *runs, "--format", "md")
    assert md.exit_code == 0 and "<script>" not in md.stdout


def test_audit_refusals(audited: tuple[Path, list[Path], list[Path]], tmp_path: Path) -> None:
    _, runs, probes = audited
    assert str(runs[0]) in one_error_line(invoke("items", "audit", *runs[:3]))
    line = one_error_line(invoke("items", "audit", *runs, probes[0]))
    assert str(probes[0]) in line and "--probe" in line
    other_bench = write_bench(tmp_path / "other", 50)
    other_runs = write_runs(tmp_path / "o", other_bench, ABILITIES[:5], prefix="o")
    bank = tmp_path / "bank.json"
    assert invoke("items", "fit", *other_runs, "--output", bank).exit_code == 0
    assert str(bank) in one_error_line(invoke("items", "audit", *runs, "--bank", bank))


def test_the_summary_of_items_without_a_modality_reads_as_a_sentence() -> None:
    """VQA-RAD records no modality: "Solved without the image, (none): 0.0% of 60 items." read
    as a typo."""
    from medlens.report.items_audit import summary_lines

    summary = {"n_items": 60, "flag_counts": {"key": 0}, "n_flagged": 0, "saturated_share": 0.0,
               "signal_to_noise": 1.0, "signal_to_noise_note": "note",
               "solved_without_image_share": {"(none)": {"share": 0.05, "n": 60},
                                              "CT": {"share": 0.1, "n": 10}}}  # fmt: skip
    lines = summary_lines({"summary": summary, "runs": {"a": 0.0}})
    assert "Solved without the image: 5.0% of 60 items (items without a modality)." in lines
    assert "Solved without the image, CT: 10.0% of 10 items." in lines
    assert not any("(none)" in line for line in lines)
