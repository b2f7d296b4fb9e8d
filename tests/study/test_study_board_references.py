"""A study board's published table is checked before the study's first request, with the rule
`board` and `calibrate` use; `allow_partial` per board keeps such runs, labelled (issue 49: a
board with `reference` on a non-official file was refused only after every run, and the study
file had no `allow_partial`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmai_fixture import write_gmai_tsv
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from provenance_fixture import write_gmai_choice_tsv
from study_fixtures import openai_spec, write_shared_bench, write_study


def other_item_set(tmp_path: Path) -> Path:
    """A user's table whose rows are on 30 items (the study's benchmark has 12)."""
    path = tmp_path / "mine.csv"
    path.write_text("model,split,selection,n_items,overall\nPaper,val,,30,55.0\n",
                    encoding="utf-8")  # fmt: skip
    return path


def run_study(
    tmp_path: Path, board: dict[str, object], bench: str, golds: dict[str, str]
) -> tuple[int, str, int]:
    """(exit code, output, requests the model server saw)."""
    with serve(ServerConfig(gold=gold_by_marker(golds))) as server:
        path = write_study(tmp_path / "s.toml", "s", {"m": openai_spec(server.base_url)},
                           {"a": bench}, boards=[{"benchmark": "a", **board}])  # fmt: skip
        result = CliRunner().invoke(app, ["study", str(path), "--out", str(tmp_path / "studies"),
                                          "--no-reports", "--no-cache"])  # fmt: skip
        return result.exit_code, result.output, int(server.stats["requests"])


def test_a_board_off_its_tables_item_set_is_refused_before_the_first_request(
    tmp_path: Path,
) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 12, 3)
    board = {"reference": str(other_item_set(tmp_path))}
    code, output, requests = run_study(tmp_path, board, bench, golds)
    assert code == 2 and requests == 0
    line = output.strip().splitlines()
    assert len(line) == 1 and "s.toml, line " in line[0] and "key boards[1].reference" in line[0]
    assert "12 items, the published set has 30" in line[0] and "allow_partial = true" in line[0]
    assert not (tmp_path / "studies").exists()


def test_allow_partial_keeps_the_board_labelled(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 12, 3)
    board = {"reference": str(other_item_set(tmp_path)), "allow_partial": True}
    code, output, requests = run_study(tmp_path, board, bench, golds)
    assert code == 0, output
    assert requests == 12
    built = json.loads((tmp_path / "studies" / "s" / "boards" / "a.json").read_text())
    assert built["not_comparable"]["m"].startswith("not comparable: 12 items")


def test_a_non_official_gmai_file_is_refused_before_the_first_request(tmp_path: Path) -> None:
    tsv = write_gmai_choice_tsv(tmp_path / "data", 20)
    code, output, requests = run_study(tmp_path, {"reference": "gmai-val"}, f"gmai:{tsv}", {})
    assert code == 2 and requests == 0
    assert "not the official file" in output and "key boards[1].reference" in output


def test_a_layout_board_asked_not_to_keep_partial_runs_is_checked_too(tmp_path: Path) -> None:
    tsv = tmp_path / "data" / "val.tsv"
    tsv.parent.mkdir()
    write_gmai_tsv(tsv, n_rows=12)  # GMAI's axes, not its official file
    board = {"layout": "gmai", "allow_partial": False}
    code, output, requests = run_study(tmp_path, board, f"gmai:{tsv}", {})
    assert code == 2 and requests == 0 and "key boards[1].allow_partial" in output


@pytest.mark.parametrize("value", ['"yes"', "1"])
def test_allow_partial_must_be_true_or_false(tmp_path: Path, value: str) -> None:
    bench, _ = write_shared_bench(tmp_path / "a", 4, 2)
    path = write_study(tmp_path / "s.toml", "s", {"m": "random"}, {"a": bench},
                       boards=[{"benchmark": "a"}])  # fmt: skip
    path.write_text(path.read_text() + f"allow_partial = {value}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["study", str(path), "--out", str(tmp_path / "studies")])
    assert result.exit_code == 2 and "key boards[1].allow_partial" in result.output
    assert not (tmp_path / "studies").exists()
