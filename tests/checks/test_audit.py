"""`medlens audit`: planted benchmark questions are found, an unrelated corpus flags nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from data_paths import realdata_dir
from medlens.api import load_benchmark
from medlens.checks import audit as audit_module
from medlens.checks.audit import audit, item_text, ngram_hashes, tokens
from medlens.cli import app
from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item

runner = CliRunner()
FILLER = "the patient was seen in clinic and reported feeling well today after a long walk"


def audit_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["audit", *args, "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def medqa_spec() -> str:
    return f"medqa:{realdata_dir('medqa')}"


def test_planted_medqa_questions_are_flagged_and_nothing_else(tmp_path: Path) -> None:
    items = list(load_benchmark(medqa_spec()).items())
    planted = random.Random(1).sample(items, 7)
    corpus = tmp_path / "corpus"
    (corpus / "web").mkdir(parents=True)
    with open(corpus / "web" / "crawl.txt", "w") as handle:
        for item in planted:
            # Copies are wrapped in other text, reflowed over several lines and re-cased.
            words = item_text(item).upper().split()
            handle.write(
                f"{FILLER}\n"
                + "\n".join(" ".join(words[i : i + 9]) for i in range(0, len(words), 9))
            )
            handle.write(f"\n{FILLER}\n")
    (corpus / "notes.txt").write_text(FILLER * 50)
    report = audit_json(medqa_spec(), "--corpus", str(corpus))
    flagged = {row["id"] for row in report["items"] if row["flagged"]}
    assert flagged == {item.id for item in planted}
    assert report["flagged"] == 7 and report["corpus"]["files"] == 2
    assert report["by_source"] == {"medqa": {"n": 1273, "flagged": 7, "rate": 7 / 1273}}
    assert all(row["overlap"] == 1.0 for row in report["items"] if row["flagged"])


def test_an_unrelated_corpus_flags_nothing(tmp_path: Path) -> None:
    unrelated = realdata_dir("pubmedqa") / "ori_pqal.json"
    report = audit_json(medqa_spec(), "--corpus", str(unrelated))
    assert report["flagged"] == 0 and report["rate"] == 0.0
    assert report["corpus"]["tokens"] > 300_000
    assert all(row["overlap"] < 0.1 for row in report["items"])


def test_rate_per_source_and_partial_overlap(tmp_path: Path) -> None:
    long_a = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    items = [
        Item("1", long_a, "open", answer="x", meta={"source": "one"}),
        Item(
            "2",
            "nu xi omicron pi rho sigma tau upsilon phi chi psi omega",
            "open",
            answer="x",
            meta={"source": "two"},
        ),
        Item("3", "too short", "open", answer="x", meta={"source": "two"}),
    ]
    benchmark = Benchmark("t", "t", "test", True, lambda: iter(items))
    corpus = tmp_path / "c.txt"
    corpus.write_text("alpha beta gamma delta epsilon zeta eta theta iota\n" + "nu xi " * 3)
    report = audit(benchmark, [corpus], n=8, threshold=0.4)
    overlaps = {row.id: (row.matched, row.n_grams) for row in report.items}
    assert overlaps == {"1": (2, 5), "2": (0, 5)}
    assert report.too_short == 1
    assert report.by_source() == {
        "one": {"n": 1, "flagged": 1, "rate": 1.0},
        "two": {"n": 1, "flagged": 0, "rate": 0.0},
    }


def test_ngrams_spanning_read_chunks_are_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_module, "_CHUNK_CHARS", 7)
    monkeypatch.setattr(audit_module, "_BATCH_TOKENS", 3)
    question = "one two three four five six seven eight nine ten"
    benchmark = Benchmark(
        "t", "t", "test", True, lambda: iter([Item("1", question, "open", answer="x")])
    )
    corpus = tmp_path / "c.txt"
    corpus.write_text("zero " + question.replace(" ", "\n") + " eleven")
    report = audit(benchmark, [corpus])
    assert report.items[0].matched == 3 and report.corpus_tokens == 12


def test_tokens_and_hashes() -> None:
    assert tokens("Ａ 23-year-old MAN’s\nchest") == ["a", "23", "year", "old", "man", "s", "chest"]
    import numpy as np

    values = np.arange(10, dtype=np.uint64)
    grams = ngram_hashes(values, 8)
    assert len(grams) == 3 and len(set(grams.tolist())) == 3
    assert len(ngram_hashes(values[:7], 8)) == 0
    assert ngram_hashes(values, 8)[1] == ngram_hashes(values[1:9], 8)[0]


def test_missing_corpus_path_is_an_input_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", medqa_spec(), "--corpus", str(tmp_path / "absent")])
    assert result.exit_code == 2
    with pytest.raises(InputError, match="corpus path does not exist"):
        audit(load_benchmark(medqa_spec()), [tmp_path / "absent"])


def test_empty_corpus_folder_is_an_input_error_not_a_clean_result(tmp_path: Path) -> None:
    (tmp_path / "crawl").mkdir()
    result = runner.invoke(app, ["audit", medqa_spec(), "--corpus", str(tmp_path / "crawl")])
    assert result.exit_code == 2 and "corpus folder holds no files" in result.output


def test_text_report_lists_flagged_items(tmp_path: Path) -> None:
    item = next(load_benchmark(medqa_spec()).items())
    corpus = tmp_path / "c.txt"
    corpus.write_text(item_text(item))
    result = runner.invoke(app, ["audit", medqa_spec(), "--corpus", str(corpus)])
    assert result.exit_code == 0
    assert "flagged" in result.stdout and f"{item.id}: 100%" in result.stdout
