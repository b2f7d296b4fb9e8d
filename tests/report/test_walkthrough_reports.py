"""Regressions found by driving report / slice from the CLI on real-looking runs (walkthrough)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.slices import cube, load_slice_table
from medlens.cli import app
from medlens.core.items import Item
from medlens.core.where import parse_where
from medlens.report.html import items_payload

runner = CliRunner()

# VQA-RAD-like: yes/no and open questions under multi-label question types ("PRES, POS").
QUESTION_TYPES = ["PRES, POS"] * 10 + ["POS"] * 4 + ["PRES"] * 6
KINDS = ["yes_no"] * 6 + ["open"] * 8 + ["yes_no"] * 6


def _item(i: int, with_answer: bool = True) -> Item:
    kind = KINDS[i]
    answer = ("yes" if i % 2 else "no") if kind == "yes_no" else "left lower lobe"
    return Item(
        id=str(i),
        question=f"Question {i}?",
        kind=kind,  # type: ignore[arg-type]
        answer=answer if with_answer else None,
        meta={
            "question_type": QUESTION_TYPES[i],
            "answer_type": "closed" if kind == "yes_no" else "open",
        },
    )


def _bench(path: Path, with_answer: bool = True) -> str:
    lines = [json.dumps(_item(i, with_answer).to_json()) for i in range(len(KINDS))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"jsonl:{path}"


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("walk")
    predictions = folder / "pred.tsv"
    # wrong, unreadable and empty answers so that every status shows up
    rows = ["index\tprediction"] + [
        f"{i}\t{['maybe', '', 'left lower lobe', 'yes'][i % 4]}" for i in range(len(KINDS))
    ]
    predictions.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return named_run(_bench(folder / "b.jsonl"), f"replay:{predictions}", folder, "mixed")


def test_slice_random_baseline_matches_the_report(mixed_run: Path) -> None:
    """Open items have no chance level: they count as 0 beside closed ones, as in results.json
    (the cube used to average over closed items only: 50% where the report said 30%)."""
    by = json.loads((mixed_run / "results.json").read_text())["by"]["question_type"]
    cells = cube(load_slice_table(mixed_run), ["question_type"])
    random = {c.key[0][1]: c.random for c in cells if c.key}
    assert random == {value: cell["random"] for value, cell in by.items()}
    assert random["PRES, POS"] == pytest.approx(6 * 0.5 / 10)
    assert random["POS"] is None and random["PRES"] == 0.5


def test_where_accepts_values_holding_commas(mixed_run: Path) -> None:
    axes = ["question_type", "answer_type"]
    (only,) = parse_where("question_type=PRES, POS", axes)
    assert only.values == ("PRES, POS",)
    both = parse_where("question_type in (PRES, POS|POS), answer_type!=open", axes)
    assert [c.values for c in both] == [("PRES, POS", "POS"), ("open",)]
    where = ["--where", "question_type=PRES, POS", "--json"]
    result = runner.invoke(app, ["slice", str(mixed_run), "--by", "answer_type", *where])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cells"][0]["n"] == 10


def test_worst_without_large_cells_says_so_and_names_axes(mixed_run: Path) -> None:
    result = runner.invoke(app, ["slice", str(mixed_run), "--by", "question_type", "--worst", "3"])
    assert result.exit_code == 0, result.output
    assert "none has n ≥ 50" in result.output
    ranked = runner.invoke(
        app, ["slice", str(mixed_run), "--by", "question_type", "--worst", "2", "--min-n", "1"]
    )
    assert "question_type=POS" in ranked.output  # worst cells mix axes: each is named


def test_text_report_shows_the_empty_rate_and_the_extraction_mode(mixed_run: Path) -> None:
    result = runner.invoke(app, ["report", str(mixed_run)])
    assert result.exit_code == 0, result.output
    assert "empty" in result.output.split("by ")[0]  # in the overall table
    assert "extraction sensitivity (medlens scored this run): medlens" in result.output


def test_html_browser_never_shows_python_none(mixed_run: Path) -> None:
    shown = [row["extraction"] for row in items_payload(mixed_run)["items"]]
    assert not any("None" in text for text in shown)
    assert "– (empty)" in shown and "– (unparsed)" in shown


def test_report_output_into_a_new_folder_and_onto_a_folder(mixed_run: Path, tmp_path: Path) -> None:
    for fmt in ("md", "xlsx"):
        target = tmp_path / "new" / "deeper" / f"report.{fmt}"
        result = runner.invoke(app, ["report", str(mixed_run), "-f", fmt, "-o", str(target)])
        assert result.exit_code == 0, result.output
        assert target.stat().st_size > 0
    onto_folder = runner.invoke(app, ["report", str(mixed_run), "-f", "md", "-o", str(tmp_path)])
    assert onto_folder.exit_code == 2
    assert "is a folder; give a file name" in onto_folder.output
    assert "Traceback" not in onto_folder.output


def test_test_split_names_the_export_command_with_the_run_path(tmp_path: Path) -> None:
    bench = _bench(tmp_path / "t.jsonl", with_answer=False)
    result = runner.invoke(
        app, ["run", "--bench", bench, "--model", "first", "--out", str(tmp_path), "--name", "t"]
    )
    assert result.exit_code == 0, result.output
    # the items are of every kind, not all multiple-choice: a submission export would refuse
    command = f"medlens ratings export {tmp_path / 't'} --sample 100 --output ratings.xlsx"
    # the console folds long lines at a word or inside the path, wherever the temporary
    # folder's length puts the edge: compare without any whitespace
    assert _squeezed(command) in _squeezed(result.output)
    report = runner.invoke(app, ["report", str(tmp_path / "t")])
    assert _squeezed(command) in _squeezed(report.output)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def test_compare_chance_matches_the_report(mixed_run: Path) -> None:
    """compare's chance column used to ignore open items (50% where the report said 30%)."""
    bench = json.loads((mixed_run / "run.json").read_text())["spec"]["benchmark"]["spec"]
    oracle = named_run(bench, "oracle", mixed_run.parent, "oracle")
    result = runner.invoke(app, ["compare", str(mixed_run), str(oracle), "--by", "question_type",
                                 "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    results = json.loads((mixed_run / "results.json").read_text())
    assert data["overall"]["random"] == pytest.approx(results["overall"]["random"])
    by = {c["key"]["question_type"]: c["random"] for c in data["by"]["question_type"]}
    assert by == {v: c["random"] for v, c in results["by"]["question_type"].items()}


def test_html_browser_filters_on_the_runs_own_axes(mixed_run: Path) -> None:
    """Without GMAI axes (VQA-RAD, SLAKE …) the browser had no filter but the outcome."""
    from medlens.report import render

    page = str(render(mixed_run, "html"))
    payload = json.loads(page.split('id="items-data">')[1].split("</script>")[0])
    assert set(payload["axes"]) == {"answer_type", "question_type"}
    assert payload["items"][0]["axes"]["question_type"] == "PRES, POS"


def test_export_of_an_unfinished_run_warns(tmp_path: Path) -> None:
    """A TEST submission of a --limit run silently held 50 of 300 rows."""
    # GMAI-shaped items (a submission of yes/no or open items is refused: see test_cli_refusals)
    mcq = [
        Item(id=str(i), question=f"Question {i}?", kind="choice", options={"A": "x", "B": "y"})
        for i in range(20)
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(i.to_json()) + "\n" for i in mcq))
    bench = f"jsonl:{tmp_path / 't.jsonl'}"
    run = named_run(bench, "first", tmp_path, "part", "--limit", "5")
    result = runner.invoke(app, ["export", str(run), "--format", "gmai-submission"])
    assert result.exit_code == 0, result.output
    assert "warning: 15 of 20 items have no record and are left out" in result.output
    named_run(bench, "first", tmp_path, "part")
    complete = runner.invoke(app, ["export", str(run), "--format", "gmai-submission"])
    assert complete.exit_code == 0 and "warning" not in complete.output


def test_reports_show_closed_vs_open_and_fitting_limitations(mixed_run: Path) -> None:
    """Issue 6 promises closed/open Δ per axis; md/html had none and claimed 'multiple-choice
    accuracy … box, mask and contour questions' for a VQA-RAD-like run."""
    from medlens.report import render

    markdown = str(render(mixed_run, "md"))
    section = markdown.split("## Closed vs open answers")[1].split("## ")[0]
    assert "| overall |" in section and "question\\_type=PRES, POS" in section
    assert "answer\\_type=" not in section  # the split axis itself is not a row
    assert "Secondary per-item metrics (mean \\[95% CI\\], n, chance): bleu1 " in markdown
    # 2 of 8 token-F1 values are 1, the rest 0: still a continuous metric, so the bounded-mean
    # interval of non-0/1 scores, not Wilson-cc(2, 8)'s [0.045, 0.644] (issue 36)
    assert "token\\_f1 0.250 \\[0.063, 0.599\\] (n=8, chance –)" in markdown
    assert "Open answers are scored by rules" in markdown
    assert "marked region" not in markdown and "multiple-choice (or closed-answer)" not in markdown
    page = str(render(mixed_run, "html"))
    assert "<h2>Closed vs open answers</h2>" in page and "Secondary per-item metrics" in page
    import io

    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(render(mixed_run, "xlsx")))  # type: ignore[arg-type]
    sheet = [row for row in book["closed vs open"].iter_rows(values_only=True)]
    assert sheet[0][0] == "slice" and sheet[1][:3] == ("overall", 0.25, 12)


