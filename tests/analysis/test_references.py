"""Published reference tables (shipped, and a user's FILE.csv) and `medlens calibrate`: the
tables as the papers print them, like-for-like checks (split, selection, item set) with their
one-line refusals, and `--allow-partial`'s label."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import REPO_ROOT
from medlens.analysis.reference_tables import (
    REFERENCE_NAMES,
    find_row,
    load_pair_table,
    load_reference,
)
from medlens.analysis.references import calibrate, selection_text
from medlens.cli import app
from medlens.core.errors import InputError, MedlensError, SpecError
from provenance_fixture import write_choice_benchmark, write_gmai_choice_tsv, write_replay

SHARED = REPO_ROOT.parent / "shared" / "references"


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_every_table_loads_with_a_citation_and_scores_in_range(name: str) -> None:
    table = load_reference(name)
    assert table.rows and table.citation and table.layout
    for row in table.rows:
        assert table.source_of(row) and row.split in ("val", "test") and row.selection == ""
        assert all(v is None or -1.0 <= v <= 1.0 for v in row.values.values())


def test_gmai_rows_are_the_published_leaderboard() -> None:
    val = {row.model: row.values["overall"] for row in load_reference("gmai-val").rows}
    test = {row.model: row.values["overall"] for row in load_reference("gmai-test").rows}
    assert val["GPT-4o"] == pytest.approx(0.5353) and test["GPT-4o"] == pytest.approx(0.5396)
    assert val["Random"] == pytest.approx(0.2570) and test["Random"] == pytest.approx(0.2594)
    assert len(val) == len(test) == 30


def test_medcmr_and_mmbu_hold_the_full_main_tables() -> None:
    medcmr = load_reference("medcmr")
    assert len(medcmr.rows) == 7 and medcmr.columns == (
        "SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI", "mcq_all", "open_all")  # fmt: skip
    gpt5 = find_row(medcmr, "gpt-5")
    assert gpt5.values["SOD"] == pytest.approx(0.6608) and gpt5.values["open_all"] == pytest.approx(
        0.4870
    )
    assert find_row(medcmr, "Medgemma-4B").text["medical"] == "yes"
    assert medcmr.n_items == 20653 and medcmr.column_items == {"mcq_all": 16655, "open_all": 3998}
    mmbu = load_reference("mmbu")
    assert len(mmbu.rows) == 18 and len(mmbu.columns) == 12  # 17 models + Random, 4 tasks × 3
    random = find_row(mmbu, "Random").values
    assert [random[f"{t}_closed"] for t in ("unanchored", "box_anchored", "mask_anchored", "detection")] == [
        0.199, 0.162, 0.183, 0.172]  # fmt: skip
    assert random["unanchored_open"] is None
    assert find_row(mmbu, "Qwen2.5-VL-3B").values["detection_delta"] == pytest.approx(-0.002)
    pairs = load_pair_table()
    assert len(pairs) == 6 and (pairs[0].adapted, pairs[0].change) == ("MedGemma-4B", 0.136)


@pytest.mark.parametrize(
    ("name", "shared"), [("medcmr", "medcmr_main.csv"), ("mmbu", "mmbu_main.csv")]
)
def test_shipped_tables_equal_the_transcribed_csvs(name: str, shared: str) -> None:
    path = SHARED / shared
    if not path.is_file():
        pytest.skip(f"{path} is absent (it ships beside the repository in shared/)")
    table = load_reference(name)
    scale = 100.0 if name == "medcmr" else 1.0
    for raw in csv.DictReader(path.open(encoding="utf-8")):
        row = find_row(table, raw["model"])
        for column in table.columns:
            expected = float(raw[column]) / scale if raw[column] else None
            assert row.values[column] == (pytest.approx(expected) if expected is not None else None)


def write_table(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_users_table_is_read_and_bad_ones_name_line_and_column(tmp_path: Path) -> None:
    table = load_reference(str(write_table(tmp_path / "mine.csv", "model,split,selection,source,overall,n_items\n"
                                           "Mine,val,,my lab,61.5,100\nTheirs,val,,,,100\n")))  # fmt: skip
    assert table.layout == "gmai" and table.scale == 100.0 and table.benchmarks == ()
    assert find_row(table, "mine").values["overall"] == pytest.approx(0.615)
    with pytest.raises(InputError, match=r"nomodel\.csv, line 1: no 'model' column"):
        load_reference(
            str(write_table(tmp_path / "nomodel.csv", "name,split,selection,overall\nx,val,,1\n"))
        )
    with pytest.raises(
        InputError, match=r"text\.csv, line 3, column 'overall': 'high' is not a number"
    ):
        load_reference(
            str(
                write_table(
                    tmp_path / "text.csv", "model,split,selection,overall\na,val,,1\nb,val,,high\n"
                )
            )
        )
    with pytest.raises(InputError, match=r"twice\.csv, line 3, column 'model': 'a' again"):
        load_reference(
            str(
                write_table(
                    tmp_path / "twice.csv", "model,split,selection,overall\na,val,,1\na,val,,2\n"
                )
            )
        )
    with pytest.raises(SpecError, match="unknown reference"):
        load_reference("gmai")
    with pytest.raises(
        InputError,
        match=r"nocount\.csv, line 2: no item set: give n_items, content_hash, official_md5",
    ):
        load_reference(
            str(write_table(tmp_path / "nocount.csv", "model,split,selection,overall\na,val,,1\n"))
        )


def _gmai_run(tmp_path: Path, n: int, correct: int, *extra: str, name: str = "r") -> Path:
    bench = write_gmai_choice_tsv(tmp_path / "data", n)
    replay = write_replay(tmp_path / "data", n, correct)
    return named_run(f"gmai:{bench}", f"replay:{replay}", tmp_path / "runs", name, *extra)


def official_table(tmp_path: Path, run: Path, *rows: str) -> str:
    """A table whose rows were computed on exactly the run's file (its MD5), read as VLMEvalKit reads."""
    from medlens.sources.gmai_files import file_md5

    digest = file_md5(
        Path(
            json.loads((run / "run.json").read_text())["spec"]["benchmark"]["spec"].partition(":")[
                2
            ]
        )
    )
    lines = "".join(f"{row},{digest}\n" for row in rows)
    return str(
        write_table(
            tmp_path / "official.csv", f"model,split,selection,overall,official_md5\n{lines}"
        )
    )


