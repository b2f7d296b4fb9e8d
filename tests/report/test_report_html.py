"""`report --format html`, rendered in headless Chromium: untrusted model output stays text.

Needs the Debian packages ``chromium`` (and ``chromium-driver``), which ``.ci/run`` installs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from browser import browse
from cli_runs import named_run
from gmai_fixture import write_gmai_tsv
from medlens.cli import app
from medlens.report.html_format import safe_json

runner = CliRunner()
PAYLOADS = (
    '<script>document.title="pwned";document.body.setAttribute("data-pwned","script")</script> A',
    "<img src=x onerror=\"document.title='pwned';document.body.setAttribute('data-pwned','img')\"> B",
    '</script><script>document.body.setAttribute("data-pwned","close")</script>\u2028C',
    "<!-- A --> &lt;b&gt; <svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg> D",
)


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GMAI-format run (real VQA-RAD images) whose model outputs are XSS payloads."""
    folder = tmp_path_factory.mktemp("html")
    tsv = folder / "GMAI_VAL.tsv"
    write_gmai_tsv(tsv, n_rows=120)
    frame = pd.read_csv(tsv, sep="\t", dtype={"index": str})
    predictions = [PAYLOADS[i] if i < len(PAYLOADS) else "ABCD"[i % 4] for i in range(len(frame))]
    pd.DataFrame({"index": frame["index"], "prediction": predictions}).to_csv(
        folder / "p.tsv", sep="\t", index=False
    )
    named_run(f"gmai:{tsv}", f"replay:{folder / 'p.tsv'}", folder, "evil")
    page = folder / "report.html"
    result = runner.invoke(
        app, ["report", str(folder / "evil"), "--format", "html", "--output", str(page)]
    )
    assert result.exit_code == 0, result.output
    return page


def test_payloads_do_not_execute_and_show_as_text(evil_report: Path, tmp_path: Path) -> None:
    dom = browse(evil_report, tmp_path / "profile", "--dump-dom").stdout
    assert 'data-rendered="1"' in dom  # the page's own script ran and built the item browser
    assert "<title>medlens report: evil</title>" in dom
    assert "pwned" not in re.search(r"<title>.*?</title>", dom, re.S).group(0)  # type: ignore[union-attr]
    assert "data-pwned=" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert not re.search(r"<(img|svg)[^>]*on(error|load)=", dom)
    cells = re.findall(r"<td>(.*?)</td>", dom, re.S)
    assert '&lt;script&gt;document.title="pwned";' in "".join(cells)
    assert "&lt;img src=x onerror=" in "".join(cells)
    assert "&amp;lt;b&amp;gt;" in "".join(cells)  # an entity in the output is shown, not decoded
    assert len(re.findall(r"<tr class=\"(hit|miss)\"", dom)) == 120


def test_report_is_self_contained(evil_report: Path) -> None:
    page = evil_report.read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert page.count("data:image/png;base64,") == 3  # granularity, department, heat map
    assert 'class="sortable"' in page and 'id="items-data"' in page
    raw = page.split('id="items-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in raw and "\u2028" not in raw
    assert json.loads(raw)["items"][0]["output"] == PAYLOADS[0]


DRIVER = """<!DOCTYPE html><html><body><iframe id="report" src="report.html"></iframe>
<pre id="out"></pre><script>
document.getElementById("report").onload = function () {
  var page = this.contentDocument, out = {};
  var table = page.querySelector("table.sortable"), header = table.tHead.rows[0].cells[2];
  function column() {
    return Array.prototype.map.call(table.tBodies[0].rows,
      function (row) { return parseFloat(row.cells[2].getAttribute("data-v")); });
  }
  header.click(); out.ascending = column();
  header.click(); out.descending = column();
  var select = page.querySelector('select[data-filter="granularity"]');
  select.value = "box"; select.dispatchEvent(new Event("change"));
  out.rows = page.querySelectorAll("#item-table tbody tr").length;
  out.count = page.getElementById("browser-count").textContent;
  document.getElementById("out").textContent = JSON.stringify(out);
};
</script></body></html>"""


def test_tables_sort_and_the_item_browser_filters(evil_report: Path, tmp_path: Path) -> None:
    """Clicks a header twice and picks a filter, from a page that frames the report."""
    driver = evil_report.parent / "driver.html"
    driver.write_text(DRIVER, encoding="utf-8")
    dom = browse(
        driver, tmp_path / "profile", "--allow-file-access-from-files", "--dump-dom"
    ).stdout
    found = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), dom[-2000:]
    out = json.loads(found.group(1).replace("&quot;", '"'))
    assert out["ascending"] == sorted(out["ascending"]) and len(out["ascending"]) == 4
    assert out["descending"] == sorted(out["ascending"], reverse=True)
    assert out["descending"] != out["ascending"]
    assert out["rows"] == 30 and out["count"].startswith("showing 30 of 30 matching items (120")


