"""The `replay:FILE` model: predictions from VLMEvalKit tables or another medlens run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.api import load_model
from medlens.core.errors import InputError, SpecError
from medlens.core.items import Item
from medlens.models import ModelContext, Request
from medlens.models.replay import ReplayModel, load_predictions


def ask(model: ReplayModel, item_id: str) -> tuple[str | None, str | None]:
    item = Item(id=item_id, question="q", kind="choice", options={"A": "x", "B": "y"}, answer="A")
    response = asyncio.run(
        model.generate(Request(item=item, messages=(), params={}, fingerprint="f"))
    )
    return response.text, None if response.error is None else response.error.type


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".xlsx"])
def test_tables_of_every_format(tmp_path: Path, suffix: str) -> None:
    frame = pd.DataFrame(
        {
            "Index": [1, 2, 3],
            "question": ["a", "b", "c"],
            "Prediction": ["A", "", "The answer is B"],
        }
    )
    path = tmp_path / f"pred{suffix}"
    if suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    assert load_predictions(path) == {"1": "A", "2": "", "3": "The answer is B"}


def test_float_indices_from_spreadsheets_become_item_ids(tmp_path: Path) -> None:
    pd.DataFrame({"index": [10.0, 11.0], "prediction": ["A", "B"]}).to_excel(
        tmp_path / "p.xlsx", index=False
    )
    assert load_predictions(tmp_path / "p.xlsx") == {"10": "A", "11": "B"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("index\tanswer\n1\tA\n", r"pred\.tsv, header: no 'prediction' column \(columns: index, answer\)"),
        ("idx\tprediction\n1\tA\n", r"pred\.tsv, header: no 'index' column"),
        ("index\tprediction\n1\tA\n1\tB\n", r"pred\.tsv, row 3: column 'index': duplicate index '1'"),
        ("index\tprediction\n\tA\n", r"pred\.tsv, row 2: column 'index' is empty"),
    ],
)  # fmt: skip
def test_file_problems_name_file_row_and_column(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "pred.tsv").write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_predictions(tmp_path / "pred.tsv")


def test_missing_or_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such prediction file"):
        load_predictions(tmp_path / "absent.tsv")
    (tmp_path / "p.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="unknown prediction format"):
        load_predictions(tmp_path / "p.json")
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError, match="not a medlens run directory"):
        load_predictions(tmp_path / "dir")


def test_model_answers_known_items_and_errors_on_the_rest(tmp_path: Path) -> None:
    (tmp_path / "p.tsv").write_text("index\tprediction\n7\tB\n", encoding="utf-8")
    model = load_model(f"replay:{tmp_path / 'p.tsv'}", ModelContext(items=()))
    assert isinstance(model, ReplayModel) and model.deterministic
    assert ask(model, "7") == ("B", None)
    assert ask(model, "8") == (None, "input")
    with pytest.raises(SpecError, match="replay needs a file"):
        load_model("replay", ModelContext(items=()))


def test_spec_changes_when_the_predictions_change(tmp_path: Path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("index\tprediction\n7\tB\n", encoding="utf-8")
    before = load_model(f"replay:{path}", ModelContext(items=())).spec
    path.write_text("index\tprediction\n7\tC\n", encoding="utf-8")
    after = load_model(f"replay:{path}", ModelContext(items=())).spec
    assert before != after and before.startswith(f"replay:{path}?sha256=")


def test_replaying_a_run_reproduces_it(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "bench", n_items=60, n_images=6, seed=2)
    original = named_run(f"jsonl:{bench}", "random", tmp_path, "original")
    named_run(f"jsonl:{bench}", f"replay:{original}", tmp_path, "replayed")

    def outputs(name: str) -> dict[str, tuple[str, float]]:
        lines = (tmp_path / name / "records.jsonl").read_text(encoding="utf-8").splitlines()
        return {r["id"]: (r["output"], r["score"]) for r in map(json.loads, lines)}

    assert outputs("replayed") == outputs("original")
    assert len(outputs("original")) == 60


def test_unreadable_spreadsheet_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.xlsx").write_bytes(b"not a zip file")
    with pytest.raises(InputError, match=r"broken\.xlsx, header: cannot read"):
        load_predictions(tmp_path / "broken.xlsx")


def test_run_directory_skips_errored_records(tmp_path: Path) -> None:
    from medlens.runs.store import RunStore

    items = [
        Item(id=str(i), question="q", kind="choice", options={"A": "x"}, answer="A")
        for i in range(3)
    ]
    spec = {"benchmark": {"content_hash": "h", "has_answers": True}, "model": "m"}
    store = RunStore.open_or_create(tmp_path / "run", spec, items)
    store.append({"id": "0", "output": "A", "error": None})
    store.append({"id": "1", "output": None, "error": {"type": "timeout", "message": "t"}})
    store.close()
    assert load_predictions(tmp_path / "run") == {"0": "A"}


def test_a_run_of_another_benchmark_is_refused(tmp_path: Path) -> None:
    """Ids overlap across benchmarks (VQA-RAD qids, GMAI indices): pairing by id alone would
    score unrelated predictions (walkthrough: a GMAI run replayed onto VQA-RAD)."""
    from medlens.runs.store import RunStore

    def items(question: str) -> list[Item]:
        return [
            Item(id=str(i), question=f"{question} {i}?", kind="choice", options={"A": "x"})
            for i in range(3)
        ]

    spec = {"benchmark": {"spec": "gmai:a.tsv", "content_hash": "h"}, "model": "m"}
    store = RunStore.open_or_create(tmp_path / "run", spec, items("Which organ"))
    store.append({"id": "1", "output": "A", "error": None})
    store.close()
    with pytest.raises(InputError, match=r"run, item '0': recorded on gmai:a\.tsv"):
        load_model(f"replay:{tmp_path / 'run'}", ModelContext(items=items("Is there")))
    # same questions, or questions an options-only probe removed: accepted
    load_model(f"replay:{tmp_path / 'run'}", ModelContext(items=items("Which organ")))
    blank = [Item(id=i, question="", kind="choice", options={"A": "x"}) for i in ("0", "1")]
    load_model(f"replay:{tmp_path / 'run'}", ModelContext(items=blank))