def test_a_gmai_shaped_file_that_is_not_the_official_one_is_refused(tmp_path: Path) -> None:
    """The issue's case: any file shaped like GMAI-MMBench VAL used to 'reproduce' the leaderboard."""
    run = _gmai_run(tmp_path, 100, 54)
    with pytest.raises(
        MedlensError,
        match=r"not the official file \(GMAI_mm_bench_VAL.tsv: MD5 differs\); "
        r"the published rows are on GMAI-MMBench_VAL",
    ):
        calibrate(run, "gmai-val", "GPT-4o")
    labelled = calibrate(run, "gmai-val", "GPT-4o", allow_partial=True)
    assert labelled["reproduces"] is False and labelled["not_comparable"].startswith(
        "not comparable: not the official file"
    )
    board = CliRunner().invoke(app, ["board", str(run), "--reference", "gmai-val"])
    assert board.exit_code == 2 and "not the official file" in board.output
    for fmt in ("text", "md", "html"):
        shown = CliRunner().invoke(
            app, ["board", str(run), "--reference", "gmai-val", "--allow-partial", "--format", fmt]
        )
        assert shown.exit_code == 0 and "not comparable: not the official file" in shown.output, fmt


def test_calibrate_reproduces_within_the_tolerance_and_the_interval(tmp_path: Path) -> None:
    run = _gmai_run(tmp_path, 100, 54)
    table = official_table(
        tmp_path, run, "GPT-4o,val,,53.53", "Random,val,,25.70", "Near,val,,52.5"
    )
    result = calibrate(run, table, "GPT-4o")
    lo, hi = stats.binomtest(54, 100).proportion_ci(method="wilsoncc")
    assert result["run_score"]["ci"] == pytest.approx([lo, hi])
    assert result["difference"] == pytest.approx(0.54 - 0.5353)
    assert result["difference_ci"] == pytest.approx([lo - 0.5353, hi - 0.5353])
    assert result["reproduces"] is True and result["comparable"] is True
    assert (
        result["within_tolerance"] is True
        and result["inside_ci"] is True
        and result["tolerance"] == 0.02
    )
    assert result["reference"]["column"] == "overall" and result["score_source"] == "rules"
    far = calibrate(run, table, "random")
    assert far["reproduces"] is False and far["difference"] == pytest.approx(0.54 - 0.2570)
    near = calibrate(run, table, "Near")  # inside the CI, but 1.5 points off: within ±2, reproduces
    assert near["inside_ci"] and near["within_tolerance"] and near["reproduces"]
    text = (
        CliRunner()
        .invoke(app, ["calibrate", str(run), "--reference", table, "--as", "GPT-4o"])
        .output
    )
    assert (
        "within ±2 points of the published number: yes (+0.5 points); published number inside the run's 95% CI: yes"
        in text
    )