def test_a_native_field_renaming_another_is_not_a_second_table() -> None:
    """The GMAI fixture's category / l2-category pair one to one: two identical tables. JSON
    fields (SLAKE's KG `triple`) are data, not categories."""
    from medlens.analysis.results import breakdown_axes
    from medlens.analysis.score_table import score_table

    def item(i: int) -> Item:
        meta = {
            "category": ["Anatomy", "Findings"][i % 2],
            "l2-category": ["Body region", "Statements"][i % 2],
            "organ": ["head", "chest", "abdomen"][i % 3],
            "triple": '["vhead","part of","lung"]' if i in (1, 3) else '["vhead","_","_"]',
        }
        return Item(
            id=str(i), question="q", kind="choice", options={"A": "x"}, answer="A", meta=meta
        )

    items = [item(i) for i in range(12)]
    records = {it.id: {"id": it.id, "error": None, "score": 1.0} for it in items}
    assert breakdown_axes(score_table(items, records)) == ["category", "organ"]


def test_extraction_sensitivity_of_a_vlmeval_scored_run(tmp_path: Path) -> None:
    """With --extract vlmeval both sides of the sensitivity were the VLMEvalKit reading (Δ 0,
    labelled "medlens"): the medlens reading is now re-read from the outputs."""
    from medlens.report import render

    lines = [
        Item(id=str(i), question="Q?", kind="choice", options={"A": "x", "B": "y"}, answer="B")
        for i in range(8)
    ]
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps(i.to_json()) + "\n" for i in lines), encoding="utf-8")
    predictions = tmp_path / "p.tsv"
    outputs = ["B", "answer: (b)", "The answer is B.", "A"] * 2  # VLMEvalKit reads 1st and 4th
    rows = [f"{i}\t{text}" for i, text in enumerate(outputs)]
    predictions.write_text("index\tprediction\n" + "\n".join(rows) + "\n", encoding="utf-8")
    spec = (f"jsonl:{bench}", f"replay:{predictions}", tmp_path)
    medlens = json.loads((named_run(*spec, "m") / "results.json").read_text())
    vlmeval = json.loads(
        (named_run(*spec, "v", "--extract", "vlmeval") / "results.json").read_text()
    )
    assert medlens["extraction_sensitivity"] == vlmeval["extraction_sensitivity"]
    assert vlmeval["extraction_sensitivity"]["medlens"] == medlens["overall"]["score"] == 0.75
    assert vlmeval["overall"]["score"] == vlmeval["extraction_sensitivity"]["vlmeval"] < 0.75
    markdown = str(render(tmp_path / "v", "md"))
    assert "| slice | medlens extraction | VLMEvalKit exact matching (this run) |" in markdown


