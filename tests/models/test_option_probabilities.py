"""Per-option probabilities for AUROC: ``openai:`` with ``logprobs=true&top_logprobs=K`` against
a real loopback server, mapped to the item's options or labels, stored in the record and
turned into AUROC (equal to scikit-learn) by the classify corpus metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from loopback_server import LoopbackServer, ServerConfig, gold_by_marker, serve
from medlens.api import load_model
from medlens.cli import app
from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.models.base import ModelContext
from medlens.models.option_logprobs import answer_position, option_probabilities

LABELS = ["benign", "malignant"]
GOLDS = {f"c{i}": LABELS[i % 2] for i in range(24)}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    config = ServerConfig(
        gold=gold_by_marker(GOLDS), accuracy=0.75, logprob_tokens=("ben", "mal", "x")
    )
    with serve(config) as running:
        yield running


MAPPING_CASES = [
    # item kind / options / labels, alternatives (log p), expected probabilities
    ("choice", {"A": "liver", "B": "lung"}, "", {" A": math.log(0.7), "b": math.log(0.2), "C": math.log(0.1)},
     {"A": 0.7, "B": 0.2}),
    ("yes_no", {}, "", {"Yes": math.log(0.5), "yes": math.log(0.2), "No": math.log(0.3)},
     {"yes": 0.7, "no": 0.3}),
    ("classify", {}, "benign|malignant|normal", {"ben": math.log(0.6), "mal": math.log(0.3), "n": math.log(0.1)},
     {"benign": 0.6, "malignant": 0.3, "normal": 0.1}),
    ("classify", {}, "melanoma|malignant", {"m": math.log(0.9)}, None),  # "m" starts two labels
]  # fmt: skip


@pytest.mark.parametrize(("kind", "options", "labels", "alternatives", "expected"), MAPPING_CASES)
def test_alternatives_map_to_options(
    kind: str, options: dict[str, str], labels: str, alternatives: dict[str, float],
    expected: dict[str, float] | None,
) -> None:  # fmt: skip
    item = Item("i", "q", kind, options=options, answer=None, meta={"labels": labels})  # type: ignore[arg-type]
    found = option_probabilities(item, alternatives)
    assert found == (pytest.approx(expected) if expected is not None else None)


def test_the_answer_position_skips_whitespace_and_punctuation() -> None:
    positions = [("\n", {"\n": 0.0}), ("**", {"**": 0.0}), ("B", {"B": -0.1, "A": -2.5})]
    assert answer_position(positions) == {"B": -0.1, "A": -2.5}
    assert answer_position([(" ", {" ": 0.0})]) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [("logprobs=maybe", "must be true or false"), ("top_logprobs=3", "needs logprobs=true"),
     ("logprobs=true&top_logprobs=21", "at most 20")],
)  # fmt: skip
def test_bad_logprob_options(options: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_model(f"openai:m?base_url=http://127.0.0.1:9/v1&{options}", ModelContext(items=()))


def test_logprobs_reach_the_record_and_give_auroc(tmp_path: Path, server: LoopbackServer) -> None:
    from sklearn.metrics import roc_auc_score

    rows = [{"id": key, "question": f"[[{key}]] Benign or malignant?", "kind": "classify",
             "answer": gold, "meta": {"labels": "|".join(LABELS), "image_id": key}}
            for key, gold in GOLDS.items()]  # fmt: skip
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"openai:tiny?base_url={server.base_url}&logprobs=true&top_logprobs=3&max_retries=0"
    run = named_run(f"jsonl:{bench}", spec, tmp_path / "runs", "lp")
    assert server.last_body is not None and server.last_body["top_logprobs"] == 3
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert all(set(r["option_probs"]) == set(LABELS) for r in records)
    report = json.loads(CliRunner().invoke(app, ["report", str(run), "--format", "json"]).output)
    auroc = report["metrics"]["classify"]["auroc"]
    gold = [GOLDS[r["id"]] for r in records]
    scores = [r["option_probs"]["malignant"] / sum(r["option_probs"].values()) for r in records]
    expected = roc_auc_score([g == "malignant" for g in gold], scores)
    assert auroc["value"] == pytest.approx(expected) and auroc["n"] == len(GOLDS)
    assert auroc["ci"] is not None and auroc["ci"][0] <= auroc["value"] <= auroc["ci"][1]