def test_a_wide_interval_alone_does_not_reproduce(tmp_path: Path) -> None:
    run = _gmai_run(tmp_path, 30, 16)  # 53.3% on 30 items: a CI of ±18 points
    table = official_table(tmp_path, run, "Far,val,,45.0")
    result = calibrate(run, table, "Far")
    assert (
        result["inside_ci"] is True
        and result["within_tolerance"] is False
        and result["reproduces"] is False
    )


def test_a_val_run_against_the_test_column_is_refused(tmp_path: Path) -> None:
    run = _gmai_run(tmp_path, 40, 20)
    with pytest.raises(MedlensError, match="split val, the published rows are on test"):
        calibrate(run, "gmai-test", "GPT-4o")
    labelled = calibrate(run, "gmai-test", "GPT-4o", allow_partial=True)
    assert labelled["not_comparable"].startswith(
        "not comparable: split val, the published rows are on test; "
    )
    assert labelled["reproduces"] is False


def test_a_slice_or_a_partial_run_is_not_the_published_number(tmp_path: Path) -> None:
    sliced = _gmai_run(tmp_path, 60, 30, "--sample", "38", name="sampled")
    with pytest.raises(
        MedlensError, match="selection sample 38, seed 0, published on the whole split"
    ):
        calibrate(sliced, "gmai-val", "GPT-4o")
    limited = _gmai_run(tmp_path, 60, 30, "--limit", "20", name="limited")
    with pytest.raises(MedlensError, match="20 of 60 items scored"):
        calibrate(limited, "gmai-val", "GPT-4o")


def test_a_benchmark_of_another_family_is_refused(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 10)
    replay = write_replay(tmp_path / "data", 10, 5)
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "j")
    with pytest.raises(MedlensError, match="a jsonl run beside published gmai/vlmeval scores"):
        calibrate(run, "gmai-val", "GPT-4o")


