"""MultiMedBench loaders on small fixtures in each release's published layout: the oracle
scores 100% from the CLI, a missing published column is one line with exit 2, and every
loader module declares its CARD."""

from __future__ import annotations

import csv
import gzip
import importlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.api import load_benchmark
from medlens.cli import app
from medlens.sources.mimic_iii import report_sections

REPORTS = [
    ("The lungs are clear. No pleural effusion or pneumothorax. Heart size is normal.",
     "No acute cardiopulmonary process."),
    ("Mild cardiomegaly. Small left pleural effusion with adjacent atelectasis.",
     "Cardiomegaly and small left effusion."),
    ("Right lower lobe opacity concerning for pneumonia. No pneumothorax.",
     "Right lower lobe pneumonia."),
]  # fmt: skip


def png(path: Path, shade: int = 90) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", (32, 24), shade).save(path)


def write_csv(path: Path, header: list[str], rows: list[list[str]], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if gz else open
    with opener(path, "wt", newline="", encoding="utf-8") as handle:  # type: ignore[operator]
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# ------------------------------------------------------------------ fixtures, one per release


def pad_ufes(root: Path) -> Path:
    header = ["patient_id", "lesion_id", "smoke", "age", "region", "diagnostic", "biopsed",
              "img_id"]  # fmt: skip
    rows = [["PAT_46", "881", "False", "55", "NECK", "BCC", "True", "PAT_46_881_939.png"],
            ["PAT_1545", "1867", "", "77", "FACE", "ACK", "False", "PAT_1545_1867_547.png"],
            ["PAT_46", "882", "False", "55", "CHEST", "NEV", "False", "PAT_46_882_940.png"]]  # fmt: skip
    for n, row in enumerate(rows):
        png(root / "images" / f"imgs_part_{n + 1}" / row[-1], 40 * n)
    return write_csv(root / "metadata.csv", header, rows)


def vindr_mammo(root: Path) -> Path:
    from pydicom.data import get_testdata_file

    dicom = Path(str(get_testdata_file("CT_small.dcm")))
    header = ["study_id", "series_id", "image_id", "laterality", "view_position", "height",
              "width", "breast_birads", "breast_density", "split"]  # fmt: skip
    rows = [["s1", "se1", "i1", "L", "CC", "3518", "2800", "BI-RADS 1", "DENSITY C", "test"],
            ["s1", "se1", "i2", "R", "MLO", "3518", "2800", "BI-RADS 4", "DENSITY C", "test"],
            ["s2", "se2", "i3", "L", "CC", "3518", "2800", "BI-RADS 2", "DENSITY B", "training"]]  # fmt: skip
    for row in rows:
        target = root / "images" / row[0] / f"{row[2]}.dicom"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dicom, target)
    return write_csv(root / "breast-level_annotations.csv", header, rows)


def cbis_ddsm(root: Path) -> Path:
    header = ["patient_id", "breast_density", "left or right breast", "image view",
              "abnormality id", "abnormality type", "mass shape", "mass margins", "assessment",
              "pathology", "subtlety", "image file path", "cropped image file path",
              "ROI mask file path"]  # fmt: skip
    mass = [["P_00016", "4", "LEFT", "CC", "1", "mass", "IRREGULAR", "SPICULATED", "5",
             "MALIGNANT", "5", "Mass-Test_P_00016_LEFT_CC/1.3.6.1/1.3.6.2/000000.dcm", "", ""],
            ["P_00017", "2", "RIGHT", "MLO", "1", "mass", "OVAL", "CIRCUMSCRIBED", "3",
             "BENIGN_WITHOUT_CALLBACK", "3", "Mass-Test_P_00017_RIGHT_MLO/1.3.6.3/1.3.6.4/000000.dcm", "", ""]]  # fmt: skip
    calc_header = [h if h != "breast_density" else "breast density" for h in header]
    calc_header[6:8] = ["calc type", "calc distribution"]
    calc = [["P_00038", "2", "LEFT", "CC", "1", "calcification", "PLEOMORPHIC", "CLUSTERED",
             "4", "BENIGN", "2", "Calc-Test_P_00038_LEFT_CC/1.3.6.5/1.3.6.6/000000.dcm", "", ""]]  # fmt: skip
    from pydicom.data import get_testdata_file

    dicom = Path(str(get_testdata_file("CT_small.dcm")))
    for row in [*mass, *calc]:
        (root / row[11]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dicom, root / row[11])
    write_csv(root / "calc_case_description_test_set.csv", calc_header, calc)
    return write_csv(root / "mass_case_description_test_set.csv", header, mass)


