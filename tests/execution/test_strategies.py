"""Prompt strategies: parsing, few-shot exemplars, chain-of-thought, self-consistency votes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cli_runs import invoke_run, named_run
from data_paths import items_of, realdata_dir
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.core.specs import parse_spec
from medlens.execution.exemplars import (
    _question_key,
    choose_exemplars,
    exemplar_spec,
    load_exemplars,
)
from medlens.execution.requests import RunSettings, build_request
from medlens.execution.strategies import (
    Strategy,
    consistency_summary,
    final_answer_text,
    majority_vote,
    parse_strategy,
)
from medlens.sources import SOURCES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("zero-shot", Strategy()),
        ("few-shot:5", Strategy(few_shot=5)),
        ("cot", Strategy(cot=True)),
        ("self-consistency:7", Strategy(samples=7)),
        ("few-shot:5+cot", Strategy(few_shot=5, cot=True)),
        ("cot+self-consistency:3", Strategy(cot=True, samples=3)),
    ],
)
def test_strategy_texts_parse_and_round_trip(text: str, expected: Strategy) -> None:
    parsed = parse_strategy(text)
    assert parsed == expected
    assert parse_strategy(parsed.text) == parsed


@pytest.mark.parametrize(
    "text",
    ["few-shot:0", "self-consistency:0", "few-shot", "few-shot:x", "cot+cot", "zero-shot+cot",
     "tree-of-thought", "few-shot:-1"],
)  # fmt: skip
def test_bad_strategy_texts_are_spec_errors(text: str) -> None:
    with pytest.raises(SpecError, match="--strategy"):
        parse_strategy(text)


@pytest.mark.parametrize(
    ("output", "read"),
    [
        ("The lesion enhances, so B is unlikely.\nAnswer: C", "Answer: C"),
        ("Step 1: A? no.\nFinal answer: D.", "Final answer: D."),
        ("Answer: A is tempting.\nBut on reflection...\nAnswer: B", "Answer: B"),
        ("No marker here, just C", "No marker here, just C"),
        ("reasoning\n  **Answer:** yes", "**Answer:** yes"),
    ],
)
def test_chain_of_thought_reads_the_last_answer_line(output: str, read: str) -> None:
    assert final_answer_text(output).strip() == read


def test_majority_vote_counts_read_answers_and_breaks_ties_by_first_draw() -> None:
    vote = majority_vote(["B", None, "C", "C", "B"])
    assert vote.votes == {"B": 2, "C": 2}
    assert vote.winner == 0  # B and C tie; B was drawn first
    assert vote.agreement == pytest.approx(2 / 5)
    assert majority_vote([None, None]).winner is None
    assert majority_vote(["A", "A", "A"]).agreement == 1.0


def test_consistency_summary_is_the_mean_agreement_with_a_t_interval() -> None:
    from scipy import stats

    shares = [1.0, 0.6, 0.8, 0.6, 1.0]
    summary = consistency_summary([{"agreement": s} for s in shares])
    assert summary is not None
    low, high = stats.t.interval(0.95, 4, loc=sum(shares) / 5, scale=stats.sem(shares))
    assert summary["n"] == 5 and summary["unanimous"] == 2
    assert summary["ci"] == pytest.approx([low, min(1.0, high)])


# --- few-shot exemplars ---------------------------------------------------------------------


def _loaders_naming_exemplars() -> list[str]:
    return [
        entry.name
        for entry in SOURCES
        if hasattr(SOURCES.module_of(entry.name), "EXEMPLAR_SPLIT")
        or hasattr(SOURCES.module_of(entry.name), "exemplar_spec")
    ]


def test_the_text_qa_and_vqa_loaders_name_an_exemplar_split() -> None:
    named = set(_loaders_naming_exemplars())
    assert {"mmlu", "medqa", "medmcqa", "pubmedqa", "vqa-rad", "slake"} <= named


REAL_SPECS = {
    "mmlu": ("mmlu_medical", ""),
    "pubmedqa": ("pubmedqa", ""),
    "vqa-rad": ("vqa_rad", ""),
    "slake": ("slake", ""),
}


@pytest.mark.parametrize("loader", sorted(REAL_SPECS))
def test_exemplars_of_real_benchmarks_never_overlap_the_evaluated_split(loader: str) -> None:
    folder, options = REAL_SPECS[loader]
    bench = f"{loader}:{realdata_dir(folder)}{options}"
    evaluated = items_of(bench)
    exemplars = load_exemplars(parse_spec(bench), None, evaluated, 3, seed=0)
    evaluated_keys = {_question_key(item) for item in evaluated}
    chosen = [e for group in exemplars.by_group.values() for e in group]
    assert chosen and all(e.answer is not None for e in chosen)
    assert not {_question_key(e) for e in chosen} & evaluated_keys
    assert exemplars.spec != bench  # another split of the same benchmark


@pytest.mark.parametrize(("loader", "evaluated_name"), [("medqa", "phrases_no_exclude_test.jsonl"),
                                                         ("medmcqa", "dev.json")])  # fmt: skip
def test_file_loaders_take_exemplars_from_the_train_file_beside(
    tmp_path: Path, loader: str, evaluated_name: str
) -> None:
    folder = realdata_dir(loader)
    lines = (folder / evaluated_name).read_text(encoding="utf-8").splitlines()[:40]
    evaluated = tmp_path / evaluated_name
    evaluated.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    train = tmp_path / evaluated_name.replace("test", "train").replace("dev", "train")
    train.write_text("\n".join(lines[10:40]) + "\n", encoding="utf-8")  # 10 shared questions
    bench = f"{loader}:{evaluated}"
    assert exemplar_spec(parse_spec(bench)).canonical().startswith(f"{loader}:{train}")
    items = items_of(bench)
    exemplars = load_exemplars(parse_spec(bench), None, items, 20, seed=1)
    keys = {_question_key(item) for item in items}
    assert len(exemplars.by_group[""]) == 20  # exactly the 20 train-only questions
    assert not {_question_key(e) for e in exemplars.by_group[""]} & keys
    with pytest.raises(SpecError, match="21 are needed"):
        load_exemplars(parse_spec(bench), None, items, 21, seed=1)


def test_a_loader_without_an_exemplar_split_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="names no exemplar split"):
        exemplar_spec(parse_spec("demo"))


def _item(number: int, subject: str = "") -> Item:
    meta = {"subject": subject} if subject else {}
    return Item(
        id=str(number), question=f"Question {number}?", kind="choice",
        options={"A": "x", "B": "y"}, answer="B", meta=meta,
    )  # fmt: skip


def test_exemplars_are_seeded_and_come_from_the_items_own_subject() -> None:
    pool = [_item(n, "anatomy" if n < 10 else "genetics") for n in range(20)]
    first = choose_exemplars(pool, [], 3, seed=4, spec="x")
    assert first.ids() == choose_exemplars(list(reversed(pool)), [], 3, seed=4, spec="x").ids()
    assert first.ids() != choose_exemplars(pool, [], 3, seed=5, spec="x").ids()
    anatomy = first.for_item(_item(99, "anatomy"))
    assert {e.meta["subject"] for e in anatomy} == {"anatomy"}
    assert first.for_item(_item(98, "surgery")) == first.by_group[""]


def test_few_shot_requests_put_solved_turns_before_the_item() -> None:
    pool = [_item(n) for n in range(5)]
    exemplars = choose_exemplars(pool, [], 2, seed=0, spec="x")
    settings = RunSettings(strategy=Strategy(few_shot=2), exemplars=exemplars)
    target = _item(50)
    request = build_request(target, "m", settings, None)
    roles = [m.role for m in request.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert request.messages[1].parts[0].text == "Answer: B"  # type: ignore[union-attr]
    assert "Question 50?" in request.messages[-1].parts[-1].text  # type: ignore[union-attr]
    plain = build_request(target, "m", RunSettings(), None)
    assert plain.fingerprint != request.fingerprint


def test_a_few_shot_run_records_its_exemplars_and_resumes(tmp_path: Path) -> None:
    bench = f"mmlu:{realdata_dir('mmlu_medical')}?subjects=anatomy"
    run = named_run(bench, "oracle", tmp_path, "fs", "--strategy", "few-shot:3", "--limit", "4")
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["strategy"]["name"] == "few-shot:3"
    assert spec["strategy"]["exemplars"]["spec"].endswith("split=dev&subjects=anatomy")
    assert len(spec["strategy"]["exemplars"]["ids"]["anatomy"]) == 3
    again = invoke_run(bench, "oracle", tmp_path, "fs", "--strategy", "few-shot:3")
    assert again.exit_code == 0, again.output
    refused = invoke_run(bench, "oracle", tmp_path, "fs", "--strategy", "few-shot:2")
    assert refused.exit_code == 2 and "strategy" in refused.output


def test_zero_shot_runs_keep_their_old_spec(tmp_path: Path) -> None:
    run = named_run("demo", "first", tmp_path, "zs", "--limit", "3")
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert "strategy" not in spec
    results = json.loads((run / "results.json").read_text())
    assert results["strategy"] == "zero-shot" and "self_consistency" not in results


# --- chain-of-thought and self-consistency against a loopback server ------------------------


def _marked_items(tmp_path: Path, n: int) -> tuple[str, dict[str, str]]:
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(n)}
    lines = [
        json.dumps({"id": key, "question": f"[[{key}]] Which option?", "kind": "choice",
                    "options": {"A": "w", "B": "x", "C": "y", "D": "z"}, "answer": gold})
        for key, gold in golds.items()
    ]  # fmt: skip
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"jsonl:{path}", golds


def test_self_consistency_votes_over_seeded_draws(tmp_path: Path) -> None:
    bench, golds = _marked_items(tmp_path, 12)
    config = ServerConfig(gold=gold_by_marker(golds), accuracy=0.5)
    with serve(config) as server:
        model = f"openai:m?base_url={server.base_url}"
        run = named_run(bench, model, tmp_path, "sc", "--strategy", "self-consistency:5")
        assert server.stats["requests"] == 12 * 5
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 12
    varied = 0
    for record in records:
        samples = record["samples"]
        assert [s["seed"] for s in samples] == [0, 1, 2, 3, 4]
        answers = [s["answer"] for s in samples]
        counts = Counter(a for a in answers if a is not None)
        assert record["votes"] == dict(counts)
        top = max(counts.values())
        assert record["extraction"]["answer"] == next(a for a in answers if counts[a] == top)
        assert record["agreement"] == pytest.approx(top / 5)
        assert record["score"] == (1.0 if record["extraction"]["answer"] == golds[record["id"]]
                                   else 0.0)  # fmt: skip
        varied += len(counts) > 1
    assert varied > 0  # the server's answer depends on the request's seed
    results = json.loads((run / "results.json").read_text())
    assert results["self_consistency"]["n"] == 12
    assert results["strategy"] == "self-consistency:5"
    from typer.testing import CliRunner

    from medlens.cli import app

    report = CliRunner().invoke(app, ["report", str(run), "--format", "md"])
    assert "self-consistency agreement" in report.output, report.output


def test_self_consistency_draws_are_sampled_with_distinct_seeds(tmp_path: Path) -> None:
    bench, golds = _marked_items(tmp_path, 1)
    seen: list[tuple[float, int]] = []

    def lookup(request):  # type: ignore[no-untyped-def]
        seen.append((request.body["temperature"], request.body["seed"]))
        return golds["q0"]

    with serve(ServerConfig(gold=lookup)) as server:
        named_run(bench, f"openai:m?base_url={server.base_url}", tmp_path, "s",
                  "--strategy", "self-consistency:3")  # fmt: skip
    assert sorted(seen) == [(0.7, 0), (0.7, 1), (0.7, 2)]


def test_chain_of_thought_asks_for_reasoning_and_reads_the_final_line(tmp_path: Path) -> None:
    bench, golds = _marked_items(tmp_path, 4)
    prompts: list[str] = []

    def lookup(request):  # type: ignore[no-untyped-def]
        prompts.append(request.text)
        key = request.text.split("[[")[1].split("]]")[0]
        return f"Option A looks plausible but B fits better.\nAnswer: {golds[key]}"

    with serve(ServerConfig(gold=lookup)) as server:
        run = named_run(bench, f"openai:m?base_url={server.base_url}", tmp_path, "cot",
                        "--strategy", "cot")  # fmt: skip
    assert all("step by step" in p for p in prompts)
    results = json.loads((run / "results.json").read_text())
    assert results["overall"]["score"] == 1.0


def test_self_consistency_on_a_backend_that_cannot_sample_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", "demo", "--model", "random",
         "--out", str(tmp_path / "runs"), "--strategy", "self-consistency:3"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "cannot draw samples" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_zero_k_strategy_is_one_line_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", "demo", "--model", "oracle",
         "--out", str(tmp_path / "runs"), "--strategy", "few-shot:0"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert "K ≥ 1" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


# --- what a few-shot run shows before and after it ran ---------------------------------------


def test_dry_run_shows_the_exemplar_turns_and_estimates_the_cost(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medlens.cli import app

    bench = f"mmlu:{realdata_dir('mmlu_medical')}?subjects=anatomy"
    model = "openai:m?base_url=http://127.0.0.1:9/v1&max_tokens=16"
    args = ["run", "--bench", bench, "--model", model, "--out", str(tmp_path / "runs"),
            "--strategy", "few-shot:2", "--dry-run", "--price", "input=2,output=10"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    first = result.output.split("--- item")[1]
    assert first.count("[exemplar") == 4  # two solved user/assistant pairs before the item
    assert first.count("step by step") == 0
    assert "estimated cost of 135 items" in result.output
    assert "16 output tokens per answer" in result.output
    assert not (tmp_path / "runs").exists()
    refused = CliRunner().invoke(app, [*args[:-2], "--price", "input=2"])
    assert refused.exit_code == 2 and "missing output" in refused.output


def test_price_without_a_dry_run_is_refused(tmp_path: Path) -> None:
    result = invoke_run("demo", "first", tmp_path, "p", "--price", "input=1,output=1")
    assert result.exit_code == 2 and "--dry-run" in result.output
    assert not (tmp_path / "p").exists()


def test_show_prints_the_few_shot_conversation_of_an_item(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medlens.cli import app

    bench = f"mmlu:{realdata_dir('mmlu_medical')}?subjects=anatomy"
    run = named_run(bench, "oracle", tmp_path, "fs", "--strategy", "few-shot:3", "--limit", "2")
    spec = json.loads((run / "run.json").read_text())["spec"]
    item_id = json.loads((run / "records.jsonl").read_text().splitlines()[0])["id"]
    shown = CliRunner().invoke(app, ["show", str(run), item_id])
    assert shown.exit_code == 0, shown.output
    for exemplar_id in spec["strategy"]["exemplars"]["ids"]["anatomy"]:
        assert f"(dev {exemplar_id}): user]" in shown.output  # the split says it is no test item