def _medcmr_run(tmp_path: Path) -> Path:
    """20 SOD questions in Med-CMR's released schema; the first 12 answered right."""
    from source_files import write_image

    data = tmp_path / "data"
    write_image(data / "dataset" / "imgs" / "0.png")
    options = {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"}
    rows = [{"index": i, "question": f"Which finding {i}?", **options, "answer": "A", "task": "SOD",
             "image_path": "dataset/imgs/0.png", "visual_description": "", "subtype": "",
             "question type": "", "modality": "CT", "organ system": ""} for i in range(20)]  # fmt: skip
    (data / "dataset" / "cmed.copy.mcq_cate.cleaned.json").write_text(json.dumps(rows))
    replay = data / "predictions.csv"
    replay.write_text(
        "index,prediction\n" + "".join(f"mcq-{i},{'A' if i < 12 else 'B'}\n" for i in range(20))
    )
    return named_run(f"medcmr:{data}", f"replay:{replay}", tmp_path / "runs", "m")


def test_calibrate_a_medcmr_column_scores_only_its_items(tmp_path: Path) -> None:
    run = _medcmr_run(tmp_path)
    with pytest.raises(MedlensError, match="20 items, the published set has 20653"):
        calibrate(run, "medcmr", "GPT-5", column="SOD")
    result = calibrate(run, "medcmr", "GPT-5", column="SOD", allow_partial=True)
    assert result["run_score"]["n"] == 20 and result["run_score"]["score"] == pytest.approx(0.6)
    assert result["difference"] == pytest.approx(0.6 - 0.6608)
    assert "20 items in column SOD" not in result["not_comparable"]
    mcq = calibrate(run, "medcmr", "GPT-5", column="mcq_all", allow_partial=True)
    assert "20 items in column mcq_all, the published column has 16655" in mcq["not_comparable"]
    with pytest.raises(SpecError, match="no item has kind=open"):
        calibrate(run, "medcmr", "GPT-5", column="open_all", allow_partial=True)
    with pytest.raises(SpecError, match="--column 'nope': GPT-5 in medcmr has SOD, FDD"):
        calibrate(run, "medcmr", "GPT-5", column="nope")


def test_selection_text_names_every_way_items_were_chosen() -> None:
    spec = {"benchmark": {"spec": "mmbu:data?template=none&split=test"},
            "selection": {"recipe": {"where": "modality=CT"}},
            "subset": {"recipe": {"sample": 100, "stratify": ["task"], "seed": 1}}}  # fmt: skip
    assert selection_text(spec, "task=x") == (
        "loader options template=none; subset: sample 100 stratified by task, seed 1; "
        "where modality=CT; board --where task=x"
    )
    assert selection_text({"benchmark": {"spec": "gmai:x.tsv"}}) == ""


def test_calibrate_cli_json_labels_and_one_line_refusals(tmp_path: Path) -> None:
    run = _gmai_run(tmp_path, 100, 54)
    table = official_table(tmp_path, run, "GPT-4o,val,,53.53")
    command = [sys.executable, "-m", "medlens", "calibrate", str(run), "--reference"]
    ok = subprocess.run([*command, table, "--as", "GPT-4o", "--json"],
                        capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(ok.stdout)["reproduces"] is True
    bad = subprocess.run(
        [*command, "gmai-test", "--as", "GPT-4o"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"medlens: error: {run}: not comparable with reference gmai-test: split val, the published rows are on test; "
    )
    assert lines[0].endswith("(--allow-partial keeps it, labelled 'not comparable')")
    text = CliRunner().invoke(app, ["calibrate", str(run), "--reference", "gmai-test", "--as", "GPT-4o",
                                    "--allow-partial"]).output  # fmt: skip
    assert (
        "not comparable: split val, the published rows are on test; " in text
        and "no verdict on reproduction" in text
    )
    mine = write_table(
        tmp_path / "mine.csv", "model,split,selection,overall,n_items\nMine,val,,70,100\n"
    )
    own = CliRunner().invoke(
        app, ["calibrate", str(run), "--reference", str(mine), "--as", "Mine", "--json"]
    )
    assert own.exit_code == 0 and json.loads(own.stdout)["difference"] == pytest.approx(0.54 - 0.70)


def test_an_official_item_set_read_otherwise_is_labelled_with_its_sensitivity(
    tmp_path: Path,
) -> None:
    from medlens.analysis.reference_tables import load_reference as load
    from medlens.analysis.references import DIFFERENT_PROTOCOL, protocol_differences

    table = load("gmai-val")
    assert (
        protocol_differences(table, {"prompt": "vlmeval", "extract": "vlmeval", "probe": None})
        == []
    )
    differences = protocol_differences(
        table, {"prompt": "medlens", "extract": "medlens", "probe": None}
    )
    assert differences == [
        "prompt 'medlens' (published: 'vlmeval')",
        "extract 'medlens' (published: 'vlmeval')",
    ]
    assert DIFFERENT_PROTOCOL == "comparable item set, different reading protocol"


def test_a_subset_file_against_the_whole_split_is_refused(tmp_path: Path) -> None:
    bench = write_gmai_choice_tsv(tmp_path / "data", 60)
    made = CliRunner().invoke(app, ["subset", f"gmai:{bench}", "--output", str(tmp_path / "sub" / "sub.tsv"),
                                    "--sample", "38"])  # fmt: skip
    assert made.exit_code == 0, made.output
    replay = write_replay(tmp_path / "data", 60, 30)
    run = named_run(
        f"gmai:{tmp_path / 'sub' / 'sub.tsv'}", f"replay:{replay}", tmp_path / "runs", "sub"
    )
    with pytest.raises(
        MedlensError, match=r"selection subset: sample 38, seed 0, published on the whole split"
    ):
        calibrate(run, "gmai-val", "GPT-4o")
    result = CliRunner().invoke(app, ["board", str(run), "--reference", "gmai-val"])
    assert result.exit_code == 2 and "selection subset: sample 38" in result.output


def test_a_bad_reference_file_is_one_line_for_board_and_calibrate(tmp_path: Path) -> None:
    run = _gmai_run(tmp_path, 20, 10)
    bad = write_table(tmp_path / "bad.csv", "name,split,selection,overall\nx,val,,50\n")
    for args in (["board", str(run), "--reference", str(bad)],
                 ["calibrate", str(run), "--reference", str(bad), "--as", "x"]):  # fmt: skip
        result = CliRunner().invoke(app, args)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and lines == [f"medlens: error: {bad}, line 1: no 'model' column "
                                                   "(columns: name, split, selection, overall)"]  # fmt: skip


def test_an_mmbu_run_on_the_public_split_is_named_and_not_the_published_evaluation() -> None:
    from medlens.analysis.references import comparability

    table = load_reference("mmbu")
    assert {row.n_items for row in table.rows} == {77358}
    spec = {
        "benchmark": {"name": "mmbu", "split": "test", "spec": "mmbu:/data/public", "n_items": 3103}
    }
    reasons = comparability(table, spec, 3103, {"task", "answer_type"})
    assert reasons == [
        "3103 items (the public split (mmbu/mmbu-public, 3,103 open rows)), the published set has 77358"
    ]
    medcmr = load_reference("medcmr")
    assert {row.n_items for row in medcmr.rows} == {20653} and medcmr.column_items == {
        "mcq_all": 16655,
        "open_all": 3998,
    }
    gmai = load_reference("gmai-test")
    assert all(len(row.text["official_md5"].split()) == 11 for row in gmai.rows)
