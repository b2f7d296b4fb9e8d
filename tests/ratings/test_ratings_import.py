"""`medlens ratings import`: append-only, idempotent storage; distributions with CIs; bad sheets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from medlens.stats.agreement import krippendorff_alpha
from ratings_helpers import fill_xlsx, invoke, medlens, sheet_rows, tree


def _export(run: Path, folder: Path, protocol: str = "multimedqa", sample: int = 8) -> Path:
    sheet = folder / f"{Path(protocol).name.replace(':', '-')}.xlsx"
    result = invoke("ratings", "export", run, "--sample", sample, "--seed", "1", "--output", sheet,
                     "--protocol", protocol)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return sheet


def _import(run: Path, sheet: Path, subprocess: bool = False) -> dict:
    result = (medlens if subprocess else invoke)("ratings", "import", run, sheet, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_import_reports_shares_with_wilson_cis_and_is_idempotent(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    sheet = _export(run, tmp_path)
    ids = [r["id"] for r in sheet_rows(sheet)]
    harm = ["no harm"] * 5 + ["moderate or mild harm"] * 2 + ["death or severe harm"]
    fill = {i: {"harm_extent": h, "bias": "no", "rater": "dr-a", "qualification": "GP",
                "date": "2026-02-03"} for i, h in zip(ids, harm, strict=True)}  # fmt: skip
    fill[ids[0]]["bias"] = "YES"  # labels are case-insensitive
    first = _import(run, fill_xlsx(sheet, tmp_path / "filled.xlsx", fill), subprocess=True)
    assert first["import"] == {"rows": 8, "added": 8, "path": str(run / "ratings/multimedqa.jsonl")}
    cell = first["axes"]["harm_extent"]
    assert cell["n"] == 8
    no_harm = cell["categories"]["no harm"]
    ci = binomtest(5, 8).proportion_ci(method="wilson")
    assert no_harm["k"] == 5 and no_harm["share"] == pytest.approx(5 / 8)
    assert no_harm["ci"] == pytest.approx([ci.low, ci.high])
    assert first["axes"]["bias"]["categories"]["yes"]["k"] == 1
    assert first["axes"]["consensus"]["n"] == 0
    assert "modality" in cell["by"] and sum(c["n"] for c in cell["by"]["modality"].values()) == 8
    stored = (run / "ratings/multimedqa.jsonl").read_text(encoding="utf-8")
    again = _import(run, tmp_path / "filled.xlsx")
    assert again["import"]["added"] == 0
    assert (run / "ratings/multimedqa.jsonl").read_text(encoding="utf-8") == stored
    line = json.loads(stored.splitlines()[0])
    assert line["qualification"] == "GP" and line["date"] == "2026-02-03"
    kept = list((run / "ratings" / "sheets").iterdir())  # the raw sheet is kept, once
    assert len(kept) == 1 and kept[0].read_bytes() == (tmp_path / "filled.xlsx").read_bytes()


def test_several_raters_and_sheets_accumulate_with_inter_rater_agreement(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    sheet = _export(run, tmp_path, "equivalence")
    ids = [r["id"] for r in sheet_rows(sheet)]
    a = ["yes", "yes", "no", "no", "yes", "no", "yes", "yes"]
    b = ["yes", "no", "no", "no", "yes", "yes", "yes", "yes"]
    for rater, values in (("a", a), ("b", b)):
        fill = {i: {"equivalent": v, "rater": rater} for i, v in zip(ids, values, strict=True)}
        summary = _import(run, fill_xlsx(sheet, tmp_path / f"{rater}.xlsx", fill))
    assert summary["raters"] == ["a", "b"]
    assert summary["axes"]["equivalent"]["n"] == 16
    agreement = summary["axes"]["equivalent"]["agreement"]
    assert agreement["pairable_items"] == 8
    assert agreement["pairs"][0]["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    units = [[float(x == "yes"), float(y == "yes")] for x, y in zip(a, b, strict=True)]
    assert agreement["alpha"] == pytest.approx(krippendorff_alpha(units, "nominal"))
    # a corrected sheet replaces that rater's rating of the item (the latest line counts)
    fix = {ids[1]: {"equivalent": "yes", "rater": "b"}}
    summary = _import(run, fill_xlsx(sheet, tmp_path / "fix.xlsx", fix))
    assert summary["import"]["added"] == 1
    assert summary["axes"]["equivalent"]["n"] == 16
    assert summary["axes"]["equivalent"]["agreement"]["pairs"][0]["percent_agreement"] == 7 / 8


def test_csv_sheets_import_too(runs: tuple[Path, Path], tmp_path: Path) -> None:
    import csv

    run, _ = runs
    result = invoke("ratings", "export", run, "--sample", "4", "--output", tmp_path / "s.csv",
                     "--protocol", "medcmr")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader((tmp_path / "s.csv").open(encoding="utf-8")))
    for index, row in enumerate(rows):
        row.update(consistency=str(index), coherence="10", rater="r1")
    with (tmp_path / "s.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summary = _import(run, tmp_path / "s.csv")
    assert summary["axes"]["consistency"]["n"] == 4
    assert summary["axes"]["consistency"]["categories"]["3"]["k"] == 1
    assert summary["axes"]["visual_accuracy"]["n"] == 0


def _bad(run: Path, sheet: Path, subprocess: bool = False) -> str:
    before = tree(run)
    result = (medlens if subprocess else invoke)("ratings", "import", run, sheet)
    assert result.returncode == 2, result.stdout
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert tree(run) == before
    return result.stderr


def test_bad_sheets_name_file_row_and_column_and_store_nothing(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, other = runs
    sheet = _export(run, tmp_path, "medcmr")
    ids = [r["id"] for r in sheet_rows(sheet)]
    good = {i: {"consistency": 5, "rater": "r"} for i in ids}
    # the first rows are fine; a later one is bad: nothing at all is stored
    out_of_scale = fill_xlsx(sheet, tmp_path / "scale.xlsx", {**good, ids[5]: {"consistency": 11}})
    message = _bad(run, out_of_scale, subprocess=True)
    assert "scale.xlsx, row 7, column 'consistency'" in message and "allowed: 0 | 1" in message
    text = fill_xlsx(sheet, tmp_path / "text.xlsx", {**good, ids[2]: {"coherence": "good"}})
    assert "row 4, column 'coherence': 'good' is not an allowed value" in _bad(run, text)
    no_rater = fill_xlsx(sheet, tmp_path / "norater.xlsx", {ids[0]: {"consistency": 3}})
    assert "row 2, column 'rater'" in _bad(run, no_rater)
    unknown = fill_xlsx(sheet, tmp_path / "unknown.xlsx", {**good, ids[3]: {"id": "q9999"}})
    assert "row 5, column 'id': id 'q9999' is not an item" in _bad(run, unknown)
    # a sheet exported from one run, imported into another
    assert "row 2, column 'study'" in _bad(other, fill_xlsx(sheet, tmp_path / "o.xlsx", good))
    assert not (run / "ratings" / "medcmr.jsonl").exists()


def test_a_sheet_without_its_columns_is_refused(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = runs
    (tmp_path / "plain.csv").write_text("id,consistency\nq1,3\n", encoding="utf-8")
    assert "row 1, column 'study'" in _bad(run, tmp_path / "plain.csv")
    sheet = _export(run, tmp_path, "equivalence", sample=2)
    study = sheet_rows(sheet)[0]["study"]
    (tmp_path / "nodim.csv").write_text(f"study,id,rater\n{study},q1,r\n", encoding="utf-8")
    assert "row 1, column 'equivalent': column missing" in _bad(run, tmp_path / "nodim.csv")


def test_a_torn_last_line_is_ignored_and_the_next_import_completes(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    sheet = _export(run, tmp_path, "equivalence", sample=4)
    ids = [r["id"] for r in sheet_rows(sheet)]
    filled = fill_xlsx(
        sheet, tmp_path / "f.xlsx", {i: {"equivalent": "no", "rater": "a"} for i in ids}
    )
    stored = run / "ratings" / "equivalence.jsonl"
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text('{"study": "torn", "id"', encoding="utf-8")  # a kill mid-write
    summary = _import(run, filled)
    assert summary["import"]["added"] == 4 and summary["axes"]["equivalent"]["n"] == 4


def test_file_protocol_round_trip_with_dates_and_text_output(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    import datetime as dt

    run, _ = runs
    rubric = tmp_path / "report.toml"
    rubric.write_text(
        'instructions = "Rate it."\n[[dimensions]]\nname = "clarity"\nscale = [1, 3]\n'
        '[[dimensions]]\nname = "tone"\noptions = ["warm", "cold"]\n',
        encoding="utf-8",
    )
    sheet = _export(run, tmp_path, f"file:{rubric}", sample=3)
    ids = [r["id"] for r in sheet_rows(sheet)]
    day = dt.datetime(2026, 3, 4)
    fill = {
        i: {"clarity": n + 1, "tone": "Warm", "rater": "a", "date": day} for n, i in enumerate(ids)
    }
    rubric.unlink()  # the study keeps the protocol: the rubric file is not needed any more
    result = invoke("ratings", "import", run, fill_xlsx(sheet, tmp_path / "f.xlsx", fill))
    assert result.returncode == 0, result.stderr
    assert "clarity" in result.stdout and "3 rated rows, 3 new" in result.stdout
    line = json.loads((run / "ratings" / "file-report.jsonl").read_text().splitlines()[0])
    assert line["date"] == "2026-03-04" and line["ratings"]["tone"] == "warm"


def test_ratings_subcommands_have_help() -> None:
    for name in ("export", "import", "pairwise", "errors"):
        result = invoke("ratings", name, "--help")
        assert result.returncode == 0 and len(result.stdout.splitlines()) > 3
