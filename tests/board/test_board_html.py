"""`medlens board --format html`: self-contained, forest plot and heatmap, and untrusted run
names (folders called ``<img onerror=…>``) stay text — checked in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from board_runs import demo_runs, invoke_board
from browser import browse

__all__ = ["demo_runs"]
EVIL_RUN = "<img src=x onerror=\"document.body.dataset.pwned='img'\">"  # no comma: --pairs
EVIL_MODEL = "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>&amp;"


@pytest.fixture(scope="module")
def evil_board(demo_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("board-html")
    evil = folder / EVIL_RUN
    shutil.copytree(demo_runs["random_1"], evil)
    run = json.loads((evil / "run.json").read_text())
    run["spec"]["model"] = EVIL_MODEL  # the display name is untrusted too
    (evil / "run.json").write_text(json.dumps(run))
    page = folder / "board.html"
    result = invoke_board(demo_runs["oracle"], evil, demo_runs["first"], demo_runs["prior"],
                          "--by", "granularity", "--pairs", f"{EVIL_RUN}:oracle",
                          "--format", "html", "--output", page)  # fmt: skip
    assert result.exit_code == 0, result.output
    return page


def test_board_page_is_self_contained_and_escaped(evil_board: Path) -> None:
    page = evil_board.read_text(encoding="utf-8")
    assert not re.search(r"src=\"(https?:)?//", page)
    # links leave only for the local viewer's pages (navigation, never a load)
    hosts = set(re.findall(r"href=\"(?:https?:)?//([^/\"]*)", page))
    assert hosts == {"127.0.0.1:8765"}
    assert page.count('<svg class="forest"') == 1 and page.count('<svg class="heatmap"') == 1
    forest = page.split('<svg class="forest"', 1)[1].split("</svg>", 1)[0]
    assert forest.count("<circle") == 4  # one dot per model
    assert "<img src=x" not in page and "<svg onload" not in page
    assert "&lt;img src=x onerror=" in page and "&lt;svg onload=" in page
    assert "&amp;amp;" in page  # an entity in a name is shown, not decoded
    heatmap = page.split('<svg class="heatmap"', 1)[1].split("</svg>", 1)[0]
    assert heatmap.count("<rect") == 4 * 4  # models × granularity values


def test_board_renders_in_chromium_without_running_names(evil_board: Path, tmp_path: Path) -> None:
    dom = browse(evil_board, tmp_path / "profile", "--dump-dom").stdout
    body = dom.split("<body", 1)[1].split(">", 1)[0]
    assert 'data-board="1"' in body  # the page's own script ran
    assert "data-pwned" not in body
    assert not re.search(r"<(img|svg)[^>]*on(error|load)=", dom)
    cells = "".join(re.findall(r"<td[^>]*>(.*?)</td>", dom, re.S))
    assert "&lt;img src=x onerror=" in cells and "&lt;svg onload=" in cells
    texts = "".join(re.findall(r"<text[^>]*>(.*?)</text>", dom, re.S))
    # names inside the SVG plots (run names since plots name rows by run) stay text as well
    assert "&lt;img src=x onerror=" in texts
