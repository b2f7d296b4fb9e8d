"""``medlens items audit``: suspicious items from many runs' answers (wrong keys, ambiguous
items, items solved without their image, saturated, at-chance and misfitting items).

Runs are weighted by ability (from the bank, or from a bank fitted on the spot): a run's weight
is σ(2(θ − median θ)), so the stronger half of the runs speaks loudest. Per item and option:
the share of runs that chose it, their mean ability, the ability-weighted share and the
correlation of choosing it with ability (``evidence``).
Defect flags are tests with a false-discovery-rate guarantee (``audit_null`` computes the
p-values against the fitted item model's own null; each kind of flag gets Benjamini–Hochberg q
values over the audit's tests of that kind, flagged at q ≤ ``--q``, 0.1 by default). BH rather
than a q value calibrated by simulating whole benchmarks: the p-values are already calibrated by
simulation item by item, items' tests are independent given the abilities (BH's condition), and
BH is the statsmodels ``fdr_bh`` number a reviewer can recompute from the rows' ``p``. Every
row carries ``p`` and ``q`` per tested flag. With few runs the smallest p-value an item can
reach is above the bar one flag needs: the audit then flags nothing, and the summary's
``power`` says so (``audit_summary``).

- ``key``: another option draws the abler runs (the other-option test) and the stronger runs
  prefer it to the key. ``suggested_answer``: that option, for every item whose strong runs
  prefer another option to the key (flagged or not).
- ``ambiguous``: the same test, where the key and the other option split the stronger runs.
- ``solved_without_image``: ≥ half of the ``--probe-runs`` (``run --probe no-image``) are right,
  their share right exceeds chance by 0.25; p is the one-sided binomial test against chance.
- ``misfit``: the item's infit mean square (Σ(y − p)² / Σ p(1 − p) under the bank) is larger
  than the fitted model's own answers give (a parametric bootstrap).
- ``saturated`` (every run is right) and ``at_chance`` (the share right is within two binomial
  standard errors of chance, and so is the stronger runs' weighted share right) describe an
  item; they are no defects and carry no q.

``suspicion`` in [0, 1]: the largest of the key evidence (weighted share of the best other option
minus the key's), 0.5 × the smaller of two split shares (ambiguous items), 0.4 × the no-image share
above chance and 0.4 × the misfit excess ((infit − 1) / 3, at most 1): a wrong key ranks first.
``flagged`` (read by ``medlens subset --drop-flagged``) is true for the defect flags
(key, ambiguous, solved_without_image, misfit), not for saturated or at-chance items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import MedlensError
from medlens.items import irt
from medlens.items.audit_null import NullTests, item_null, null_tests
from medlens.items.audit_power import wrong_key_power
from medlens.items.audit_summary import audit_summary, power
from medlens.items.bank import BENCHMARK_KEYS, bank_content, read_bank, refuse_probe_runs
from medlens.items.responses import Responses, answer_text, load_responses
from medlens.stats.multiplicity import adjust

FLAGS = {
    "key": "the stronger runs agree on another option (or the item discriminates negatively): the key may be wrong",
    "ambiguous": "the key and another option split the stronger runs",
    "solved_without_image": "runs without the image (run --probe no-image) answer it right well above chance",
    "saturated": "every run answers it right (it no longer separates models)",
    "at_chance": "runs score it at chance level, the stronger runs too",
    "misfit": "answers do not follow the item model (infit beyond what the model's own answers give)",
}
DEFECTS = ("key", "ambiguous", "solved_without_image", "misfit")
SPLIT = 0.25
NO_IMAGE_ABOVE = 0.25
Q = 0.1
"""Defect flags are those at Benjamini–Hochberg q ≤ this (``items audit --q``)."""


@dataclass(frozen=True)
class Model:
    """Abilities of the audited runs and the item parameters, in the responses' order."""

    theta: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray


