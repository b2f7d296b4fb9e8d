"""The `judges` key of results.json from hand-written judge stores: repeats combined, judge errors
left out, CIs from `bootstrap.group_cis`, dimensions, closed−open Δ, and the report sections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from medlens.core.items import Item
from medlens.judges.results import combine, judges_results, model_family
from medlens.report.judges import html_section, judge_sections, markdown_section
from medlens.runs.judgements import JudgeStore
from medlens.stats.bootstrap import group_cis

DIMS = ["consistency", "coherence", "visual_accuracy", "ground_truth_correctness"]


def items(n: int) -> list[Item]:
    return [
        Item(id=f"i{k}", question="q", kind="open", answer="x",
             meta={"answer_type": "open", "modality": "CT" if k % 2 else "MR", "image_id": f"m{k // 2}"})
        for k in range(n)
    ]  # fmt: skip


def spec(protocol: str, repeats: int = 1, dims: list[str] | None = None) -> dict[str, Any]:
    return {"schema": 1, "name": "j", "judge": "openai:gpt-4o?base_url=x", "scope": "unresolved",
            "protocol": {"name": protocol, "dimensions": dims or [], "weights": {d: 1.0 for d in dims or []},
                         "template_sha256": "t"},
            "repeats": repeats, "created": "now"}  # fmt: skip


def line(item_id: str, repeat: int, score: float | None, status: str = "ok", by: str = "judge",
         verdict: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    return {"id": item_id, "repeat": repeat, "by": by, "fingerprint": None, "output": "",
            "status": status, "verdict": verdict, "score": score, "error": None, "latency": 0.01,
            "usage": {"total_tokens": 10}, "cached": False}  # fmt: skip


def write(run: Path, name: str, judge_spec: dict[str, Any], lines: list[dict[str, Any]]) -> None:
    store = JudgeStore.open_or_create(run / "judges" / name, {**judge_spec, "name": name})
    for row in lines:
        store.append(row)
    store.close()


@pytest.mark.parametrize(
    ("kind", "scores", "expected"),
    [("equivalence", [1, 1, 0], 1.0), ("equivalence", [0, 1, 0], 0.0), ("equivalence", [1, 0], float("nan")),
     ("rubric", [0.2, 0.4], 0.3), ("choice", [1.0], 1.0)],
)  # fmt: skip
def test_combine_repeats(kind: str, scores: list[float], expected: float) -> None:
    assert combine(kind, scores) == pytest.approx(
        expected, nan_ok=True
    )  # an even split: unresolved
    assert np.isnan(combine(kind, []))


def test_equivalence_results_with_errors_left_out(tmp_path: Path) -> None:
    its = items(12)
    records = {it.id: {"score": 1.0 if k < 4 else 0.0} for k, it in enumerate(its)}
    rows = [line(it.id, 0, 1.0, by="rule") for it in its[:4]]
    verdicts = [1, 0, 1, 1, 0, 0]
    rows += [line(it.id, 0, float(v)) for it, v in zip(its[4:10], verdicts, strict=True)]
    rows += [line(it.id, 0, None, status="unparseable") for it in its[10:]]
    write(tmp_path, "j", spec("equivalence"), rows)
    entry = judges_results(
        tmp_path, its, records, ["modality"], "openai:gpt-4o-mini?base_url=y", None
    )["j"]
    overall = entry["overall"]
    values = np.array([1, 1, 1, 1, *verdicts], dtype=float)
    lo, hi = group_cis(
        values, np.zeros(10, dtype=int), np.array([it.meta["image_id"] for it in its[:10]])
    )
    assert overall["n"] == 10 and overall["judge_errors"] == 2
    assert overall["score"] == pytest.approx(values.mean()) and overall["ci"] == pytest.approx(
        [lo[0], hi[0]]
    )
    assert overall["rule_score"] == pytest.approx(0.4)
    assert overall["calls"] == 8 and overall["calls_saved"] == 4
    ct = entry["by"]["modality"]["CT"]
    odd = [k for k in range(10) if k % 2]
    assert (
        ct["n"] == 5
        and ct["score"] == pytest.approx(values[odd].mean())
        and ct["judge_errors"] == 1
    )
    assert entry["usage"]["tokens"] == {"total_tokens": 80}  # judge calls only
    assert entry["warnings"] and "gpt" in entry["warnings"][0]  # same family as the model


def test_rubric_dimensions_and_self_agreement(tmp_path: Path) -> None:
    its = items(6)
    rng = np.random.default_rng(0)
    points = rng.integers(0, 11, size=(6, 2, 4))
    rows = []
    for k, it in enumerate(its):
        for r in range(2):
            scores = dict(zip(DIMS, (int(p) for p in points[k, r]), strict=True))
            rows.append(
                line(
                    it.id,
                    r,
                    float(points[k, r].mean() / 10),
                    verdict={"scores": scores, "rationale": ""},
                )
            )
    write(tmp_path, "r", spec("rubric", repeats=2, dims=DIMS), rows)
    entry = judges_results(tmp_path, its, {}, [], "replay:x", None)["r"]
    for d, dim in enumerate(DIMS):
        cell = entry["dimensions"][dim]
        assert cell["n"] == 6 and cell["score"] == pytest.approx(points[:, :, d].mean())
        mad = entry["self_agreement"]["mad"][dim]
        assert mad["score"] == pytest.approx(np.abs(points[:, 0, d] - points[:, 1, d]).mean())
    assert entry["overall"]["score"] == pytest.approx(points.mean() / 10)
    assert entry["warnings"] == []
    sections = judge_sections({"judges": {"r": entry}})
    assert [s.title for s in sections][1] == "Judge r: rubric dimensions"
    assert sections[1].rows[0][3] == f"{points[:, :, 0].mean():.2f}"


def test_judged_closed_open_delta(tmp_path: Path) -> None:
    its = items(4)
    write(
        tmp_path,
        "j",
        spec("equivalence"),
        [line(it.id, 0, float(k % 2)) for k, it in enumerate(its)],
    )
    gap = {"overall": {"closed": 0.8, "n_closed": 10, "open": 0.1, "n_open": 4, "delta": 0.7}}
    closed = (np.array([1.0] * 8 + [0.0] * 2), np.array([f"c{k}" for k in range(10)]), [None] * 10)
    entry = judges_results(tmp_path, its, {}, [], "replay:x", gap, closed)["j"]
    assert entry["closed_open"]["open"] == 0.5 and entry["closed_open"]["delta"] == pytest.approx(
        0.3
    )
    assert entry["closed_open"]["n_open"] == 4 and entry["closed_open"]["n_pairs"] == 0


def test_reports_escape_what_they_did_not_write(tmp_path: Path) -> None:
    its = items(2)
    write(tmp_path, "x<script>", spec("equivalence"), [line(it.id, 0, 1.0) for it in its])
    results = {"judges": judges_results(tmp_path, its, {}, [], "replay:x", None)}
    assert "<script>" not in html_section(results) and "&lt;script&gt;" in html_section(results)
    assert "<script>" not in markdown_section(results)
    assert json.dumps(results)  # plain JSON


@pytest.mark.parametrize(
    ("spec_text", "family"),
    [("openai:gpt-4o?base_url=x", "gpt"), ("hf:/m/Qwen2.5-VL-7B", "qwen"),
     ("openai:meta-llama/Llama-3.2-11B?base_url=x", "llama"), ("vllm:/m/", "m")],
)  # fmt: skip
def test_model_family(spec_text: str, family: str) -> None:
    assert model_family(spec_text) == family


def test_spearman_of_judge_and_rules_is_scipys(tmp_path: Path) -> None:
    """Sanity of the joined arrays: judged and rule scores pair up item by item."""
    from medlens.judges.results import judged_table

    its = items(8)
    records = {it.id: {"score": float(k % 3 == 0)} for k, it in enumerate(its)}
    judged = [0.1, 0.5, 0.3, 0.9, 0.2, 0.8, 0.7, 0.4]
    write(
        tmp_path,
        "j",
        spec("rubric"),
        [line(it.id, 0, s) for it, s in zip(its, judged, strict=True)],
    )
    table = judged_table(JudgeStore.open(tmp_path / "judges" / "j"), its, records)
    rule = [records[it.id]["score"] for it in its]
    assert stats.spearmanr(table.score, table.rule).statistic == pytest.approx(
        stats.spearmanr(judged, rule).statistic
    )


def test_markdown_judge_tables_keep_their_columns(tmp_path: Path) -> None:
    import re

    its = items(4)
    rows = [
        line(it.id, r, 0.5, verdict={"scores": dict.fromkeys(DIMS, 5), "rationale": "|x|"})
        for it in its
        for r in range(2)
    ]
    write(tmp_path, "r", spec("rubric", repeats=2, dims=DIMS), rows)
    text = markdown_section({"judges": judges_results(tmp_path, its, {}, ["modality"], "x", None)})
    for block in text.split("\n\n"):
        table = [row for row in block.splitlines() if row.startswith("|")]
        if table:
            widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table}
            assert len(widths) == 1, block


def test_two_judges_report_their_agreement_as_sklearn_computes_it(tmp_path: Path) -> None:
    """Two equivalence judges of one run: Cohen's κ from `medlens.stats.agreement`, in every report."""
    from sklearn.metrics import cohen_kappa_score

    its = items(12)
    first = [1.0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    second = [1.0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0]
    for name, verdicts in (("b", second), ("a", first)):
        rows = [line(it.id, 0, v, verdict={"equivalent": bool(v), "reason": ""})
                for it, v in zip(its, verdicts, strict=True)]  # fmt: skip
        write(tmp_path, name, spec("equivalence"), rows)
    judges = judges_results(tmp_path, its, {}, [], "x", None)
    agreement = judges["a"]["inter_judge"]
    assert agreement["judges"] == ["a", "b"]
    pair = agreement["dimensions"]["equivalent"]["pairs"][0]
    assert pair["n"] == 12
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(first, second))
    notes = markdown_section({"judges": judges})
    assert "inter-judge agreement (a, b) on equivalent" in notes
    assert f"κ {pair['kappa']:.3f}" in notes
    assert judges_results(tmp_path / "none", its, {}, [], "x", None) == {}