def mimic_cxr(root: Path) -> Path:
    split_rows = [["d1", "50000001", "10000032", "test"], ["d2", "50000001", "10000032", "test"],
                  ["d3", "50000002", "10000764", "test"], ["d4", "50000003", "11000011", "train"],
                  ["d5", "50000004", "12000022", "test"]]  # fmt: skip
    for dicom, study, subject, _ in split_rows:
        png(root / "files" / f"p{subject[:2]}" / f"p{subject}" / f"s{study}" / f"{dicom}.jpg")
    sections = [["s50000001", REPORTS[0][1], REPORTS[0][0], "", ""],
                ["s50000002", REPORTS[1][1], REPORTS[1][0], "", ""],
                ["s50000003", REPORTS[2][1], REPORTS[2][0], "", ""],
                ["s50000004", "No change.", "", "", ""]]  # no findings: left out  # fmt: skip
    write_csv(root / "mimic_cxr_sectioned.csv.gz",
              ["study", "impression", "findings", "last_paragraph", "comparison"], sections, gz=True)  # fmt: skip
    return write_csv(root / "mimic-cxr-2.0.0-split.csv",
                     ["dicom_id", "study_id", "subject_id", "split"], split_rows)  # fmt: skip


def iu_xray(root: Path) -> Path:
    reports = [["1", "normal", "normal", "", "Chest x-XXXX", "None.", REPORTS[0][0], REPORTS[0][1]],
               ["2", "Cardiomegaly", "Cardiomegaly", "", "Dyspnea", "", REPORTS[1][0], REPORTS[1][1]],
               ["3", "normal", "normal", "", "", "", "", "Normal chest."]]  # no findings  # fmt: skip
    projections = [["1", "1_IM-0001-4001.dcm.png", "Frontal"], ["1", "1_IM-0001-3001.dcm.png", "Lateral"],
                   ["2", "2_IM-0652-1001.dcm.png", "Frontal"], ["3", "3_IM-1384-1001.dcm.png", "Frontal"]]  # fmt: skip
    for _, name, _ in projections:
        png(root / "images" / "images_normalized" / name)
    write_csv(root / "indiana_projections.csv", ["uid", "filename", "projection"], projections)
    header = ["uid", "MeSH", "Problems", "image", "indication", "comparison", "findings",
              "impression"]  # fmt: skip
    return write_csv(root / "indiana_reports.csv", header, reports)


def mimic_iii(root: Path) -> Path:
    header = ["ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME",
              "CATEGORY", "DESCRIPTION", "CGID", "ISERROR", "TEXT"]  # fmt: skip
    note = ("[**2151-7-16**] 8:45 AM\n CHEST (PORTABLE AP)\nReason: eval for effusion\n"
            "FINDINGS:  {findings}\n\nIMPRESSION:  {impression}\n")  # fmt: skip
    rows = [[str(100 + n), str(200 + n), str(300 + n), "2151-07-16", "", "", "Radiology",
             "CHEST (PORTABLE AP)", "", "", note.format(findings=f, impression=i)]
            for n, (f, i) in enumerate(REPORTS)]  # fmt: skip
    rows.append(["999", "299", "399", "2151-07-16", "", "", "Nursing", "", "", "", "Pt stable."])
    rows.append(["998", "298", "398", "2151-07-16", "", "", "Radiology", "", "", "",
                 "IMPRESSION: No findings section here."])  # fmt: skip
    return write_csv(root / "NOTEEVENTS.csv", header, rows)