def audit(
    paths: Sequence[Path], bank_path: Path | None, probe_paths: Sequence[Path], q: float = Q
) -> dict[str, Any]:
    """The audit's content (``--json``), items sorted by suspicion; defect flags at q ≤ `q`."""
    responses = load_responses(paths)
    refuse_probe_runs(responses)
    return audit_responses(responses, _model(responses, bank_path), _probe_share(responses, probe_paths),
                           [str(p) for p in probe_paths], q)  # fmt: skip


def audit_responses(
    responses: Responses, model: Model, probes: np.ndarray | None, probe_runs: Sequence[str] = (),
    q: float = Q,
) -> dict[str, Any]:  # fmt: skip
    """The audit of responses already read (and of an item model already fitted); defect flags
    at Benjamini–Hochberg q ≤ `q`."""
    weights = 1 / (1 + np.exp(-2 * (model.theta - np.median(model.theta))))
    null = item_null(responses, model.theta, model.a, model.b, model.c)
    tests = null_tests(null, model.theta)
    evidence = [
        _evidence(responses.answers[:, j], model.theta, weights)
        for j in range(len(responses.items))
    ]
    tested = _tested(responses, model, evidence, tests, probes)
    rows = [_item_row(responses, model, probes, j, evidence[j], tested[j], q)
            for j in range(len(responses.items))]  # fmt: skip
    rows.sort(key=lambda row: (-row["suspicion"], row["id"]))

    def sees(bar: float) -> float:
        return wrong_key_power(null, model.theta, model.a, model.c, bar)

    return {
        "benchmark": {k: responses.benchmark.get(k) for k in BENCHMARK_KEYS},
        "runs": {
            name: round(float(t), 4) for name, t in zip(responses.runs, model.theta, strict=True)
        },
        "probe_runs": list(probe_runs),
        "flags": FLAGS,
        "summary": audit_summary(
            responses, rows, probes is not None, power(tested, q, sees), list(FLAGS)
        ),
        "items": rows,
    }


def fitted_model(responses: Responses) -> Model:
    """Abilities and item parameters from a bank fitted on the responses themselves."""
    content = bank_content(responses)
    items, runs = content["items"], content["runs"]
    ids = [item.id for item in responses.items]
    return Model(
        theta=np.array([runs[r]["ability"] for r in responses.runs]),
        a=np.array([items[i]["discrimination"] for i in ids]),
        b=np.array([items[i]["difficulty"] for i in ids]),
        c=np.array([items[i]["guess"] for i in ids]),
    )


def _model(responses: Responses, bank_path: Path | None) -> Model:
    """Item parameters and abilities from the bank (runs it lacks fitted against it), or from a
    bank fitted on these runs."""
    if bank_path is None:
        return fitted_model(responses)
    bank = read_bank(bank_path)
    if bank.benchmark.get("content_hash") != responses.benchmark.get("content_hash"):
        from medlens.core.fingerprint import older_hash_note

        raise MedlensError(
            f"{bank_path}: a bank of {bank.benchmark.get('spec')} (content "
            f"{str(bank.benchmark.get('content_hash'))[:12]}), not of the runs' benchmark "
            f"{responses.benchmark.get('spec')} (content {str(responses.benchmark.get('content_hash'))[:12]})"
            f"{older_hash_note(bank.benchmark, responses.benchmark)}"
        )
    column = {item_id: j for j, item_id in enumerate(bank.ids)}
    order = np.array([column[item.id] for item in responses.items])
    a, b, c = bank.discrimination[order], bank.difficulty[order], bank.guess[order]
    theta = []
    for name, scores in zip(responses.runs, responses.scores, strict=True):
        if name in bank.abilities:
            theta.append(bank.abilities[name][0])
        else:
            seen = ~np.isnan(scores)
            theta.append(irt.ability(scores[seen], a[seen], b[seen], c[seen])[0])
    return Model(np.array(theta), a, b, c)


