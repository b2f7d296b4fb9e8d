"""`report --format md` (and xlsx): the issue's template on demo, GMAI-format and VQA-RAD runs."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from data_paths import realdata_dir
from gmai_fixture import write_gmai_tsv
from medlens.cli import app
from medlens.report import render
from medlens.report.md_format import md_text

runner = CliRunner()
SECTIONS = (
    "## Protocol", "## Overall", "## Breakdowns", "## Worst cells (n ≥ 50)",
    "## Deficiency profile", "## Extraction sensitivity", "## Limitations",
)  # fmt: skip


def run(tmp: Path, bench: str, model: str, name: str, *extra: str) -> Path:
    result = invoke_run(bench, model, tmp, name, *extra)
    assert result.exit_code in (0, 1), result.output
    return tmp / name


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    """Body rows of the first table after `heading`, split on unescaped pipes."""
    block = markdown.split(heading, 1)[1].lstrip("\n").split("\n\n")
    table = next(part for part in block if part.startswith("| "))
    lines = table.splitlines()[2:]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


@pytest.fixture(scope="module")
def gmai_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("md")
    tsv = folder / "GMAI_VAL.tsv"
    write_gmai_tsv(tsv, n_rows=240)
    frame = pd.read_csv(tsv, sep="\t", dtype={"index": str})
    predictions = [
        "| <script>alert(1)</script> **B**"
        if i == 0
        else ("I cannot answer this." if i % 7 == 0 else "ABCD"[i % 4])
        for i in range(len(frame))
    ]
    pd.DataFrame({"index": frame["index"], "prediction": predictions}).to_csv(
        folder / "p.tsv", sep="\t", index=False
    )
    return run(folder, f"gmai:{tsv}", f"replay:{folder / 'p.tsv'}", "gmai")


def test_sections_follow_the_template(gmai_run: Path) -> None:
    markdown = str(render(gmai_run, "md"))
    positions = [markdown.index(section) for section in SECTIONS]
    assert positions == sorted(positions)
    for axis in ("granularity", "department", "task", "modality"):
        assert f"### By {axis}" in markdown
    protocol = dict((row[0], row[1]) for row in table_rows(markdown, "## Protocol"))
    assert {
        "benchmark",
        "split",
        "items",
        "model",
        "prompt style",
        "extraction",
        "medlens version",
        "date",
    } <= set(protocol)
    assert protocol["split"] == "val" and protocol["items"].startswith("240")


def test_numbers_match_results_json(gmai_run: Path) -> None:
    markdown = str(render(gmai_run, "md"))
    results = json.loads((gmai_run / "results.json").read_text(encoding="utf-8"))
    overall = table_rows(markdown, "## Overall")[0]
    assert overall[0] == str(results["overall"]["n"])
    assert overall[1] == f"{100 * results['overall']['score']:.1f}%"
    assert overall[3] == f"{100 * results['overall']['random']:.1f}%"
    granularity = table_rows(markdown, "### By granularity")
    assert {row[0]: int(row[1]) for row in granularity} == {
        k: v["n"] for k, v in results["by"]["granularity"].items()
    }
    box, image = (
        results["by"]["granularity"]["box"]["score"],
        results["by"]["granularity"]["image"]["score"],
    )
    deficiency = dict((row[0], row[1]) for row in table_rows(markdown, "## Deficiency profile"))
    assert deficiency["box-level − image-level score"].startswith(
        f"{100 * (box - image):+.1f} points"
    )
    assert deficiency["refusal rate"] == f"{100 * results['rates']['refused']:.1f}%"


def test_worst_cells_have_n_at_least_50(gmai_run: Path) -> None:
    worst = table_rows(str(render(gmai_run, "md")), "## Worst cells")
    assert 0 < len(worst) <= 10
    assert all(int(row[1]) >= 50 for row in worst)
    scores = [float(row[2].rstrip("%")) for row in worst]
    assert scores == sorted(scores)


def test_untrusted_text_cannot_break_tables_or_inject_html() -> None:
    assert md_text("a | b <script>x</script> *y* &amp;\nz") == (
        "a \\| b \\<script\\>x\\</script\\> \\*y\\* &amp;amp; z"
    )


def test_xlsx_report_has_a_sheet_per_section(gmai_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.xlsx"
    result = runner.invoke(app, ["report", str(gmai_run), "--format", "xlsx", "--output", str(out)])
    assert result.exit_code == 0, result.output
    book = openpyxl.load_workbook(out)
    assert {"protocol", "overall", "by granularity", "worst cells", "deficiency", "items"} <= set(
        book.sheetnames
    )
    items = book["items"]
    assert items.max_row == 241
    first_output = items.cell(row=2, column=4)
    assert first_output.value.startswith("| <script>") and first_output.data_type == "s"
    assert runner.invoke(app, ["report", str(gmai_run), "--format", "xlsx"]).exit_code == 2


def test_test_split_report_names_the_answer_key_and_export(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_TEST.tsv"
    write_gmai_tsv(tsv, n_rows=20, with_answers=False)
    run_dir = run(tmp_path, f"gmai:{tsv}", "first", "test")
    markdown = str(render(run_dir, "md"))
    assert "scores need the official answer key" in markdown
    assert f"medlens export {run_dir} --format gmai-submission" in markdown
    assert "## Worst cells" not in markdown and "## Deficiency profile" in markdown
    workbook = render(run_dir, "xlsx")
    assert isinstance(workbook, bytes)
    book = openpyxl.load_workbook(io.BytesIO(workbook))
    assert "official answer key" in str(
        [c.value for row in book["protocol"].iter_rows() for c in row]
    )


def test_demo_run_report(tmp_path: Path) -> None:
    run_dir = run(tmp_path, "demo", "random", "demo")
    markdown = str(render(run_dir, "md"))
    for section in SECTIONS:
        assert section in markdown
    assert "## Department × granularity" in markdown
    assert "| box |" in markdown and "| contour" in markdown


def test_vqa_rad_run_report(tmp_path: Path) -> None:
    folder = realdata_dir("vqa_rad")
    run_dir = run(tmp_path, f"vqa-rad:{folder}", "first", "vqarad")
    markdown = str(render(run_dir, "md"))
    assert "VQA" in markdown and "| 451 |" in markdown
    worst = table_rows(markdown, "## Worst cells")
    assert worst and all(int(row[1]) >= 50 for row in worst)
    assert "### By answer\\_type" in markdown


def test_a_few_items_of_vqa_rad_report_without_tabulating_their_ids(tmp_path: Path) -> None:
    """Five items: `qid` repeats no value but is short of the 10-item uniqueness rule; its name
    says id, so neither results.json nor the worst cells group by it (the md report refused)."""
    import json

    run_dir = run(tmp_path, f"vqa-rad:{realdata_dir('vqa_rad')}", "oracle", "five", "--limit", "5")
    markdown = str(render(run_dir, "md"))
    assert "### By answer\\_type" in markdown and "qid" not in markdown
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert "qid" not in results["by"] and "answer_type" in results["by"]


def test_hand_built_run_with_errors_and_hostile_axis_values(tmp_path: Path) -> None:
    from slice_runs import write_run

    rows = [
        {"meta": {"department": "Dept | <b>x</b> $x^{$", "granularity": ["image", "box"][i % 2]}, "score": float(i % 3 == 0)}
        for i in range(120)
    ]  # fmt: skip
    rows[0] = {**rows[0], "error": {"type": "timeout", "message": "slow"}}
    markdown = str(render(write_run(tmp_path / "run", rows), "md"))
    department = table_rows(markdown, "### By department")
    assert department[0][0] == "Dept \\| \\<b\\>x\\</b\\> $x^\\{$"
    assert len(department[0]) == 9  # the 8 columns and images
    assert "1 items errored (no answer from the model)" in markdown
    deficiency = dict((row[0], row[1]) for row in table_rows(markdown, "## Deficiency profile"))
    assert deficiency["error rate (no answer from the model)"] == f"{100 / 120:.1f}%"
    assert "## Department × granularity" in markdown
    html_page = str(render(tmp_path / "run", "html"))
    assert "Dept | &lt;b&gt;x&lt;/b&gt; $x^{$" in html_page and "<b>x</b>" not in html_page
    assert html_page.count("data:image/png;base64,") == 3  # "$" in labels did not break the plots


def test_deficiency_without_both_granularities_and_pending_items(tmp_path: Path) -> None:
    from medlens.core.items import Item
    from medlens.report.sections import build_report
    from medlens.runs.store import RunStore
    from slice_runs import spec

    items = [Item(id=str(i), question="q", kind="choice", options={"A": "a", "B": "b"}, answer="A",
                  meta={"granularity": "box"}) for i in range(4)]  # fmt: skip
    store = RunStore.open_or_create(tmp_path / "run", spec(), items)
    store.append({"id": "0", "output": "A", "error": None, "score": 1.0,
                  "extraction": {"answer": "A", "status": "ok", "method": "t"}})  # fmt: skip
    store.close()
    data = build_report(tmp_path / "run")
    assert dict(data.deficiency)["box-level − image-level score"] == "– (needs both granularities)"
    assert any("3 items have not been run yet" in note for note in data.limitations)
    assert dict(data.protocol)["items"] == "0 (1 with a record, 0 errored, 3 pending)"


def test_xlsx_axis_sheet_equals_results(gmai_run: Path) -> None:
    book = openpyxl.load_workbook(io.BytesIO(bytes(render(gmai_run, "xlsx"))))
    results = json.loads((gmai_run / "results.json").read_text(encoding="utf-8"))
    sheet = book["by granularity"]
    header = [c.value for c in sheet[1]]
    assert header[:4] == ["value", "n", "score", "ci_low"]
    for row in sheet.iter_rows(min_row=2, values_only=True):
        cell = results["by"]["granularity"][row[0]]
        assert row[1] == cell["n"]
        assert (row[2], row[3]) == pytest.approx((cell["score"], cell["ci"][0]), rel=1e-14)