def pileup(root: Path) -> Path:
    rows = [["chr20:10001", "chr20_10001.png", "0", "SNV"], ["chr20:10002", "chr20_10002.png", "1", "SNV"],
            ["chr20:10003", "chr20_10003.png", "hom-alt", "indel"], ["chr20:10004", "chr20_10004.png", "het", "indel"]]  # fmt: skip
    for n, row in enumerate(rows):
        png(root / row[1], 60 * n)
    return write_csv(root / "labels.csv", ["locus", "image", "label", "variant_type"], rows)


LOADERS: dict[str, tuple[Callable[[Path], Path], int, str]] = {
    # spec name → (fixture writer, items in the default split, a required column)
    "pad-ufes": (pad_ufes, 3, "diagnostic"),
    "vindr-mammo": (vindr_mammo, 2, "breast_birads"),
    "cbis-ddsm": (cbis_ddsm, 3, "pathology"),
    "mimic-cxr": (mimic_cxr, 2, "split"),
    "iu-xray": (iu_xray, 2, "findings"),
    "mimic-iii": (mimic_iii, 3, "TEXT"),
    "pileup": (pileup, 4, "label"),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_oracle_scores_every_item(tmp_path: Path, name: str) -> None:
    writer, count, _ = LOADERS[name]
    writer(tmp_path / "data")
    items = list(load_benchmark(f"{name}:{tmp_path / 'data'}").items())
    assert len(items) == count
    run = named_run(f"{name}:{tmp_path / 'data'}", "oracle", tmp_path / "runs", name)
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    report = json.loads(result.output)
    assert report["overall"]["n"] == count
    assert report["overall"]["score"] == pytest.approx(1.0)
    kind = items[0].kind
    assert kind in report["metrics"]
    headline = "macro_f1" if kind == "classify" else "rouge_l"
    assert report["metrics"][kind][headline]["value"] == pytest.approx(1.0)


def _drop_column(table: Path, column: str) -> None:
    opener = gzip.open if table.suffix == ".gz" else open
    with opener(table, "rt", newline="", encoding="utf-8") as handle:  # type: ignore[operator]
        rows = list(csv.reader(handle))
    index = rows[0].index(column)
    write_csv(table, [c for i, c in enumerate(rows[0]) if i != index],
              [[c for i, c in enumerate(r) if i != index] for r in rows[1:]],
              gz=table.suffix == ".gz")  # fmt: skip


@pytest.mark.parametrize("name", list(LOADERS))
def test_missing_column_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    writer, _, column = LOADERS[name]
    table = writer(tmp_path / "data")
    _drop_column(table, column)
    result = invoke_run(f"{name}:{tmp_path / 'data'}", "oracle", tmp_path / "runs", "bad")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert table.name in lines[0] and f"missing column {column!r}" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs" / "bad").exists()


@pytest.mark.parametrize(
    "module",
    ["pad_ufes", "vindr_mammo", "cbis_ddsm", "mimic_cxr", "iu_xray", "mimic_iii", "pileup", "mmbu"],
)
def test_every_new_loader_declares_its_card(module: str) -> None:
    card = importlib.import_module(f"medlens.sources.{module}").CARD
    assert set(card) - {"access_note"} == {"licence", "access", "homepage", "citation"}
    assert card["access"] in ("open", "registration", "credentialed", "mixed")
    assert card["homepage"].startswith("https://") and card["citation"].startswith("@")


def test_release_fields_become_axes_and_patient_ids(tmp_path: Path) -> None:
    pad_ufes(tmp_path / "pad")
    items = {i.id: i for i in load_benchmark(f"pad-ufes:{tmp_path / 'pad'}").items()}
    first = items["PAT_46_881_939.png"]
    assert (first.kind, first.answer) == ("classify", "basal cell carcinoma")
    assert first.meta["patient_id"] == "PAT_46" and first.meta["diagnostic_code"] == "BCC"
    vindr_mammo(tmp_path / "vindr")
    training = list(load_benchmark(f"vindr-mammo:{tmp_path / 'vindr'}?split=training").items())
    assert [(i.id, i.answer, i.images[0].source) for i in training] == [
        ("i3", "BI-RADS 2", "dicom")
    ]
    cbis_ddsm(tmp_path / "cbis")
    cbis = list(load_benchmark(f"cbis-ddsm:{tmp_path / 'cbis'}?abnormality=mass").items())
    assert [i.answer for i in cbis] == ["malignant", "benign"]  # BENIGN_WITHOUT_CALLBACK: benign
    mimic_cxr(tmp_path / "cxr")
    (study,) = [
        i for i in load_benchmark(f"mimic-cxr:{tmp_path / 'cxr'}").items() if i.id == "s50000001"
    ]
    assert len(study.images) == 2 and study.meta["subject_id"] == "10000032"
    impressions = load_benchmark(f"mimic-cxr:{tmp_path / 'cxr'}?target=impression").items()
    assert {i.id for i in impressions} == {"s50000001", "s50000002", "s50000004"}


def test_mimic_iii_sections() -> None:
    text = "EXAM: CT\nFINDINGS:  Small   effusion.\nIMPRESSION: Effusion.\nNOTE: none"
    assert report_sections(text) == {
        "EXAM": "CT", "FINDINGS": "Small effusion.", "IMPRESSION": "Effusion.", "NOTE": "none",
    }  # fmt: skip


def test_patient_leakage_check_sees_vindr_exams_in_both_splits(tmp_path: Path) -> None:
    root = tmp_path / "vindr"
    table = vindr_mammo(root)
    with table.open("a", newline="") as handle:  # exam s1 also in training
        csv.writer(handle).writerow(
            ["s1", "se1", "i9", "L", "MLO", "1", "1", "BI-RADS 1", "DENSITY C", "training"]
        )
    shutil.copyfile(root / "images" / "s1" / "i1.dicom", root / "images" / "s1" / "i9.dicom")
    result = CliRunner().invoke(app, ["check", f"vindr-mammo:{root}", "--json"])
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["patient_leakage"]["status"] == "warn"
    assert checks["patient_leakage"]["data"]["shared"] == {"test/training": 1}


def test_variant_calling_precision_recall_f1(tmp_path: Path) -> None:
    """Sites: SNV ref (called het: FP), SNV het (called het: TP), indel hom-alt (called het:
    genotype mismatch, FP + FN), indel het (unread: FN)."""
    pileup(tmp_path / "pileup")
    replay = tmp_path / "p.csv"
    write_csv(replay, ["index", "prediction"], [
        ["chr20:10001", "heterozygous"], ["chr20:10002", "Heterozygous."],
        ["chr20:10003", "heterozygous"], ["chr20:10004", "I cannot tell from this image."],
    ])  # fmt: skip
    run = named_run(f"pileup:{tmp_path / 'pileup'}", f"replay:{replay}", tmp_path / "runs", "v")
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    calls = json.loads(result.output)["variant_calling"]
    assert (calls["SNV"]["tp"], calls["SNV"]["fp"], calls["SNV"]["fn"]) == (1, 1, 0)
    assert (calls["indel"]["tp"], calls["indel"]["fp"], calls["indel"]["fn"]) == (0, 1, 2)
    assert calls["SNV"]["precision"] == 0.5 and calls["SNV"]["recall"] == 1.0
    assert calls["SNV"]["f1"] == pytest.approx(2 / 3)
    assert calls["indel"]["f1"] == 0.0 and calls["all"]["n"] == 4
    assert calls["all"]["f1"] == pytest.approx(2 * 1 / (2 * 1 + 2 + 2))
    text = CliRunner().invoke(app, ["report", str(run)]).output
    assert "variant calls (genotype match): SNV F1 0.667" in " ".join(text.split())
