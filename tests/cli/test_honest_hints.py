"""Hints that work: permanent errors name --retry-errors and the bad file, `run` decodes every
image fully before sending it (as `check` does), and unscored sets point at `ratings export`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import invoke_run, named_run
from loopback_server import ServerConfig, serve
from medlens.cli import app

runner = CliRunner()


def truncated_bench(folder: Path, n_items: int = 6) -> Path:
    """A benchmark whose image 0 is a PNG cut short after its header (Pillow reads its size)."""
    bench = write_jsonl_benchmark(folder, n_items, n_images=3)
    broken = folder / "images" / "0.png"
    broken.write_bytes(broken.read_bytes()[:60])
    return bench


def test_run_decodes_images_fully_before_sending(tmp_path: Path) -> None:
    bench = truncated_bench(tmp_path)
    with serve(ServerConfig()) as server:
        result = invoke_run(f"jsonl:{bench}", f"openai:m?base_url={server.base_url}",
                            tmp_path / "runs", "r", "--max-error-rate", "1")  # fmt: skip
        sent = server.stats["requests"]
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (tmp_path / "runs" / "r" / "records.jsonl").open()]
    bad = [r for r in records if r["error"]]
    assert {r["id"] for r in bad} == {"q0", "q3"}  # the items on image 0
    assert {r["error"]["type"] for r in bad} == {"image"}
    assert "0.png: not a decodable image" in bad[0]["error"]["message"]
    assert sent == 4  # the truncated image never reached the server
    check = runner.invoke(app, ["check", f"jsonl:{bench}"])
    assert "0.png" in check.output  # check and run agree


def test_permanent_errors_name_retry_errors_and_the_file(tmp_path: Path) -> None:
    bench = truncated_bench(tmp_path)
    with serve(ServerConfig()) as server:
        result = invoke_run(f"jsonl:{bench}", f"openai:m?base_url={server.base_url}",
                            tmp_path / "runs", "r")  # fmt: skip
    assert result.exit_code == 1
    assert "rerun to retry" not in result.output
    assert "--retry-errors" in result.output and "0.png" in result.output
    assert "permanent" in result.output


def test_unscored_sets_point_at_ratings_export(tmp_path: Path) -> None:
    csv = tmp_path / "all.csv"
    csv.write_text("id,question\n1,Are boils curable?\n2,Is acne serious?\n", encoding="utf-8")
    run = named_run(f"healthsearchqa:{csv}", "first", tmp_path / "runs", "h")
    hint = f"medlens ratings export {run}"
    outputs = [runner.invoke(app, ["report", str(run)]).output,
               runner.invoke(app, ["slice", str(run), "--by", "source"]).output]  # fmt: skip
    for fmt in ("md", "html"):
        page = tmp_path / f"r.{fmt}"
        runner.invoke(app, ["report", str(run), "-f", fmt, "-o", str(page)])
        outputs.append(page.read_text())
    for output in outputs:
        assert hint in output and "gmai-submission" not in output
    # and the hint works: the export it names writes a rating sheet
    sheet = tmp_path / "sheet.xlsx"
    exported = runner.invoke(
        app, ["ratings", "export", str(run), "--sample", "2", "--output", str(sheet)]
    )
    assert exported.exit_code == 0, exported.output
    assert sheet.is_file()