def _probe_share(responses: Responses, probe_paths: Sequence[Path]) -> np.ndarray | None:
    """Per item: (probe runs right, probe runs scored); None without probe runs."""
    if not probe_paths:
        return None
    probes = load_responses(probe_paths, min_runs=1)
    if probes.benchmark.get("content_hash") != responses.benchmark.get("content_hash"):
        raise MedlensError(
            f"{probe_paths[0]}: a probe run on another benchmark content than the audited runs"
        )
    for path, spec in zip(probes.paths, probes.specs, strict=True):
        if spec.get("probe") != "no-image":
            raise MedlensError(
                f"{path}: not a `run --probe no-image` run (probe {spec.get('probe')!r})"
            )
    return np.stack([np.nansum(probes.scores, axis=0), probes.observed.sum(axis=0)], axis=1)


def _evidence(
    answers: np.ndarray, theta: np.ndarray, weights: np.ndarray
) -> dict[str, dict[str, Any]]:
    given = answers != ""
    total = max(float(weights[given].sum()), 1e-12)
    spread = float(theta.std())
    out = {}
    for option in sorted(set(answers[given].tolist())):
        chose = answers == option
        share = float(chose.mean())
        # point-biserial correlation of choosing the option with ability
        r = (
            0.0
            if spread == 0 or share in (0.0, 1.0)
            else float((theta[chose].mean() - theta.mean()) / spread * np.sqrt(share / (1 - share)))
        )
        out[option] = {
            "n": int(chose.sum()),
            "share": round(float(chose.sum() / max(given.sum(), 1)), 4),
            "mean_ability": round(float(theta[chose].mean()), 4),
            "weighted_share": round(float(weights[chose].sum() / total), 4),
            "ability_correlation": round(r, 4),
        }
    return out


def _tested(
    responses: Responses, model: Model, evidence: list[dict[str, dict[str, Any]]],
    tests: NullTests, probes: np.ndarray | None,
) -> list[dict[str, tuple[float, float]]]:  # fmt: skip
    """Per item: each defect test's flag → (p, q), q by Benjamini–Hochberg over the audit's
    tests of the same kind (the other-option test, misfit, no image): each kind of flag keeps
    its false-discovery rate. The other-option test is named by its direction: ``key`` when the
    stronger runs prefer the other option to the key, ``ambiguous`` when they split."""
    found: dict[str, list[tuple[int, str, float]]] = {"option": [], "misfit": [], "image": []}
    for j, item in enumerate(responses.items):
        own, other = _shares(answer_text(item.answer), evidence[j])
        if other is not None:
            name = "key" if other > own else "ambiguous"
            found["option"].append((j, name, float(tests.distractor[j])))
        if np.isfinite(tests.misfit[j]):
            found["misfit"].append((j, "misfit", float(tests.misfit[j])))
        no_image = _no_image_p(probes, j, float(model.c[j]))
        if no_image is not None:
            found["image"].append((j, "solved_without_image", no_image))
    out: list[dict[str, tuple[float, float]]] = [{} for _ in responses.items]
    for family in found.values():
        q_values = adjust([p for _, _, p in family], "bh").tolist()
        for (j, name, p), q in zip(family, q_values, strict=True):
            out[j][name] = (p, q)
    return out


def _shares(key: str, evidence: dict[str, dict[str, Any]]) -> tuple[float, float | None]:
    """The key's weighted share and the most chosen other option's (None: no other option)."""
    own = evidence.get(key, {}).get("weighted_share", 0.0)
    others = [e["weighted_share"] for o, e in evidence.items() if o != key]
    return own, (max(others) if others else None)


