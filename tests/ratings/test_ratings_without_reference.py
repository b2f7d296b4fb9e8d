"""HealthSearchQA has no reference answers: the report's hint exports a sheet people can rate
(MultiMedQA's protocol), and a protocol that compares with the reference is refused clearly."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app


def test_the_hint_for_healthsearchqa_rates_without_a_reference(tmp_path: Path) -> None:
    csv = tmp_path / "all.csv"
    csv.write_text("id,question\n1,Are boils curable?\n2,Is acne contagious?\n", encoding="utf-8")
    run = named_run(f"healthsearchqa:{csv}", "first", tmp_path / "runs", "h")
    report = CliRunner().invoke(app, ["report", str(run)], terminal_width=300)
    hint = f"medlens ratings export {run} --sample 100 --output ratings.xlsx"
    assert hint in report.output.replace("\n", "")
    sheet = tmp_path / "ratings.xlsx"
    followed = CliRunner().invoke(app, ["ratings", "export", str(run), "--sample", "100",
                                        "--output", str(sheet)])  # fmt: skip
    assert followed.exit_code == 0, followed.output
    text = " ".join(
        str(c.value) for ws in load_workbook(sheet) for row in ws.iter_rows() for c in row
    )
    assert "equivalent" not in text and "MultiMedQA" in text
    refused = CliRunner().invoke(app, ["ratings", "export", str(run), "--sample", "100",
                                       "--output", str(tmp_path / "eq.xlsx"),
                                       "--protocol", "equivalence"])  # fmt: skip
    assert refused.exit_code == 2
    assert "--protocol equivalence compares each answer with its reference answer" in refused.output
    assert "--protocol multimedqa" in refused.output and not (tmp_path / "eq.xlsx").exists()
