"""`medlens view`: the local viewer, started on a free port and driven in headless Chromium.

Filters, paging, two runs side by side, images that load, judge verdicts, hostile model output
shown as text (and no script allowed to run at all), read-only, loopback only.
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from browser import chrome_driver
from cli_runs import named_run
from judge_fixtures import finished_run, judge_spec
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app

N_ITEMS = 60
PAYLOAD = '<script>document.title="pwned";document.body.setAttribute("data-pwned","1")</script>B'
IMG_PAYLOAD = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"> C"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/: `random` and a replayed model (XSS payloads among its answers) on one benchmark
    with real PNGs, plus an open-answer run judged by a loopback judge (a second benchmark)."""
    root = tmp_path_factory.mktemp("viewer")
    bench = write_jsonl_benchmark(root / "data", N_ITEMS)
    ids = [json.loads(line)["id"] for line in bench.read_text().splitlines()]
    with open(root / "predictions.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("index", "prediction"))
        for i, item_id in enumerate(ids):
            writer.writerow((item_id, PAYLOAD if i == 3 else IMG_PAYLOAD if i == 4 else "A"))
    named_run(f"jsonl:{bench}", "random", root / "runs", "random")
    named_run(f"jsonl:{bench}", f"replay:{root / 'predictions.csv'}", root / "runs", "replayed")
    judged = finished_run(root / "open", n_open=20, n_closed=2, name="judged")
    with serve(judge_config(JudgeReplies())) as server:
        result = CliRunner().invoke(
            app,
            [
                "judge",
                str(judged),
                "--judge",
                judge_spec(server.base_url),
                "--protocol",
                "equivalence",
            ],
        )
        assert result.exit_code == 0, result.output
    return root


def records(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


class Viewer:
    """`medlens view` in a subprocess on a free port; `url` once it listens."""

    def __init__(self, *paths: Path) -> None:
        command = [sys.executable, "-m", "medlens", "view", *map(str, paths), "--port", "0"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("medlens view: http://127.0.0.1:"), self.process.stderr.read()  # type: ignore[union-attr]
        self.url = line.split(": ", 1)[1].strip().rstrip("/")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@contextmanager
def started(*paths: Path) -> Iterator[Viewer]:
    viewer = Viewer(*paths)
    try:
        yield viewer
    finally:
        viewer.close()


@pytest.fixture(scope="module")
def viewer(folder: Path) -> Iterator[Viewer]:
    with started(folder / "runs", folder / "open" / "runs") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chrome_driver(tmp_path_factory.mktemp("profile")) as session:
        yield session


def visit(browser: Any, url: str) -> None:
    """Load `url` and wait until the new document (images included) has loaded: the old
    one is marked first, so that it cannot pass for the new one."""
    browser.execute_script("window.medlensOldPage = true")
    browser.get(url)
    loaded(browser)


def loaded(browser: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script(
            "return !window.medlensOldPage && document.readyState === 'complete'"
        )
    )


def follow(browser: Any, element: Any) -> None:
    """Click a link or button and wait until the next page replaced this one."""
    browser.execute_script("window.medlensOldPage = true")
    element.click()
    loaded(browser)


def rows(browser: Any) -> list[Any]:
    return browser.find_elements("css selector", "#items tbody tr")


def column_outcomes(browser: Any, column: int) -> list[str]:
    script = (
        "return [...document.querySelectorAll('#items tbody tr')]"
        f".map(r => r.querySelectorAll('td[data-outcome]')[{column}].dataset.outcome)"
    )
    return list(browser.execute_script(script))


def test_pages_filters_and_outcomes_agree_with_the_records(
    viewer: Viewer, browser: Any, folder: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    visit(browser, viewer.url + "/")
    assert len(rows(browser)) == 50
    assert browser.find_element("id", "count").text == f"{N_ITEMS} items, 1–50 shown"
    follow(browser, browser.find_element("css selector", "a[rel=next]"))
    assert len(rows(browser)) == N_ITEMS - 50 and "page 2 of 2" in browser.page_source
    wanted = sorted(i for i, r in records(folder / "runs" / "random").items() if r["score"] == 0.0)
    Select(browser.find_element("name", "outcome")).select_by_visible_text("wrong")
    Select(browser.find_element("name", "of")).select_by_visible_text("random")
    Select(browser.find_element("name", "per")).select_by_visible_text("100")
    follow(browser, browser.find_element("id", "apply"))
    shown = [row.get_attribute("data-id") for row in rows(browser)]
    assert sorted(shown) == wanted and set(column_outcomes(browser, 0)) == {"wrong"}
    items = [json.loads(line) for line in (folder / "runs" / "random" / "items.jsonl").open()]
    ct = {i["id"] for i in items if i["meta"]["modality"] == "CT"} & set(wanted)
    Select(browser.find_element("name", "a.modality")).select_by_visible_text("CT")
    follow(browser, browser.find_element("id", "apply"))
    assert sorted(row.get_attribute("data-id") for row in rows(browser)) == sorted(ct)


def test_text_filter_and_kind_filter(viewer: Viewer, browser: Any) -> None:
    visit(browser, viewer.url + "/?q=ONERROR")  # case-insensitive, over every run's answer
    assert [row.get_attribute("data-id") for row in rows(browser)] == ["q4"]
    visit(browser, viewer.url + "/?kind=multi_choice&per=100")
    assert len(rows(browser)) == sum(1 for i in range(N_ITEMS) if i % 7 == 0)


def test_two_runs_side_by_side_on_an_item_page(viewer: Viewer, browser: Any, folder: Path) -> None:
    visit(browser, viewer.url + "/")
    headers = [th.text for th in browser.find_elements("css selector", "#items thead th")]
    assert headers == ["id", "image", "question", "gold", "random", "replayed"]
    follow(browser, browser.find_element("link text", "q2"))
    runs = browser.find_elements("css selector", "section.run")
    assert [run.get_attribute("data-run") for run in runs] == ["random", "replayed"]
    outputs = [run.find_element("css selector", "pre.output").text for run in runs]
    assert outputs == [
        records(folder / "runs" / name)["q2"]["output"] for name in ("random", "replayed")
    ]
    follow(browser, browser.find_element("css selector", "a[rel=next]"))
    assert browser.find_element("css selector", "h1").text.startswith("item q3")


def test_images_load_as_sent(viewer: Viewer, browser: Any) -> None:
    visit(browser, viewer.url + "/item/q7")
    sizes = browser.execute_script(
        "return Promise.all([...document.images].map(i => i.decode().then(() => i.naturalWidth)))"
    )
    assert sizes == [16]  # the 16-pixel PNG, as sent (not a thumbnail)
    visit(browser, viewer.url + "/")
    browser.execute_script("window.scrollTo(0, 0)")
    first = browser.find_element("css selector", "#items img.thumb")
    loaded = browser.execute_script(
        "const i = arguments[0]; return i.decode().then(() => i.naturalWidth)", first
    )
    assert loaded == 16


def test_hostile_answers_show_as_text_and_no_script_runs(viewer: Viewer, browser: Any) -> None:
    for page in ("/item/q3", "/?q=pwned", "/item/q4"):
        visit(browser, viewer.url + page)
        assert browser.title != "pwned"
        assert browser.execute_script("return document.body.getAttribute('data-pwned')") is None
        assert not browser.find_elements("css selector", "#items script, section.run script")
        assert not browser.find_elements(
            "css selector", "section.run img[onerror], #items img[src=x]"
        )
    visit(browser, viewer.url + "/item/q3")
    shown = browser.find_element("css selector", "section[data-run=replayed] pre.output").text
    assert shown == PAYLOAD


def test_judge_verdicts_on_the_item_page_of_a_second_benchmark(
    viewer: Viewer, browser: Any
) -> None:
    visit(browser, viewer.url + "/?bench=1")
    assert "jsonl val" in browser.find_element("css selector", "h1").text
    visit(browser, viewer.url + "/item/o10")  # a paraphrase the rules cannot settle
    verdicts = [v.text for v in browser.find_elements("css selector", "dd.verdict")]
    assert len(verdicts) == 1 and verdicts[0].startswith("equivalent")
    visit(browser, viewer.url + "/item/o0")  # the exact answer: the rules settled it
    assert "settled by the rules" in browser.find_element("css selector", "dd.verdict").text


def http(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_loopback_only_read_only_and_no_script_allowed(viewer: Viewer, folder: Path) -> None:
    before = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }
    status, headers, _ = http(viewer.url + "/item/q3")
    assert status == 200 and "default-src 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]
    assert http(viewer.url + "/", Host="evil.example")[0] == 400  # no DNS rebinding
    post = urllib.request.Request(viewer.url + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=30)
    assert refused.value.code == 405
    assert http(viewer.url + "/item/nope")[0] == 404
    assert http(viewer.url + "/image/0/0/5/q1")[0] == 404
    after = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }
    assert after == before


def test_bad_arguments_are_one_line_errors(folder: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2 and "has no run directories below it" in result.output
    with started(folder / "runs" / "random") as running:
        port = running.url.rsplit(":", 1)[1]
        busy = CliRunner().invoke(app, ["view", str(folder / "runs"), "--port", port])
    assert busy.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.output


@pytest.mark.slow
def test_a_26000_item_run_pages_from_first_to_last(tmp_path: Path, browser: Any) -> None:
    """A 26,000-item run is served page by page (its speed is measured by bench/viewer.py,
    not asserted here: the suite runs on a loaded machine)."""
    bench = write_jsonl_benchmark(tmp_path / "data", 26_000)
    named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "big")
    with started(tmp_path / "runs" / "big") as running:
        visit(browser, running.url + "/")
        assert len(rows(browser)) == 50
        assert browser.find_element("id", "count").text == "26,000 items, 1–50 shown"
        assert "page 1 of 520" in browser.page_source
        visit(browser, running.url + "/?page=520")
        assert len(rows(browser)) == 50
        assert "page 520 of 520" in browser.page_source


def test_report_and_board_link_to_the_viewers_item_pages(
    viewer: Viewer, browser: Any, folder: Path, tmp_path: Path
) -> None:
    from medlens.report.viewer.links import VIEWER_URL

    page = tmp_path / "report.html"
    runs = folder / "runs"
    result = CliRunner().invoke(
        app, ["report", str(runs / "replayed"), "-f", "html", "-o", str(page)]
    )
    assert result.exit_code == 0, result.output
    visit(browser, page.as_uri())
    link = browser.find_element("link text", "q3").get_attribute("href")
    assert link == VIEWER_URL + "/item/q3"
    visit(browser, link.replace(VIEWER_URL, viewer.url))  # the viewer the test started
    assert (
        browser.find_element("css selector", "section[data-run=replayed] pre.output").text
        == PAYLOAD
    )
    board = tmp_path / "board.html"
    result = CliRunner().invoke(
        app, ["board", str(runs / "random"), str(runs / "replayed"), "--by", "modality",
              "--min-n", "1", "-f", "html", "-o", str(board)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    visit(browser, board.as_uri())
    href, tip = browser.execute_script(
        "const a = document.querySelector('svg.heatmap a');"
        "return [a.getAttribute('href'), a.querySelector('title').textContent]"
    )
    n = int(tip.split("n=")[1].split(",")[0])
    visit(browser, href.replace(VIEWER_URL, viewer.url) + "&per=100")
    assert browser.find_element("id", "count").text.startswith(f"{n} items")
