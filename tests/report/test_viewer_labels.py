"""The viewer's index tells two same-named benchmarks apart, and no id or answer with a bidi
control can turn a heading around (every text a page shows passes core.terminal)."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from cli_runs import named_run
from medlens.report.viewer.app import viewer_app
from medlens.report.viewer.catalog import distinct_labels, load_catalog


def bench(folder: Path, ids: list[str], question: str = "Which?") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "val.jsonl"
    path.write_text("".join(
        json.dumps({"id": i, "question": question, "kind": "choice",
                    "options": {"A": "x", "B": "y"}, "answer": "A"}) + "\n" for i in ids
    ))  # fmt: skip
    return path


def test_two_same_named_benchmarks_get_distinct_labels(tmp_path: Path) -> None:
    one = bench(tmp_path / "one", ["a", "b"])
    other = bench(tmp_path / "other", ["c", "d"], "Which one?")
    runs = tmp_path / "runs"
    named_run(f"jsonl:{one}", "random", runs, "r1")
    named_run(f"jsonl:{other}", "random", runs, "r2")
    labels = [group.label for group in load_catalog([runs])]
    assert len(set(labels)) == 2, labels
    assert all(label.startswith("jsonl") for label in labels)


def test_labels_widen_by_file_then_by_content_hash() -> None:
    benches = {
        "gmai:a/VAL.tsv": {"name": "gmai", "split": "val", "content_hash": "11112222aaaa"},
        "gmai:b/VAL.tsv": {"name": "gmai", "split": "val", "content_hash": "33334444bbbb"},
        "gmai:c/OTHER.tsv": {"name": "gmai", "split": "val", "content_hash": "5555"},
        "demo": {"name": "demo", "split": ""},
    }
    assert distinct_labels(benches) == {
        "gmai:a/VAL.tsv": "gmai val (VAL.tsv) (11112222)",
        "gmai:b/VAL.tsv": "gmai val (VAL.tsv) (33334444)",
        "gmai:c/OTHER.tsv": "gmai val (OTHER.tsv)",
        "demo": "demo",
    }


def test_a_bidi_control_in_an_id_cannot_flip_the_heading(tmp_path: Path) -> None:
    hostile = "q1\u202eevil\u2066"
    runs = tmp_path / "runs"
    named_run(f"jsonl:{bench(tmp_path / 'b', [hostile, 'q2'])}", "random", runs, "r")
    client = TestClient(viewer_app(load_catalog([runs])), base_url="http://127.0.0.1")
    listing = client.get("/")
    assert listing.status_code == 200
    item_link = f"/item/{hostile}"
    page = client.get(item_link)
    assert page.status_code == 200, page.text
    for text in (listing.text, page.text):
        assert "\u202e" not in text and "\u2066" not in text
    assert "item q1\\u202eevil\\u2066" in page.text