def _item_row(
    responses: Responses, model: Model, probes: np.ndarray | None, j: int,
    evidence: dict[str, dict[str, Any]], tested: dict[str, tuple[float, float]], q: float,
) -> dict[str, Any]:  # fmt: skip
    item = responses.items[j]
    key = answer_text(item.answer)
    scores = responses.scores[:, j]
    seen = ~np.isnan(scores)
    p = irt.probability(
        model.theta[seen], model.a[j : j + 1], model.b[j : j + 1], model.c[j : j + 1]
    )[:, 0]
    expected = float(np.sum(p * (1 - p)))
    infit = float(np.sum((scores[seen] - p) ** 2) / expected) if expected >= 1.0 else None
    no_image = (
        None if probes is None or probes[j, 1] == 0 else (float(probes[j, 0]), int(probes[j, 1]))
    )
    signals = _signals(key, evidence, model, j, scores[seen], infit, no_image)
    found = {name: q_value <= q for name, (_, q_value) in tested.items()}
    found.update((name, signals["flags"][name]) for name in ("saturated", "at_chance"))
    flags = [name for name in FLAGS if found.get(name)]
    return {
        "id": item.id,
        "suspicion": round(signals["suspicion"], 4),
        "flags": flags,
        "flagged": any(f in DEFECTS for f in flags),
        "q": {name: round(q_value, 6) for name, (_, q_value) in tested.items()},
        "p": {name: round(p_value, 6) for name, (p_value, _) in tested.items()},
        "key": key,
        "suggested_answer": signals["best"]
        if found.get("key") or found.get("ambiguous") or signals["prefers_other"]
        else None,
        "p_correct": round(float(scores[seen].mean()), 4) if seen.any() else None,
        "n_runs": int(seen.sum()),
        "chance": round(float(model.c[j]), 4),
        "difficulty": round(float(model.b[j]), 4),
        "discrimination": round(float(model.a[j]), 4),
        "infit": None if infit is None else round(infit, 3),
        "no_image_share": None if no_image is None else round(no_image[0] / no_image[1], 4),
        "no_image_n": 0 if no_image is None else no_image[1],
        "modality": item.meta.get("modality", ""),
        "evidence": evidence,
        "answers": dict(zip(responses.runs, responses.answers[:, j].tolist(), strict=True))
        if flags
        else {},
    }  # fmt: skip


def _signals(
    key: str,
    evidence: dict[str, dict[str, Any]],
    model: Model,
    j: int,
    scores: np.ndarray,
    infit: float | None,
    no_image: tuple[float, int] | None,
) -> dict[str, Any]:
    """The descriptive flags (saturated, at chance), the suspicion and the suggested answer of
    one item (the module docstring's rules)."""
    own = evidence.get(key, {}).get("weighted_share", 0.0)
    others = {o: e for o, e in evidence.items() if o != key}
    best = max(others, key=lambda o: (others[o]["weighted_share"], o)) if others else None
    other = others[best]["weighted_share"] if best else 0.0
    chance, n = float(model.c[j]), len(scores)
    share = float(scores.mean()) if n else 0.0
    flags = {
        "saturated": n > 0 and bool(np.all(scores >= 1.0)),
        "at_chance": n > 1 and chance > 0
        and abs(share - chance) <= 2 * np.sqrt(chance * (1 - chance) / n)
        and own <= chance + 2 * np.sqrt(chance * (1 - chance) / (n / 2)),
    }  # fmt: skip
    no_image_excess = 0.0 if no_image is None else max(no_image[0] / no_image[1] - chance, 0.0)
    suspicion = max(
        max(other - own, 0.0),
        0.5 * min(other, own) if other >= SPLIT and own >= SPLIT else 0.0,
        0.4 * min(no_image_excess / max(1 - chance, 1e-9), 1.0),
        0.4 * min(max((infit or 1.0) - 1.0, 0.0) / 3.0, 1.0),
    )
    return {"flags": flags, "suspicion": min(float(suspicion), 1.0), "best": best,
            "prefers_other": other > own}  # fmt: skip


def _no_image_p(probes: np.ndarray | None, j: int, chance: float) -> float | None:
    """The one-sided binomial p-value of the no-image probe runs' right answers against chance,
    for an item where half of them or more are right and beyond chance by 0.25 (None else: one
    lucky no-image run is no evidence)."""
    if probes is None or probes[j, 1] == 0:
        return None
    from scipy.stats import binom

    right, n = float(probes[j, 0]), int(probes[j, 1])
    share = right / n
    if share < 0.5 or share < chance + NO_IMAGE_ABOVE:
        return None
    return float(binom.sf(round(right) - 1, n, chance)) if chance > 0 else 1.0 / (n + 1)
