"""The item audit's false-discovery control (issue 45): q values per kind of flag (statsmodels'
Benjamini–Hochberg), what it says with too few runs, and `subset --drop-flagged --q`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from items_fixtures import LETTERS, invoke, one_error_line, write_bench, write_runs

MANY = tuple(round(-2.0 + 4.5 * k / 23, 3) for k in range(24))
FEW = tuple(round(-2.0 + 4.5 * k / 7, 3) for k in range(8))
FAMILY = {"key": "option", "ambiguous": "option", "misfit": "misfit",
          "solved_without_image": "image"}  # fmt: skip


def wrong_key(strong: int) -> dict:
    """q0's key is A; every run from `strong` on answers B (the true answer)."""
    return {"q0": lambda k: "B" if k >= strong else LETTERS[k % 4]}


def audit_json(*args: object) -> dict:
    result = invoke("items", "audit", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_bench(tmp_path_factory.mktemp("fdr") / "bench", 80)


@pytest.fixture(scope="module")
def many(bench: Path) -> list[Path]:
    return write_runs(bench.parent.parent / "many", bench, MANY, overrides=wrong_key(12))


def test_q_values_are_benjamini_hochberg_per_kind_of_flag(many: list[Path]) -> None:
    from statsmodels.stats.multitest import multipletests

    found = audit_json(*many)
    tested: dict[str, list[tuple[str, str, float, float]]] = {}
    for row in found["items"]:
        assert set(row["q"]) == set(row["p"])
        for name, q in row["q"].items():
            tested.setdefault(FAMILY[name], []).append((row["id"], name, row["p"][name], q))
            assert (name in row["flags"]) == (q <= 0.1), (row["id"], name, q)
    assert {"option", "misfit"} <= set(tested)
    for family in tested.values():
        p = np.array([t[2] for t in family])
        reference = multipletests(p, alpha=0.1, method="fdr_bh")[1]
        assert np.allclose([t[3] for t in family], reference, atol=2e-4), family
    by_id = {row["id"]: row for row in found["items"]}
    assert "key" in by_id["q0"]["flags"] and by_id["q0"]["q"]["key"] <= 0.1
    power = found["summary"]["power"]
    assert found["summary"]["models"] == 24 and power["q"] == 0.1
    assert power["tests"] == len(tested["option"]) and 0.5 <= power["wrong_key_power"] <= 1
    assert not found["summary"]["power_note"].startswith("Too few runs")
    q0 = f"key q {by_id['q0']['q']['key']:.2g}"
    for fmt in ("text", "md", "html"):
        shown = invoke("items", "audit", *many, "--format", fmt)
        assert shown.exit_code == 0 and q0 in shown.stdout, fmt
    next_q = min(q for r in found["items"] for q in r["q"].values() if 0.1 < q < 1)
    looser = audit_json(*many, "--q", f"{next_q + 1e-6:.7f}")
    flags = {r["id"]: set(r["flags"]) for r in found["items"]}
    assert all(flags[r["id"]] <= set(r["flags"]) for r in looser["items"])
    assert sum(map(len, (r["flags"] for r in looser["items"]))) > sum(map(len, flags.values()))


def test_with_eight_runs_it_says_so_and_flags_no_key(bench: Path) -> None:
    """8 runs: the first audit flagged q0 (and many hard items); this one cannot see a wrong
    key among 80 items at q 0.1 with these runs, flags none and says how little it sees."""
    runs = write_runs(bench.parent.parent / "few", bench, FEW, overrides=wrong_key(4))
    found = audit_json(*runs)
    summary = found["summary"]
    assert summary["models"] == 8 and summary["flag_counts"]["key"] == 0
    assert summary["flag_counts"]["ambiguous"] == 0
    assert summary["power"]["wrong_key_power"] < 0.5
    assert summary["power_note"].startswith("Too few runs to find most wrong keys: 8 runs")
    text = invoke("items", "audit", *runs)
    assert text.exit_code == 0 and "Too few runs" in text.stdout


def test_items_audit_refuses_a_q_outside_0_1(many: list[Path]) -> None:
    for bad in ("0", "1", "-0.1"):
        assert f"--q {float(bad):g}" in one_error_line(invoke("items", "audit", *many, "--q", bad))


def handmade_audit(folder: Path) -> Path:
    """An item audit whose rows carry q values: q1 a key at q 0.05, q2 a misfit at q 0.2, q3
    nothing below q 0.5."""
    rows = [{"id": "q1", "flags": ["key"], "flagged": True, "q": {"key": 0.05, "misfit": 0.9}},
            {"id": "q2", "flags": [], "flagged": False, "q": {"misfit": 0.2}},
            {"id": "q3", "flags": [], "flagged": False, "q": {"ambiguous": 0.5}}]  # fmt: skip
    path = folder / "audit.json"
    path.write_text(json.dumps({"runs": {"a": 0.0}, "flags": {"key": ""}, "items": rows}))
    return path


@pytest.mark.parametrize(("q", "dropped", "says"), [
    ("0.1", {"q1"}, "dropped 1 items flagged at q ≤ 0.1 in {audit} (key 1;"),
    ("0.3", {"q1", "q2"}, "dropped 2 items flagged at q ≤ 0.3 in {audit} (key 1, misfit 1;"),
    ("0.01", set(), "dropped no items: none is flagged in {audit}"),
])  # fmt: skip
def test_subset_drops_only_the_flags_at_its_q(
    tmp_path: Path, q: str, dropped: set[str], says: str
) -> None:
    source = write_bench(tmp_path / "bench", 10)
    audit = handmade_audit(tmp_path)
    out = tmp_path / "clean" / "c.jsonl"
    result = invoke("subset", f"jsonl:{source}", "--drop-flagged", audit, "--q", q,
                    "--output", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    # compared without whitespace: a long tmp path (an xdist worker's) wraps mid-word
    assert "".join(says.format(audit=audit).split()) in "".join(result.output.split())
    kept = {json.loads(line)["id"] for line in out.read_text().splitlines()}
    assert kept == {f"q{i}" for i in range(10)} - dropped
    recipe = json.loads((out.parent / "subset.json").read_text())["recipe"]
    assert recipe["drop_flagged"]["q"] == float(q)


def test_subset_refuses_an_item_audit_without_q_values_and_a_bad_q(tmp_path: Path) -> None:
    source = write_bench(tmp_path / "bench", 10)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"runs": {"a": 0.0}, "flags": {}, "summary": {},
                               "items": [{"id": "q1", "flagged": True, "flags": ["key"]}]}))  # fmt: skip
    out = tmp_path / "clean" / "c.jsonl"
    out.parent.mkdir()
    line = one_error_line(
        invoke("subset", f"jsonl:{source}", "--drop-flagged", old, "--output", out)
    )
    assert f"{old}, items[0].q" in line and "medlens items audit" in line
    line = one_error_line(invoke("subset", f"jsonl:{source}", "--drop-flagged",
                                 handmade_audit(tmp_path), "--q", "1.5", "--output", out))  # fmt: skip
    assert "--q 1.5" in line
    assert list(out.parent.iterdir()) == []
