"""The documented Python API: the example in docs/python-api.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import medlens

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def example_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(example_code(), str(DOC), "exec"), {"__name__": "__doc_example__"})
    printed = capsys.readouterr().out
    assert re.search(r"^demo: \d+ items, split val$", printed, flags=re.M)
    assert re.search(r"^n=40 score=0\.\d{3} CI=\[", printed, flags=re.M)
    assert "refused:" in printed and "different spec" in printed
    assert (tmp_path / "runs" / "api-demo" / "records.jsonl").read_text().count("\n") == 40


def test_api_names_are_exported_and_survive_importing_the_run_module() -> None:
    import medlens.execution.evaluate as evaluate_module
    from medlens.api import evaluate

    assert medlens.evaluate is evaluate and callable(medlens.evaluate)
    assert (
        evaluate_module.RunOptions
    )  # the run's own module keeps its names for imports and patching
    for name in ("evaluate", "load_benchmark", "load_results"):
        assert name in medlens.__all__


def test_unknown_options_are_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(medlens.SpecError, match=r"unknown option\(s\) colour"):
        medlens.evaluate("demo", "random", out=tmp_path, colour="red")