def test_html_limitations_show_code_not_backticks(mixed_run: Path) -> None:
    from medlens.report import render

    page = str(render(mixed_run, "html"))
    limitations = page.split("<h2>Limitations</h2>")[1].split("</ul>")[0]
    assert "<code>--model prior</code>" in limitations and "`" not in limitations


def test_a_probe_run_is_no_submission(tmp_path: Path) -> None:
    """An options-only or shuffled run exported blank questions / moved letters as a submission."""
    bench = _bench(tmp_path / "t.jsonl", with_answer=False)
    run = named_run(bench, "first", tmp_path, "p", "--probe", "options-only")
    result = runner.invoke(app, ["export", str(run), "--format", "gmai-submission"])
    assert result.exit_code == 2 and "no submission" in result.output
    assert not (run / "export").exists()


def test_a_several_file_export_refuses_a_file_name(mixed_run: Path, tmp_path: Path) -> None:
    """`export --format vlmeval -o res.xlsx` made a directory called res.xlsx."""
    result = runner.invoke(
        app, ["export", str(mixed_run), "--format", "vlmeval", "-o", str(tmp_path / "res.xlsx")]
    )
    assert result.exit_code == 2 and "give a directory" in result.output
    assert not (tmp_path / "res.xlsx").exists()


def test_test_split_report_makes_no_claims_about_cells(tmp_path: Path) -> None:
    """A TEST report said "N per-axis cells have n < 50" and "needs both granularities"."""
    from medlens.report import render

    bench = tmp_path / "t.jsonl"
    items = [
        Item(
            id=str(i),
            question="Q?",
            kind="choice",
            options={"A": "x", "B": "y"},
            meta={"granularity": g},
        )
        for i, g in enumerate(["box", "image"] * 3)
    ]
    bench.write_text("".join(json.dumps(i.to_json()) + "\n" for i in items), encoding="utf-8")
    run = named_run(f"jsonl:{bench}", "first", tmp_path, "t")
    markdown = str(render(run, "md"))
    assert "per-axis cells have n <" not in markdown
    assert "| box-level − image-level score | – (no scores) |" in markdown


