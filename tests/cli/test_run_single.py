"""`run` is one model on one benchmark: a repeated --model or --bench is refused (exit 2,
nothing written) and points at `medlens study`, on the command line and in a --config file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlens.cli import app


@pytest.mark.parametrize(
    "args",
    [
        ["--bench", "demo", "--model", "random", "--model", "first"],
        ["--bench", "demo", "--bench", "demo", "--model", "random"],
    ],
)
def test_a_repeated_model_or_bench_is_refused_and_points_at_study(
    tmp_path: Path, args: list[str]
) -> None:
    result = CliRunner().invoke(app, ["run", *args, "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2
    assert "given 2 times" in result.output and "medlens study" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()


def test_a_config_file_names_one_model_as_text_and_a_list_is_refused(tmp_path: Path) -> None:
    one = tmp_path / "one.toml"
    one.write_text('bench = "demo"\nmodel = "random"\nlimit = 3\n', encoding="utf-8")
    out = tmp_path / "runs"
    result = CliRunner().invoke(
        app, ["run", "--config", str(one), "--out", str(out), "--name", "a"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "a" / "results.json").is_file()
    two = tmp_path / "two.toml"
    two.write_text('bench = "demo"\nmodel = ["random", "first"]\n', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["run", "--config", str(two), "--out", str(out), "--name", "b"]
    )
    assert result.exit_code == 2
    assert "--model given 2 times (random, first)" in result.output
    assert not (out / "b").exists()
