"""Human-anchored judged scores: `agreement --human --json` gains "calibrated" (PPI++ over the
judge's items), writes the judge's agreement file, and every judged table then carries the
calibrated score beside the raw one and the label (uncalibrated / weak agreement)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app
from medlens.stats.ppi import ppi_mean, with_wilson_envelope


def cli(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def human_file(path: Path, labels: dict[str, bool]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "rater", "equivalent"])
        writer.writerows(
            [(item, "dr1", "yes" if value else "no") for item, value in labels.items()]
        )
    return path


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    run = finished_run(tmp_path, n_open=40, n_closed=4)
    with serve(judge_config(JudgeReplies())) as server:
        result = cli("judge", run, "--judge", judge_spec(server.base_url), "--protocol",
                     "equivalence", "--scope", "all", "--name", "eq")  # fmt: skip
        assert result.exit_code == 0, result.output
    return run


def verdicts(run: Path) -> dict[str, float]:
    return {line["id"]: line["score"] for line in judgement_lines(run / "judges" / "eq")}


def test_calibrated_score_is_ppi_over_the_judges_items(judged: Path, tmp_path: Path) -> None:
    f = verdicts(judged)
    # people disagree with the judge on a few items: it is too lenient with paraphrases
    labelled = sorted(f)[::3]
    human = {item: bool(f[item]) if k % 4 else not f[item] for k, item in enumerate(labelled)}
    path = human_file(tmp_path / "human.csv", human)
    result = cli("agreement", judged, "--judge", "eq", "--human", path, "--json")
    assert result.exit_code == 0, result.output
    calibrated = json.loads(result.output)["calibrated"]
    assert {"score", "ci", "n_human", "n_judged", "method"} <= set(calibrated)
    rest = [i for i in sorted(f) if i not in human]
    y = [float(human[i]) for i in labelled]
    expected = with_wilson_envelope(ppi_mean(y, [f[i] for i in labelled], [f[i] for i in rest]))
    assert calibrated["score"] == pytest.approx(expected.estimate)
    assert calibrated["ci"] == pytest.approx(list(expected.ci))
    assert (calibrated["n_human"], calibrated["n_judged"]) == (len(labelled), 40)
    assert calibrated["raw"] == pytest.approx(sum(f.values()) / 40)
    assert "PPI++" in calibrated["method"] and "iid" in calibrated["method"]
    assert "Wilson-cc" in calibrated["method"]  # 0/1 labels and verdicts
    stored = json.loads((judged / "judges" / "eq" / "agreement.json").read_text())
    assert stored["calibrated"] == calibrated and stored["label"] in (
        "calibrated",
        "weak agreement",
    )
    entry = json.loads(cli("report", judged, "--format", "json").output)["judges"]["eq"]
    assert entry["calibration"]["calibrated"]["score"] == pytest.approx(expected.estimate)
    text = cli("report", judged, "--format", "md").output
    assert f"overall, calibrated on {len(labelled)} human labels (PPI)" in text
    assert f"{100 * expected.estimate:.1f}" in text


def test_labels_uncalibrated_weak_and_stale(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=0)
    replies = JudgeReplies("down")
    with serve(judge_config(replies)) as server:
        spec = judge_spec(server.base_url, max_retries="0")
        assert cli("judge", run, "--judge", spec, "--protocol", "equivalence", "--name",
                   "eq").exit_code == 0  # fmt: skip
        entry = json.loads(cli("report", run, "--format", "json").output)["judges"]["eq"]
        assert entry["calibration"]["label"] == "uncalibrated"
        assert "uncalibrated" in cli("report", run).output
        # people who disagree with the (rule-settled) verdicts: κ far below 0.6
        f = {line["id"]: line["score"] for line in judgement_lines(run / "judges" / "eq")
             if line["status"] == "ok"}  # fmt: skip
        human = human_file(
            tmp_path / "h.csv", {i: not bool(v) for i, v in f.items()} | {"o10": True}
        )
        agreement = cli("agreement", run, "--judge", "eq", "--human", human)
        assert agreement.exit_code == 0, agreement.output
        assert "judge label: weak agreement" in agreement.output
        entry = json.loads(cli("report", run, "--format", "json").output)["judges"]["eq"]
        assert entry["calibration"]["label"] == "weak agreement"
        replies.mode = "verdict"  # the judge runs again: its verdicts change
        assert cli("judge", run, "--judge", spec, "--protocol", "equivalence", "--name",
                   "eq").exit_code == 0  # fmt: skip
    entry = json.loads(cli("report", run, "--format", "json").output)["judges"]["eq"]
    assert entry["calibration"]["label"] == "uncalibrated"
    assert "made for other verdicts" in entry["calibration"]["reason"]


def test_a_human_file_covering_no_judged_item_is_refused(judged: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in (judged / "judges" / "eq").iterdir())
    path = human_file(tmp_path / "closed.csv", {"c0": True, "c1": False})
    result = cli("agreement", judged, "--judge", "eq", "--human", path, "--json")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "cover none of the 40 items this judge scored" in result.output
    assert sorted(p.name for p in (judged / "judges" / "eq").iterdir()) == before


def test_the_label_reader_for_other_tables(judged: Path, tmp_path: Path) -> None:
    from medlens.judges.calibration import judge_calibration

    assert judge_calibration(judged, "eq")["label"] == "uncalibrated"
    f = verdicts(judged)
    path = human_file(tmp_path / "h.csv", {i: bool(v) for i, v in list(f.items())[::2]})
    assert cli("agreement", judged, "--judge", "eq", "--human", path).exit_code == 0
    found = judge_calibration(judged, "eq")
    entry = json.loads(cli("report", judged, "--format", "json").output)["judges"]["eq"]
    assert found == entry["calibration"] and found["label"] == "calibrated"


def test_board_prints_the_calibrated_score_beside_the_raw_one(judged: Path, tmp_path: Path) -> None:
    """`board --score judge:NAME --human FILE`: the same PPI estimate as `agreement`, per run,
    without writing the agreement file; --human without a judge source is refused."""
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(judged, twin)
    f = verdicts(judged)
    labelled = sorted(f)[::2]
    path = human_file(tmp_path / "human.csv", {item: bool(f[item]) for item in labelled})
    one_per_run = ("--human", path, "--human", path)
    result = cli("board", judged, twin, "--score", "judge:eq", *one_per_run, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["calibrated"]
    rest = [i for i in sorted(f) if i not in labelled]
    expected = with_wilson_envelope(
        ppi_mean([f[i] for i in labelled], [f[i] for i in labelled], [f[i] for i in rest])
    )
    assert [row["run"] for row in found["runs"]] == [judged.name, "twin"]
    for row in found["runs"]:
        assert row["score"] == pytest.approx(expected.estimate)
        assert row["raw"] == pytest.approx(sum(f.values()) / len(f))
        assert row["n_human"] == len(labelled)
    assert found["label"] == "calibrated"
    assert not (judged / "judges" / "eq" / "agreement.json").exists()
    text = cli("board", judged, twin, "--score", "judge:eq", *one_per_run).output
    assert "calibrated on human labels (PPI)" in text
    refused = cli("board", judged, twin, *one_per_run)
    assert refused.exit_code == 2 and "--score judge:NAME" in refused.output