def test_heat_map_labels_stay_readable_on_dark_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Black labels on the dark red (0 %) and dark green (100 %) cells were hard to read."""
    from matplotlib.colors import to_hex

    from medlens.analysis.slices import Cell
    from medlens.report import html

    def cell(score: float) -> Cell:
        return Cell((), 3, 3, score, (0.0, 1.0), 0.25, score, 0.0, 0.0, 0.0, 0.0, True)

    figures: list = []
    monkeypatch.setattr(html, "_png", lambda figure: figures.append(figure) or "png")
    grid = {("a", "box"): cell(0.0), ("a", "image"): cell(0.5), ("b", "box"): cell(1.0)}
    html.heatmap_plot(["a", "b"], ["box", "image"], grid)
    colours = {t.get_text().split("\n")[0]: to_hex(t.get_color()) for t in figures[0].axes[0].texts}
    assert colours == {"0": "#ffffff", "50": "#000000", "100": "#ffffff"}


def test_leakage_line_names_the_overall_cell_plainly(tmp_path: Path) -> None:
    bench = _bench(tmp_path / "b.jsonl")
    result = runner.invoke(app, ["run", "--bench", bench, "--model", "oracle", "--out",
                                 str(tmp_path), "--probe", "options-only"])  # fmt: skip
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())
    # 20 items: below min-n, so untested (issue 11) and the line says why nothing is flagged
    assert "(text-prior or leakage): none: no slice scores significantly above chance" in line
    assert "slices with n < 50 or < 10 images untested" in line
    from medlens.report.sections import suspect_summary

    overall = {"axis": "overall", "value": "all", "score": 1.0, "ci": [0.9, 1.0], "random": 0.25,
               "n": 80, "images": 80, "p_adjusted": 1e-9}  # fmt: skip
    text = suspect_summary([overall])
    assert text.startswith("overall 100.0% (CI 90.0–100.0, chance 25.0%, n=80, images=80")
    assert "overall=all" not in text


def test_compare_says_when_scoring_rules_differ(mixed_run: Path) -> None:
    """B − A silently mixed a prompt/extraction change into the model difference."""
    bench = json.loads((mixed_run / "run.json").read_text())["spec"]["benchmark"]["spec"]
    other = named_run(bench, "first", mixed_run.parent, "first-vl", "--extract", "vlmeval")
    result = runner.invoke(app, ["compare", str(mixed_run), str(other)])
    assert result.exit_code == 0, result.output
    assert 'note: the runs also differ in extract: "medlens" → "vlmeval"' in result.output
    data = json.loads(runner.invoke(app, ["compare", str(mixed_run), str(other), "--json"]).output)
    assert data["settings_differ"] == 'extract: "medlens" → "vlmeval"'
