"""Axis tables: ids, paths and JSON are not tabulated, nor a renamed copy of a canonical axis."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.results import breakdown_axes
from medlens.analysis.score_table import score_table
from medlens.cli import app
from medlens.core.items import Item


def slake_like_items(n: int = 40) -> list[Item]:
    return [
        Item(
            id=f"q{i}",
            question=f"Which organ {i}?",
            kind="open",
            answer="liver",
            meta={
                "modality": ["CT", "MR", "X-Ray"][i % 3],
                "content_type": ["Organ", "Position", "Size", "Abnormality"][i % 4],
                "img_name": f"xmlab{i // 2}/source.jpg",  # a path
                "qid": str(10_000 + i),  # an id: one value per item
                "organ_boxes": json.dumps({"Liver": [i, i, 10, 10]}),  # JSON
                "location": ["Abdomen", "Chest", "Head"][i % 3],  # renames nothing, but pairs
                "imaging": ["CT", "MR", "X-Ray"][i % 3],  # a renamed copy of `modality`
            },
        )
        for i in range(n)
    ]


def records_for(items: list[Item]) -> dict[str, dict[str, object]]:
    return {
        it.id: {"id": it.id, "score": float(k % 2), "error": None} for k, it in enumerate(items)
    }


def test_ids_paths_json_and_renamed_copies_get_no_table() -> None:
    items = slake_like_items()
    axes = breakdown_axes(score_table(items, records_for(items)))
    assert "modality" in axes and "content_type" in axes
    for hidden in ("img_name", "qid", "organ_boxes", "imaging"):
        assert hidden not in axes, hidden


def test_a_small_benchmark_keeps_its_few_distinct_values() -> None:
    """Ten items with ten values are too few to call the field an id."""
    items = [
        Item(id=str(i), question="Q?", kind="open", answer="a", meta={"organ": f"organ {i}"})
        for i in range(10)
    ]
    assert breakdown_axes(score_table(items, records_for(items))) == ["organ"]


def test_the_report_shows_no_id_or_path_table(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(it.to_json()) + "\n" for it in slake_like_items()))
    run = named_run(f"jsonl:{path}", "first", tmp_path / "runs", "r")
    text = CliRunner().invoke(app, ["report", str(run)]).output
    assert "by modality" in text and "by content_type" in text
    assert "by img_name" not in text and "by qid" not in text and "by imaging" not in text
