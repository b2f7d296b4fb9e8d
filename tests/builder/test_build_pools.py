"""Distractor pools widen step by step (same body part and modality → same modality → same
source), the level used is recorded per item and counted; `--strict-pool` keeps the narrowest."""

from __future__ import annotations

import json
from pathlib import Path

from test_build_skips import labels_csv, organ_rows
from typer.testing import CliRunner

from medlens.cli import app

runner = CliRunner()


def wider_rows() -> list[dict[str, str]]:
    """The organ rows plus a chest CT with two labels (too few for 4 options on its own) and a
    lone MR label (its modality's pool holds only itself)."""
    rows = organ_rows()
    rows += [{"image": "chest0.png", "label": "heart", "box": "8,8,24,24", "modality": "CT",
              "body_part": "chest"},
             {"image": "chest1.png", "label": "lung", "box": "8,8,24,24", "modality": "CT",
              "body_part": "chest"},
             {"image": "mr0.png", "label": "meniscus", "box": "8,8,24,24", "modality": "MR",
              "body_part": "knee"}]  # fmt: skip
    return rows


def build(labels: Path, output: Path, *extra: str) -> tuple[int, str, list[dict[str, object]]]:
    args = ["build", str(labels), "--output", str(output), "--granularity", "box", *extra]
    result = runner.invoke(app, args)
    items = (
        [json.loads(line) for line in output.read_text().splitlines()] if output.exists() else []
    )
    return result.exit_code, result.output, items


def by_label(items: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    out = {}
    for item in items:
        options = item["options"]
        assert isinstance(options, dict)
        out[str(options[str(item["answer"])])] = item
    return out


def test_small_pools_widen_and_record_their_level(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, wider_rows())
    code, output, items = build(labels, tmp_path / "w.jsonl")
    assert code == 0, output
    assert "skipped" not in output
    built = by_label(items)
    assert len(built) == 13
    levels = {label: item["meta"]["distractor_pool"] for label, item in built.items()}  # type: ignore[index]
    assert levels["liver"] == levels["drusen"] == "body_part+modality"
    assert levels["heart"] == levels["lung"] == "modality"
    assert levels["meniscus"] == "source"
    ct = {"liver", "kidney", "spleen", "pancreas", "stomach", "heart", "lung"}
    assert set(built["heart"]["options"].values()) <= ct  # type: ignore[union-attr]
    abdomen = {"liver", "kidney", "spleen", "pancreas", "stomach"}
    assert set(built["liver"]["options"].values()) <= abdomen  # type: ignore[union-attr]
    assert ("distractor pools: 10 same body part and modality, 2 same modality, 1 same source"
            in output)  # fmt: skip


def test_strict_pool_keeps_the_narrowest_pool_and_skips(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, wider_rows())
    code, output, items = build(labels, tmp_path / "s.jsonl", "--strict-pool")
    assert code == 0, output
    assert "skipped 3 of 13 labels" in output and "label pool too small for 4 options: 3" in output
    assert len(items) == 10
    assert {item["meta"]["distractor_pool"] for item in items} == {"body_part+modality"}  # type: ignore[index]
    result = runner.invoke(app, ["build", str(labels), "--output", str(tmp_path / "x.jsonl"),
                                 "--granularity", "box", "--strict-pool", "--strict"])  # fmt: skip
    assert result.exit_code == 2
    assert "row 11" in result.output and "pool of source/task/body part/modality: chest/CT" in (
        " ".join(result.output.split())
    )


def test_a_pool_too_small_at_every_level_names_the_widest(tmp_path: Path) -> None:
    rows = [{"image": f"m{i}.png", "label": label, "box": "8,8,24,24", "modality": "MR",
             "body_part": "knee"} for i, label in enumerate(["meniscus", "ligament"])]  # fmt: skip
    rows += organ_rows()[:1]
    labels = labels_csv(tmp_path, rows)
    result = runner.invoke(app, ["build", str(labels), "--output", str(tmp_path / "t.jsonl"),
                                 "--granularity", "box", "--strict"])  # fmt: skip
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert "row 1" in line and "1 gold and 2 usable distractors" in line
    assert "(pool of source/task: all rows)" in line
    assert not (tmp_path / "t.jsonl").exists()


def test_open_items_keep_the_narrowest_pool_as_their_label_set(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, wider_rows())
    code, output, items = build(labels, tmp_path / "o.jsonl", "--options", "0")
    assert code == 0, output
    heart = next(item for item in items if item["answer"] == "heart")
    assert heart["meta"]["labels"] == "heart|lung"  # type: ignore[index]
    assert "distractor_pool" not in heart["meta"]  # type: ignore[operator]
    assert "distractor pools" not in output
