"""`medlens runs`, `show`, `run --dry-run` and `run --config` through real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medlens.analysis.results import build_results
from medlens.runs.store import RunStore


def medlens(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEDLENS_CACHE": str(tmp / "cache"), "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "medlens", *args],
        capture_output=True, text=True, timeout=180, env=env, cwd=tmp,
    )  # fmt: skip


def write_bench(folder: Path, n_items: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bench.jsonl"
    lines = [
        {"id": f"i{k}", "question": f"Which organ is number {k}?", "kind": "choice",
         "options": {"A": "liver", "B": "lung", "C": "heart"}, "answer": "ABC"[k % 3],
         "meta": {"modality": "CT" if k % 2 else "MR"}}
        for k in range(n_items)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    bench = write_bench(tmp_path / "bench")
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model", "first", "--name", "r")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "runs" / "r"


def test_runs_lists_each_run_with_n_score_and_ci(run_dir: Path, tmp_path: Path) -> None:
    proc = medlens(tmp_path, "runs", "--json")
    assert proc.returncode == 0, proc.stderr
    (listed,) = json.loads(proc.stdout)
    results = build_results(RunStore.open(run_dir))
    assert listed["name"] == "r" and listed["model"] == "first"
    assert (listed["done"], listed["total"], listed["errors"]) == (6, 6, 0)
    assert listed["n"] == results["overall"]["n"] and listed["score"] == results["overall"]["score"]
    assert listed["ci"] == results["overall"]["ci"] and listed["writer"] is None
    table = medlens(tmp_path, "runs")
    assert "r " in table.stdout and "6/6" in table.stdout and "first" in table.stdout
    assert medlens(tmp_path, "runs", "nowhere").returncode == 2


def test_show_prints_prompt_output_extraction_and_judge_verdicts(
    run_dir: Path, tmp_path: Path
) -> None:
    judges = run_dir / "judges" / "j1"
    judges.mkdir(parents=True)
    verdict = {"id": "i1", "repeat": 0, "by": "judge", "status": "ok", "score": 1.0,
               "verdict": {"equivalent": True, "reason": "same organ"}}  # fmt: skip
    other = {**verdict, "id": "i2"}
    (judges / "judgements.jsonl").write_text(json.dumps(verdict) + "\n" + json.dumps(other) + "\n")
    proc = medlens(tmp_path, "show", str(run_dir), "i1")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needle in ("question: Which organ is number 1?", "  B. lung", "gold: B",
                   "Answer with the letter of the single correct option", "output: A",
                   "method bare_letter", "score: 0.0", "judge j1 (repeat 0, judge): status ok",
                   '"reason": "same organ"'):  # fmt: skip
        assert needle in out, needle
    shown = json.loads(medlens(tmp_path, "show", str(run_dir), "i1", "--json").stdout)
    assert shown["record"]["output"] == "A" and list(shown["judgements"]) == ["j1"]
    missing = medlens(tmp_path, "show", str(run_dir), "nope")
    assert missing.returncode == 2 and "no item with id 'nope'" in missing.stderr


def test_dry_run_counts_items_shows_prompts_and_writes_nothing(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench", 5)
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model", "random", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "5 items, 5 to send (0 already answered); no model was called" in proc.stdout
    assert (
        proc.stdout.count("--- item ") == 3 and "Question: Which organ is number 0?" in proc.stdout
    )
    assert not (tmp_path / "runs").exists()


def test_config_file_sets_options_and_flags_override(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench", 6)
    config = tmp_path / "eval.toml"
    config.write_text(
        f'bench = "jsonl:{bench}"\nmodel = "random"\nname = "cfg"\nlimit = 2\nseed = 3\n'
        "max-error-rate = 0.5\n"
    )
    proc = medlens(tmp_path, "run", "--config", str(config), "--limit", "4")
    assert proc.returncode == 0, proc.stderr
    run = json.loads((tmp_path / "runs" / "cfg" / "run.json").read_text())
    assert run["spec"]["seed"] == 3 and run["spec"]["model"] == "random?seed=3"
    assert (tmp_path / "runs" / "cfg" / "records.jsonl").read_text().count("\n") == 4
    config.write_text('bench = "demo"\nmodle = "random"\n')
    bad = medlens(tmp_path, "run", "--config", str(config))
    assert bad.returncode == 2 and "key 'modle': not an option of this command" in bad.stderr
