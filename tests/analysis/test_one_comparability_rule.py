"""One rule decides whether a published row stands beside a run, row by row, in `board`,
`calibrate` and a study's boards (issue 49: a user's table holding rows for several item sets
showed another item set's rows as comparable on `board`, while `calibrate` refused the same
row)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.reference_tables import load_reference
from medlens.analysis.references import calibrate
from medlens.cli import app
from medlens.core.errors import MedlensError
from provenance_fixture import write_choice_benchmark, write_replay


def two_item_sets(tmp_path: Path, run: Path) -> str:
    """A user's table: two rows on the run's own 20 items, two on another set of 30 items."""
    content = json.loads((run / "run.json").read_text())["spec"]["benchmark"]["content_hash"]
    path = tmp_path / "mine.csv"
    path.write_text(
        "model,split,selection,n_items,content_hash,overall\n"
        f"Ours-A,val,,20,{content},61.0\n"
        f"Ours-B,val,,20,{content},48.0\n"
        "Other-A,val,,30,,72.0\n"
        "Other-B,val,,30,,33.0\n",
        encoding="utf-8",
    )
    return str(path)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    bench = write_choice_benchmark(tmp_path / "data", 20)
    replay = write_replay(tmp_path / "data", 20, 11)
    return named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "r")


def test_board_shows_only_the_rows_of_the_runs_item_set(tmp_path: Path, run: Path) -> None:
    table = two_item_sets(tmp_path, run)
    shown = CliRunner().invoke(app, ["board", str(run), "--reference", table, "--json"])
    assert shown.exit_code == 0, shown.output
    board = json.loads(shown.output)
    assert [r["model"] for r in board["references"]] == ["Ours-A", "Ours-B"]
    assert board["not_comparable"] == {}
    text = CliRunner().invoke(app, ["board", str(run), "--reference", table]).output
    assert "Ours-A" in text and "Other-A" not in text


def test_calibrate_and_board_agree_row_by_row(tmp_path: Path, run: Path) -> None:
    from medlens.analysis.comparability import comparable_rows

    path = two_item_sets(tmp_path, run)
    assert calibrate(run, path, "Ours-A")["comparable"] is True
    with pytest.raises(MedlensError, match="20 items, the published set has 30"):
        calibrate(run, path, "Other-A")
    table = load_reference(path)
    spec = json.loads((run / "run.json").read_text())["spec"]
    for row in table.rows:  # the rule both ask, one row at a time
        alone = comparable_rows(table, [row], spec, 20, {"kind"})
        assert (not alone.reasons) == row.model.startswith("Ours")
    together = comparable_rows(table, list(table.rows), spec, 20, {"kind"})
    assert [r.model for r in together.rows] == ["Ours-A", "Ours-B"] and not together.reasons


def test_a_run_of_no_item_set_is_refused_with_the_nearest_sets_reasons(
    tmp_path: Path, run: Path
) -> None:
    path = tmp_path / "other.csv"
    path.write_text("model,split,selection,n_items,overall\nX,val,,30,50.0\n"
                    "Y,val,where modality=CT,20,40.0\n", encoding="utf-8")  # fmt: skip
    refused = CliRunner().invoke(app, ["board", str(run), "--reference", str(path)])
    assert refused.exit_code == 2
    assert "20 items, the published set has 30" in refused.output  # one reason: the nearest set
    assert "selection" not in refused.output
    kept = CliRunner().invoke(app, ["board", str(run), "--reference", str(path),
                                    "--allow-partial", "--json"])  # fmt: skip
    board = json.loads(kept.output)
    assert [r["model"] for r in board["references"]] == ["X"]
    assert board["not_comparable"]["r"].startswith("not comparable: 20 items")
