"""Small CLI promises (issue 36): --limit 0 refused, report --json, an HTML page never dumped on
a terminal, output folders created with a note, help without Python type names."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return named_run("demo", "random", tmp_path_factory.mktemp("runs"), "r", "--limit", "30")


def test_limit_zero_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    result = invoke_run("demo", "random", tmp_path / "runs", "zero", "--limit", "0")
    assert result.exit_code == 2, result.output
    assert "--limit 0: must be at least 1" in result.output
    assert not (tmp_path / "runs").exists()


def test_report_json_flag_is_format_json(demo_run: Path) -> None:
    flag = CliRunner().invoke(app, ["report", str(demo_run), "--json"])
    spelled = CliRunner().invoke(app, ["report", str(demo_run), "--format", "json"])
    assert flag.exit_code == 0 and flag.stdout == spelled.stdout
    assert json.loads(flag.stdout)["overall"]["n"] == 30
    both = CliRunner().invoke(app, ["report", str(demo_run), "--json", "-f", "md"])
    assert both.exit_code == 2 and "--json and --format md ask for two formats" in both.output


@pytest.mark.parametrize("command", ["report", "board"])
def test_an_html_page_is_not_written_to_a_terminal(demo_run: Path, command: str) -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "medlens", command, str(demo_run), "-f", "html"],
            stdout=follower, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 2, proc.stderr
    assert "--format html writes a whole web page: give --output FILE.html" in proc.stderr


def test_html_to_a_pipe_is_the_page(demo_run: Path) -> None:
    piped = CliRunner().invoke(app, ["report", str(demo_run), "-f", "html"])
    assert piped.exit_code == 0 and piped.stdout.lstrip().startswith("<!DOCTYPE html>")


def test_an_output_folder_is_created_with_a_note(demo_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "newdir" / "sub" / "x.md"
    result = CliRunner().invoke(app, ["report", str(demo_run), "-f", "md", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert f"note: created folder {target.parent}" in result.output
    assert target.read_text().startswith("#")
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    refused = CliRunner().invoke(app, ["report", str(demo_run), "-o", str(a_file / "x.md")])
    assert refused.exit_code == 2 and "is a file, not a folder" in refused.output


def test_help_shows_no_python_type_names() -> None:
    group = typer.main.get_command(app)
    runner = CliRunner()
    paths = [[name] for name in group.commands]  # type: ignore[attr-defined]
    paths += [["ratings", name] for name in group.commands["ratings"].commands]  # type: ignore[attr-defined]
    for path in paths:
        text = runner.invoke(app, [*path, "--help"], terminal_width=200).output
        assert "<bool>" not in text and "list[" not in text, path


@pytest.mark.parametrize(
    ("bench", "extra", "name"),
    [
        ("slake:data/slake?split=train&lang=en", {}, "slake_en_train-random"),
        ("slake:data/slake", {}, "slake-random"),
        (
            "demo",
            {"prompt": "vlmeval", "extract": "vlmeval"},
            "demo-random-prompt_vlmeval-read_vlmeval",
        ),
        ("demo", {"strategy": "few-shot:3+cot"}, "demo-random-few-shot_3_cot"),
    ],
)
def test_default_run_names_tell_splits_prompts_and_readings_apart(
    bench: str, extra: dict[str, str], name: str
) -> None:
    from cli_runs import run_options
    from medlens.execution.evaluate import default_name

    assert default_name(run_options(bench=bench, model="random", **extra)) == name


def test_a_train_split_run_does_not_collide_with_the_test_run(tmp_path: Path) -> None:
    from data_paths import realdata_dir

    folder = realdata_dir("slake")
    args = ["--model", "random", "--out", str(tmp_path), "--limit", "5"]
    for split in ("test", "train"):
        result = CliRunner().invoke(app, ["run", "--bench", f"slake:{folder}?split={split}", *args])
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slake_test-random", "slake_train-random"]


def test_runs_finds_the_runs_view_finds(demo_run: Path, tmp_path: Path) -> None:
    from medlens.report.viewer.catalog import find_runs

    studies = tmp_path / "studies"
    nested = named_run("demo", "first", studies / "s" / "runs", "first--demo", "--limit", "5")
    result = CliRunner().invoke(app, ["runs", str(studies), "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [run["name"] for run in listed] == ["s/runs/first--demo"]
    assert find_runs([studies]) == [nested.resolve()]


def test_check_never_says_all_passed_under_a_failing_readiness_line() -> None:
    result = CliRunner().invoke(app, ["check", "demo"], terminal_width=200)
    text = " ".join(result.output.split())
    assert "13. [fail] Rare categories" in text  # the demo has a one-item source
    assert "all checks passed; data readiness: item 13 fail (advice, not a failed check" in text


def test_a_text_only_benchmark_reports_no_images(tmp_path: Path) -> None:
    from data_paths import realdata_dir

    medqa = realdata_dir("medqa") / "phrases_no_exclude_test.jsonl"
    check = CliRunner().invoke(app, ["check", f"medqa:{medqa}"], terminal_width=200)
    assert "21. [pass] Erroneous data are corrected or removed: nothing to check" in check.output
    run = named_run(f"medqa:{medqa}", "random", tmp_path, "mq", "--limit", "300")
    report = CliRunner().invoke(app, ["report", str(run)], terminal_width=200)
    overall = next(line for line in report.output.splitlines() if line.startswith("│ 300 "))
    assert overall.split("│")[2].strip() == "–", overall  # not "300 images"
    results = json.loads((run / "results.json").read_text())
    assert results["counts"]["items_with_images"] == 0
    md = CliRunner().invoke(app, ["report", str(run), "-f", "md"])
    assert "| 300 |" in md.stdout and "| 300 | 300 |" not in md.stdout
    step1 = next(line for line in md.stdout.splitlines() if line.startswith("| step1"))
    assert step1.rstrip(" |").endswith("–"), step1  # the axis rows' images column too
    html = CliRunner().invoke(app, ["report", str(run), "-f", "html"])
    row = html.stdout.split('<td class="text">step1</td>')[1].split("</tr>")[0]
    assert row.endswith(">–</td>"), row


def test_xlsx_percentages_are_numbers_with_a_percent_format(demo_run: Path, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    report, board = tmp_path / "r.xlsx", tmp_path / "b.xlsx"
    assert (
        CliRunner()
        .invoke(app, ["report", str(demo_run), "-f", "xlsx", "-o", str(report)])
        .exit_code
        == 0
    )
    assert (
        CliRunner().invoke(app, ["board", str(demo_run), "-f", "xlsx", "-o", str(board)]).exit_code
        == 0
    )
    workbook = load_workbook(report)
    rates = {row[0].value: row[1] for row in workbook["deficiency"].iter_rows(min_row=2)}
    unparsed = rates["unparsed rate"]
    assert isinstance(unparsed.value, int | float) and unparsed.number_format == "0.0%"
    score = workbook["overall"]["B2"]
    assert workbook["overall"]["B1"].value == "score"
    assert isinstance(score.value, float) and score.number_format == "0.0%"
    models = load_workbook(board)["models"]
    headers = [cell.value for cell in models[1]]
    cell = models.cell(row=2, column=headers.index("score") + 1)
    assert isinstance(cell.value, float) and cell.number_format == "0.0%"
