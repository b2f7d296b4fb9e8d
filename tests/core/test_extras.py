"""A core install runs and reports; a command that needs an extra the install lacks says which in
one line (``pip install 'medlens[EXTRA]'``), exits 2 and writes nothing. The missing packages
are simulated in a subprocess by an import hook that refuses them, as an interpreter without
them would."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.core.extras import FEATURE_EXTRAS

WITHOUT = """
import importlib.abc, sys
refused = set(sys.argv[1].split(","))

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in refused:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
sys.argv = ["medlens", *sys.argv[2:]]
from medlens.cli import main
main()
"""
EVERY_EXTRA = sorted({m for modules in FEATURE_EXTRAS.values() for m in modules} | {"statsmodels"})
"""The modules of every optional feature, and statsmodels (a test reference only)."""


def medlens_without(modules: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, ",".join(modules), *args],
        capture_output=True, text=True, cwd=cwd, timeout=600,
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, str]:
    """Every file below `folder` with its sha256 (nothing written means this is unchanged)."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def one_line_naming(done: subprocess.CompletedProcess[str], extra: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"pip install 'medlens[{extra}]'" in lines[0] and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl_benchmark(tmp_path_factory.mktemp("bench"), n_items=30, seed=3)


def test_run_and_report_need_no_extra(bench: Path, tmp_path: Path) -> None:
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path)]
    done = medlens_without(EVERY_EXTRA, *args, "--name", "core", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for extra in (["--format", "text"], ["--format", "json"], ["--format", "md"]):
        report = medlens_without(EVERY_EXTRA, "report", str(tmp_path / "core"), *extra,
                                 cwd=tmp_path)  # fmt: skip
        assert report.returncode == 0, report.stderr
    sliced = medlens_without(EVERY_EXTRA, "slice", str(tmp_path / "core"), "--by", "department",
                             cwd=tmp_path)  # fmt: skip
    assert sliced.returncode == 0, sliced.stderr


def test_an_html_report_without_plots_writes_nothing(bench: Path, tmp_path: Path) -> None:
    run = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "r")
    (run / "results.json").unlink()  # a report would rebuild it: a refused one may not
    before = snapshot(tmp_path)
    done = medlens_without(["matplotlib"], "report", str(run), "--format", "html", "-o",
                           str(tmp_path / "r.html"), cwd=tmp_path)  # fmt: skip
    one_line_naming(done, "plots")
    assert snapshot(tmp_path) == before


def test_the_viewer_without_its_web_stack(bench: Path, tmp_path: Path) -> None:
    run = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "r")
    before = snapshot(tmp_path)
    one_line_naming(medlens_without(["starlette"], "view", str(run), cwd=tmp_path), "viewer")
    assert snapshot(tmp_path) == before


def test_a_hub_dataset_without_huggingface_hub(tmp_path: Path) -> None:
    args = ["run", "--bench", "hfds:someone/some-set", "--model", "random", "--out", "runs"]
    one_line_naming(medlens_without(["huggingface_hub"], *args, cwd=tmp_path), "hub")
    one_line_naming(medlens_without(["huggingface_hub"], "fetch", "someone/set", cwd=tmp_path),
                    "hub")  # fmt: skip
    assert snapshot(tmp_path) == {}


def test_the_demo_without_scikit_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLENS_DATA", str(tmp_path / "data"))  # no demo built before
    args = ["run", "--bench", "demo", "--model", "random", "--out", "runs"]
    one_line_naming(medlens_without(["skimage"], *args, cwd=tmp_path), "demo")
    assert snapshot(tmp_path) == {}