def test_screenshot_renders(evil_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    browse(
        evil_report,
        tmp_path / "profile",
        "--hide-scrollbars",
        "--window-size=1200,1600",
        f"--screenshot={shot}",
    )
    assert shot.stat().st_size > 20_000


@pytest.mark.parametrize(
    "value",
    [
        "</script><script>alert(1)</script>",
        "a & b <!-- c -->",
        "\u2028\u2029",
        {"k": ["<", ">", "&"]},
    ],
)
def test_safe_json_round_trips_without_markup_characters(value: object) -> None:
    text = safe_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == value


def test_test_split_html_names_the_export(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_TEST.tsv"
    write_gmai_tsv(tsv, n_rows=12, with_answers=False)
    named_run(f"gmai:{tsv}", "first", tmp_path, "t")
    result = runner.invoke(app, ["report", str(tmp_path / "t"), "--format", "html"])
    assert result.exit_code == 0, result.output
    assert "scores need the official answer key" in result.output
    assert "--format gmai-submission" in result.output and "items-data" in result.output


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"error": {"type": "timeout"}, "score": None}, "error"),
        ({"error": None, "extraction": {"status": "unparsed"}, "score": 0.0}, "unparsed"),
        ({"error": None, "extraction": {"status": "refused"}, "score": 0.0}, "refused"),
        ({"error": None, "extraction": {"status": "ok"}, "score": 1.0}, "correct"),
        ({"error": None, "extraction": {"status": "ok"}, "score": 0.0}, "wrong"),
        ({"error": None, "extraction": {"status": "ok"}, "score": 0.5}, "partial"),
        ({"error": None, "extraction": {"status": "ok"}, "score": None}, "no gold"),
    ],
)  # fmt: skip
def test_item_outcomes(record: dict[str, object], expected: str) -> None:
    from medlens.report.html import outcome

    assert outcome(record) == expected


def test_sections_carry_the_results_numbers(evil_report: Path) -> None:
    run_dir = evil_report.parent / "evil"
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    page = evil_report.read_text(encoding="utf-8")
    overall = results["overall"]
    assert f'<td data-v="{overall["score"]}">{100 * overall["score"]:.1f}%</td>' in page
    for value, cell in results["by"]["granularity"].items():
        label = value + (" *" if cell["n"] < 50 else "")
        assert f'<td class="text">{label}</td><td data-v="{cell["n"]}">{cell["n"]}</td>' in page
    for section in ("Protocol", "Overall", "Plots", "Breakdowns", "Worst cells", "Deficiency profile",
                    "Extraction sensitivity", "Limitations", "Items"):  # fmt: skip
        assert f"<h2>{section}" in page


def test_long_outputs_are_cut_in_the_browser(tmp_path: Path) -> None:
    from medlens.report.html import MAX_OUTPUT_CHARS, items_payload
    from slice_runs import write_run

    run_dir = write_run(tmp_path / "run", [{"meta": {"granularity": "box"}, "score": 1.0}])
    records = run_dir / "records.jsonl"
    record = json.loads(records.read_text(encoding="utf-8"))
    record["output"] = "x" * (MAX_OUTPUT_CHARS + 50)
    records.write_text(json.dumps(record) + "\n", encoding="utf-8")
    payload = items_payload(run_dir)
    assert payload["axes"] == ["granularity"] and payload["outcomes"] == ["correct"]
    assert payload["items"][0]["output"].endswith(" … (cut)")
    assert len(payload["items"][0]["output"]) == MAX_OUTPUT_CHARS + len(" … (cut)")
