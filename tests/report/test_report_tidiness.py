"""Report tidiness: one protocol table, no extraction line where nothing is extracted, judge
tables on the run's scale with small cells marked, export names without spaces, board reference
footnotes and unclipped labels, an HTML legend beside the bars, self-consistency ties counted,
and the few-shot dry run showing the item's image where it is sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from browser import chrome_driver
from cli_runs import named_run
from data_paths import realdata_dir
from judge_fixtures import finished_run, judge_spec
from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from provenance_fixture import write_choice_benchmark, write_gmai_choice_tsv

runner = CliRunner()


def report(run: Path, fmt: str, tmp_path: Path) -> str:
    page = tmp_path / f"report.{fmt}"
    result = runner.invoke(app, ["report", str(run), "-f", fmt, "-o", str(page)])
    assert result.exit_code == 0, result.output
    return page.read_text(encoding="utf-8")


def test_one_protocol_table(tmp_path: Path) -> None:
    run = named_run(f"jsonl:{write_choice_benchmark(tmp_path, 6)}", "first", tmp_path / "r", "r")
    md, html = report(run, "md", tmp_path), report(run, "html", tmp_path)
    assert md.count("## Protocol") == 1 and "Protocol card" not in md
    assert html.count("<h2>Protocol") == 1 and "Protocol card" not in html
    table = md.split("## Protocol", 1)[1].split("\n## ", 1)[0]
    for row in ("medlens version", "generation parameters", "content hash", "date"):
        assert f"| {row} |" in table, row
    assert table.count("| model |") == 1


def test_no_extraction_sensitivity_where_nothing_is_extracted(tmp_path: Path) -> None:
    bench = tmp_path / "reports.jsonl"
    bench.write_text("".join(json.dumps({
        "id": str(i), "question": "Write the findings.", "kind": "report",
        "answer": "No acute cardiopulmonary process.", "meta": {"modality": "X-Ray"},
    }) + "\n" for i in range(6)))  # fmt: skip
    run = named_run(f"jsonl:{bench}", "oracle", tmp_path / "r", "reports")
    text = runner.invoke(app, ["report", str(run)]).output
    assert "extraction sensitivity" not in text.lower()
    for fmt in ("md", "html"):
        assert "extraction sensitivity" not in report(run, fmt, tmp_path).lower()


def test_judge_tables_use_the_runs_scale_and_mark_small_cells(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=60)
    with serve(judge_config(JudgeReplies())) as server:
        result = runner.invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                     "--protocol", "equivalence"])  # fmt: skip
        assert result.exit_code == 0, result.output
    results = json.loads(runner.invoke(app, ["report", str(run), "-f", "json"]).stdout)
    judged = results["judges"]["judge-model"]["overall"]
    text = runner.invoke(app, ["report", str(run)], env={"COLUMNS": "160"}).output
    row = next(line for line in text.splitlines() if line.startswith("│ overall") and "20" in line)
    assert f"{judged['score']:.3f}" in row and "20*" in row  # fractions like the run's 0.533
    assert "0–100" not in text
    md = report(run, "md", tmp_path)
    assert f"{100 * judged['score']:.1f}%" in md and "| 20\\* |" in md  # percents like the run's


def test_export_file_names_have_no_spaces(tmp_path: Path) -> None:
    tsv = write_gmai_choice_tsv(tmp_path / "data", 8)
    run = named_run(f"gmai:{tsv}", "first", tmp_path / "runs", "my first run")
    out = tmp_path / "export"
    result = runner.invoke(app, ["export", str(run), "-f", "vlmeval", "-o", str(out)])
    assert result.exit_code == 0, result.output
    names = [p.name for p in out.iterdir()]
    assert names and all(" " not in name for name in names), names


def test_board_references_carry_their_provenance_in_a_footnote(tmp_path: Path) -> None:
    bench = f"gmai:{write_gmai_choice_tsv(tmp_path / 'data', 30)}"
    runs = [named_run(bench, model, tmp_path / "runs", model) for model in ("oracle", "first")]
    text = runner.invoke(app, ["board", *map(str, runs), "--reference", "gmai-val", "--allow-partial"],
                         env={"COLUMNS": "200"}).stdout  # fmt: skip
    row = next(line for line in text.splitlines() if "GPT-4o (published)" in line)
    marker = re.search(r"GPT-4o \(published\) (\S+)", row).group(1)  # type: ignore[union-attr]
    assert "http" not in row and "split" not in row  # provenance moved out of the row
    footnote = next(line for line in text.splitlines() if line.startswith(marker + " GPT-4o"))
    assert "split" in footnote and "source" in footnote


def test_long_labels_are_not_clipped_in_board_plots(tmp_path: Path) -> None:
    bench = f"jsonl:{write_choice_benchmark(tmp_path / 'data', 6)}"
    # a replayed model's label holds its file's path: long enough to pass the label column
    long_name = (
        tmp_path / "predictions-of-a-model-with-a-name-far-too-long-for-the-label-column.csv"
    )
    long_name.write_text("index,prediction\n" + "".join(f"{i},A\n" for i in range(6)))
    runs = [named_run(bench, f"replay:{long_name}", tmp_path / "runs", "long"),
            named_run(bench, "oracle", tmp_path / "runs", "short")]  # fmt: skip
    page = tmp_path / "board.html"
    result = runner.invoke(app, ["board", *map(str, runs), "--by", "task", "--min-n", "1",
                                 "-f", "html", "-o", str(page)])  # fmt: skip
    assert result.exit_code == 0, result.output
    with chrome_driver(tmp_path / "profile") as browser:
        browser.get(page.as_uri())
        lefts = browser.execute_script(
            "return [...document.querySelectorAll('svg text')].map(t => t.getBBox().x)"
        )
    assert lefts and min(lefts) >= 0, lefts


def test_the_html_legend_does_not_cover_bars() -> None:
    from medlens.report.html import score_figure
    from medlens.report.sections import AxisRow

    rows = [AxisRow(value=f"value {i}", n=100, score=0.9, ci=(0.85, 0.95), random=0.25,
                    vlmeval=None, unparsed=0.0, refused=0.0, error=0.0, images=50)
            for i in range(3)]  # fmt: skip
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = score_figure("modality", rows)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = figure.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in ax.patches]
    assert bars and not any(legend.overlaps(bar) for bar in bars)


def test_self_consistency_ties_are_counted_in_records_and_summary(tmp_path: Path) -> None:
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(24)}
    bench = tmp_path / "items.jsonl"
    bench.write_text("".join(json.dumps({
        "id": key, "question": f"[[{key}]] Which option?", "kind": "choice",
        "options": {"A": "w", "B": "x", "C": "y", "D": "z"}, "answer": gold}) + "\n"
        for key, gold in golds.items()))  # fmt: skip
    with serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.5)) as server:
        run = named_run(f"jsonl:{bench}", f"openai:m?base_url={server.base_url}", tmp_path, "sc",
                        "--strategy", "self-consistency:4")  # fmt: skip
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    ties = 0
    for record in records:
        counts = sorted(record["votes"].values(), reverse=True)
        tied = len(counts) > 1 and counts[0] == counts[1]
        assert record["tie"] is tied
        ties += tied
    assert ties > 0
    results = json.loads((run / "results.json").read_text())
    assert results["self_consistency"]["ties"] == ties
    assert f"ties {ties}" in runner.invoke(app, ["report", str(run)]).output


def test_few_shot_dry_run_shows_the_items_image_after_the_exemplars(tmp_path: Path) -> None:
    bench = f"vqa-rad:{realdata_dir('vqa_rad')}"
    args = ["run", "--bench", bench, "--model", "openai:m?base_url=http://127.0.0.1:9/v1",
            "--out", str(tmp_path / "runs"), "--strategy", "few-shot:1", "--dry-run"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    first = result.output.split("--- item", 2)[1]
    head, item_turn = first.split("[item ", 1)
    assert "[exemplar 1: assistant]" in head
    assert head.split("\n", 1)[1].lstrip().startswith("[exemplar 1")  # no image before exemplars
    assert item_turn.split("\n", 2)[1].startswith("[image] ")  # the item's image, where it is sent


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
