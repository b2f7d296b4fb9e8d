"""`medlens cost`: token sums, prices, judges counted apart, projection interval, bad --price."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from cli_runs import invoke_run
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.analysis.cost import Price, estimate_prompt_cost, parse_price, run_cost
from medlens.core.errors import SpecError

N_ITEMS = 9


def _bench(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    bench = folder / "bench.jsonl"
    with open(bench, "w", encoding="utf-8") as handle:
        for index in range(N_ITEMS):
            question = f"[[q{index}]] Which finding?" + " More context." * index  # lengths vary
            item = {"id": str(index), "question": question, "kind": "choice",
                    "options": {"A": "x", "B": "y"}, "answer": "A", "images": [], "meta": {}}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    return bench


def _openai_runs(tmp_path: Path, names: tuple[str, ...], *extra: str) -> list[Path]:
    """Runs of the same benchmark against one loopback server (so the cache can answer)."""
    bench = _bench(tmp_path / "data")
    with serve(ServerConfig(gold=gold_by_marker({f"q{i}": "A" for i in range(N_ITEMS)}))) as server:
        spec = f"openai:tiny?base_url={server.base_url}&max_retries=0"
        for name in names:
            result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", name, *extra)
            assert result.exit_code == 0, result.output
    return [tmp_path / "runs" / name for name in names]


def _openai_run(tmp_path: Path, name: str, *extra: str) -> Path:
    return _openai_runs(tmp_path, (name,), *extra)[0]


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def test_cost_of_a_real_run_with_a_judge(tmp_path: Path) -> None:
    run = _openai_run(tmp_path, "r", "--no-cache")
    records = _records(run)
    tokens_in = sum(r["usage"]["prompt_tokens"] for r in records)
    tokens_out = sum(r["usage"]["completion_tokens"] for r in records)
    assert tokens_in > 0 and tokens_out > 0
    judge = run / "judges" / "eq"
    judge.mkdir(parents=True)
    lines = [{"id": "0", "repeat": 0, "by": "judge", "status": "ok", "score": 1.0, "cached": False,
              "usage": {"prompt_tokens": 1000, "completion_tokens": 200}},
             {"id": "1", "repeat": 0, "by": "rule", "status": "ok", "score": 1.0, "cached": False,
              "usage": {}}]  # fmt: skip
    (judge / "judgements.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines) + '{"id": "2", "us'
    )
    result = run_cost(run, Price(2.5, 10.0), scale_to=1000)
    model = result["tokens"]["model"]
    assert (model["input"], model["output"]) == (tokens_in, tokens_out)
    assert model["cost"] == pytest.approx((tokens_in * 2.5 + tokens_out * 10.0) / 1e6)
    eq = result["tokens"]["judges"]["eq"]
    assert (eq["input"], eq["output"], eq["lines"], eq["with_usage"]) == (1000, 200, 2, 1)
    assert eq["cost"] == pytest.approx((1000 * 2.5 + 200 * 10.0) / 1e6)
    assert result["cost"] == pytest.approx(model["cost"] + eq["cost"])
    per_item = [(r["usage"]["prompt_tokens"] * 2.5 + r["usage"]["completion_tokens"] * 10.0) / 1e6
                for r in records]  # fmt: skip
    lo, hi = stats.t.interval(
        0.95, len(per_item) - 1, loc=np.mean(per_item), scale=stats.sem(per_item)
    )
    projected = result["projected"]["model"]
    assert projected["cost"] == pytest.approx(1000 * np.mean(per_item))
    assert projected["ci"] == pytest.approx([1000 * lo, 1000 * hi])
    assert result["projected"]["items"] == 1000


def test_cached_records_are_counted_but_not_billed(tmp_path: Path) -> None:
    # one live check of the cached answers (of 21 by default: tests/execution/test_cache_live_check)
    first, second = _openai_runs(tmp_path, ("a", "b"), "--cache-check", "1")
    live = [r for r in _records(second) if not r["cached"]]
    assert len(live) == 1  # the one call that checks the server still serves the cached model
    billed = run_cost(second, Price(1.0, 1.0))
    checked = live[0]["usage"]
    assert billed["tokens"]["model"]["input"] == checked["prompt_tokens"]
    assert billed["cost"] == pytest.approx(
        (checked["prompt_tokens"] + checked["completion_tokens"]) / 1e6
    )
    fresh = run_cost(first, Price(1.0, 1.0))
    assert (
        billed["tokens"]["model"]["cached"]["input"]
        == fresh["tokens"]["model"]["input"] - checked["prompt_tokens"]
    )
    assert billed["projected"]["model"]["cost"] == pytest.approx(
        fresh["projected"]["model"]["cost"]
    )
    assert fresh["projected"]["items"] == N_ITEMS  # default: the whole benchmark


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("input=2.5", "missing output=USD_PER_1M"),
        ("input=abc,output=1", "input='abc' is not a non-negative number"),
        ("input=-1,output=1", "input='-1' is not a non-negative number"),
        ("in=1,output=1", "expected input=USD_PER_1M,output=USD_PER_1M"),
        ("2.5,10", "expected input=USD_PER_1M,output=USD_PER_1M"),
        ("input=nan,output=1", "is not a non-negative number"),
    ],
)
def test_malformed_price_is_a_spec_error(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(")):
        parse_price(text)


def test_cli_bad_price_is_one_line_exit_2_and_changes_nothing(tmp_path: Path) -> None:
    run = _openai_run(tmp_path, "r", "--no-cache")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in run.iterdir())
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "cost", str(run), "--price", "input=1;output=2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "medlens: error: --price 'input=1;output=2': input='1;output=2' is not a non-negative number"
    ]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in run.iterdir()) == before
    ok = subprocess.run(
        [sys.executable, "-m", "medlens", "cost", str(run), "--price", "input=3,output=15",
         "--scale-to", "500", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    data = json.loads(ok.stdout)
    assert {"tokens", "cost", "projected"} <= set(data)
    assert data["projected"]["items"] == 500


def test_estimate_prompt_cost_arithmetic() -> None:
    estimate = estimate_prompt_cost(
        ["a" * 400, "b" * 800], Price(2.0, 8.0), output_tokens_per_item=10,
        chars_per_token=4.0, tokens_per_image=85, images_per_prompt=[1, 2],
    )  # fmt: skip
    assert estimate["tokens"] == {"input": 300 + 3 * 85, "output": 20}
    assert estimate["cost"] == pytest.approx(((300 + 255) * 2.0 + 20 * 8.0) / 1e6)
    with pytest.raises(SpecError):
        estimate_prompt_cost(["x"], Price(1, 1), output_tokens_per_item=1, chars_per_token=0)


def test_judge_projection_averages_over_every_item(tmp_path: Path) -> None:
    run = _openai_run(tmp_path, "r", "--no-cache")
    judge = run / "judges" / "rubric"
    judge.mkdir(parents=True)
    line = {"id": "0", "repeat": 0, "by": "judge", "status": "ok", "cached": False,
            "usage": {"prompt_tokens": 9_000, "completion_tokens": 0}}  # fmt: skip
    (judge / "judgements.jsonl").write_text(json.dumps(line) + "\n")
    result = run_cost(run, Price(1.0, 0.0), scale_to=90)
    # one judged item of nine: 0.009 USD spread over 9 items, times 90
    assert result["projected"]["judges"]["cost"] == pytest.approx(90 * 0.009 / N_ITEMS)
    assert result["cost_by"]["judges"] == pytest.approx(0.009)
