"""Reports of probe runs flag slices that beat chance without their evidence."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from medlens.cli import app

runner = CliRunner()


def probe_run(tmp_path: Path, model: str, probe: str) -> tuple[dict[str, object], str]:
    args = ["run", "--bench", "demo", "--model", model, "--probe", probe, "--out", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run_dir = next(tmp_path.iterdir())
    markdown = runner.invoke(app, ["report", str(run_dir), "--format", "md"])
    assert markdown.exit_code == 0, markdown.output
    return json.loads((run_dir / "results.json").read_text()), result.output + markdown.output


def test_a_model_answering_without_the_image_is_flagged(tmp_path: Path) -> None:
    # The oracle knows the gold whatever the pixels: exactly what leakage looks like.
    results, output = probe_run(tmp_path, "oracle", "blank-image")
    suspects = results["leakage_suspects"]
    assert isinstance(suspects, list) and suspects
    assert any(s["axis"] == "overall" and not s["small_n"] for s in suspects)
    assert "leakage suspects under probe blank-image" in output
    assert "granularity=box" in output


def test_a_guesser_is_not_flagged(tmp_path: Path) -> None:
    results, output = probe_run(tmp_path, "random", "no-image")
    assert results["leakage_suspects"] == [] or all(
        s["small_n"]
        for s in results["leakage_suspects"]  # type: ignore[union-attr]
    )
    assert "leakage suspects under probe no-image" in output


def test_shuffled_options_are_not_a_leakage_probe(tmp_path: Path) -> None:
    results, _ = probe_run(tmp_path, "oracle", "shuffle-options")
    assert results["leakage_suspects"] is None
    assert results["overall"]["score"] == 1.0  # type: ignore[index]
