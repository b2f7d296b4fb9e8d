"""Every knob that multiplies work has a ceiling (or asks for --yes), refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from board_runs import demo_runs, one_error_line  # noqa: F401 - the session fixture
from judge_fixtures import finished_run
from medlens.checks.audit import audit
from medlens.cli import app
from medlens.core.errors import MedlensError
from medlens.core.items import Benchmark, Item

runner = CliRunner()
OPENAI = "openai:m?base_url=http://127.0.0.1:9/v1"


def test_board_resamples_have_a_ceiling(demo_runs: dict[str, Path]) -> None:  # noqa: F811
    runs = [str(demo_runs["oracle"]), str(demo_runs["first"])]
    line = one_error_line(runner.invoke(app, ["board", *runs, "--resamples", "100000000"]))
    assert "--resamples 100000000: at most 100,000" in line
    assert runner.invoke(app, ["board", *runs, "--resamples", "100000", "--json"]).exit_code == 0


@pytest.mark.parametrize("samples", [65, 1000])
def test_self_consistency_beyond_64_needs_yes(samples: int) -> None:
    args = ["run", "--bench", "demo", "--model", OPENAI, "--dry-run",
            "--strategy", f"self-consistency:{samples}"]  # fmt: skip
    line = one_error_line(runner.invoke(app, args))
    assert f"self-consistency:{samples}" in line and "at most 64" in line and "--yes" in line
    confirmed = runner.invoke(app, [*args, "--yes"])
    assert confirmed.exit_code == 0, confirmed.output


def test_judge_repeats_beyond_64_need_yes(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=4, n_closed=0)
    args = ["judge", str(run), "--judge", OPENAI, "--protocol", "equivalence", "--repeats", "65"]
    line = one_error_line(runner.invoke(app, args))
    assert "--repeats 65: at most 64" in line and "--yes" in line
    assert not (run / "judges").exists()


def test_audit_n_has_a_ceiling(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n")
    line = one_error_line(
        runner.invoke(app, ["audit", "demo", "--corpus", str(corpus), "--n", "100000"])
    )
    assert "--n 100000: at most 32" in line


def test_audit_stops_before_the_corpus_when_no_item_can_be_audited(tmp_path: Path) -> None:
    items = [Item(id=str(i), question="Is this CT?", kind="yes_no", answer="yes") for i in range(5)]
    bench = Benchmark("t", "t", "val", True, lambda: iter(items))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("is this ct " * 1000 + "\n")
    read: list[int] = []
    with pytest.raises(MedlensError, match="no item has 20 word tokens"):
        audit(bench, [corpus], n=20, on_tokens=read.append)
    assert read == []  # the corpus was never read
