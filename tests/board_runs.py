"""Real baseline runs on the embedded demo benchmark, made once per test session for the board
tests, and a helper that calls `medlens board` through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli_runs import named_run
from medlens.cli import app

MODELS = {
    "oracle": "oracle",
    "random_1": "random?seed=1",
    "random_2": "random?seed=2",
    "first": "first",
    "prior": "prior",
}


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory, _session_data: Path) -> dict[str, Path]:
    """run folder name → run directory, for the five baselines on `--bench demo`."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("MEDLENS_DATA", str(_session_data))
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path_factory.mktemp("board-cache")))
    out = tmp_path_factory.mktemp("board-runs")
    try:
        return {name: named_run("demo", model, out, name) for name, model in MODELS.items()}
    finally:
        monkeypatch.undo()


def invoke_board(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["board", *(str(a) for a in args)])


def board_json(*args: str | Path) -> dict[str, Any]:
    result = invoke_board(*args, "--json")
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def one_error_line(result: Result) -> str:
    """The single `medlens: error:` line of a refused command (exit 2, no traceback)."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("medlens: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def demo_copy(demo_runs: dict[str, Path], folder: Path, name: str, lines: slice) -> Path:
    """A jsonl benchmark of some demo items (`lines` of items.jsonl), with copies of their
    images: the demo cache is shared by the whole test session and must stay as built."""
    import shutil

    (folder / "images").mkdir(parents=True, exist_ok=True)
    items = []
    for line in (demo_runs["oracle"] / "items.jsonl").read_text().splitlines()[lines]:
        item = json.loads(line)
        for image in item["images"]:
            copy = folder / "images" / Path(image["path"]).name
            shutil.copy(image["path"], copy)
            image["path"] = str(copy)
        items.append(json.dumps(item))
    bench = folder / name
    bench.write_text("\n".join(items) + "\n")
    return bench
