"""Who judges: the judge fingerprint of judge.json and the protocol card, and the refusal of a
model judging its own answers (agentv #407, AssetOpsBench #336: the evaluated system silently
became its own judge).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.records import Record
from medlens.core.specs import Spec
from medlens.judges.protocol import JudgeProtocol
from medlens.runs.provenance import served_summary

NOT_MODELS = frozenset({"replay", "random", "first", "prior", "oracle"})
"""Backends that are no model: they can neither judge themselves nor be judged by themselves."""


def model_name(spec: Spec) -> str:
    """The model a spec names, as compared for self-judging: the last part of its argument
    (``openai:org/Llava-7B`` and ``hf:/models/llava-7b`` both name ``llava-7b``)."""
    if spec.name in NOT_MODELS or not spec.argument:
        return ""
    return Path(spec.argument.rstrip("/")).name.lower()


def evaluated_models(model_spec: Spec, records: Iterable[Record]) -> frozenset[str]:
    """The evaluated run's model: its spec's name and every model its server said it served."""
    names = {model_name(model_spec)}
    names |= {str(r["served_model"]).lower() for r in records if r.get("served_model")}
    return frozenset(name for name in names if name)


def self_judge_reason(judge: Spec, evaluated: frozenset[str]) -> str | None:
    """Why `judge` is the evaluated model (by its spec), or None."""
    name = model_name(judge)
    if name and name in evaluated:
        return (
            f"the judge {judge.name}:{judge.argument} names {name!r}, the model this run evaluates"
        )
    return None


def refuse_self_judge(
    judges: Iterable[Spec], evaluated: frozenset[str], allowed: bool
) -> list[str]:
    """Reasons each judge is the evaluated model; refused (exit 2) unless `allowed`."""
    reasons = [r for judge in judges if (r := self_judge_reason(judge, evaluated))]
    if reasons and not allowed:
        raise SpecError(
            f"{reasons[0]}: a model judging its own answers is refused "
            "(--allow-self-judge to judge anyway; every judged table is then marked self-judged)"
        )
    return reasons


def served_counts(lines: Iterable[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """What the judge server said it was: served model and system fingerprint → replies
    (counted as a run's records are: ``provenance.served_summary``)."""
    found = served_summary(lines)
    return found["served_model"], found["system_fingerprint"]


def judge_fingerprint(
    judge: str,
    protocol: JudgeProtocol,
    scope: str,
    identity: str | None = None,
    members: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Everything that says which judge gave the verdicts: `identity` is the endpoint of a
    served judge or the weights of a local one (the response cache's identity); the served
    model and system fingerprint are filled in from the replies once the stage ran."""
    return {
        "judge": judge,
        "identity": identity,
        "served_models": {},
        "system_fingerprints": {},
        "protocol": protocol.name,
        "protocol_version": protocol.version,
        "template_sha256": protocol.template_sha256,
        "weights": protocol.weights,
        "scope": scope,
        "members": members or [],
        **({"provenance": protocol.provenance} if protocol.provenance else {}),
    }


def fingerprint_lines(spec: Mapping[str, Any]) -> list[str]:
    """The fingerprint as the protocol card prints it."""
    found = spec.get("judge_fingerprint")
    if not isinstance(found, Mapping):
        return []
    served = ", ".join(f"{k} ({n})" for k, n in (found.get("served_models") or {}).items())
    systems = ", ".join(f"{k} ({n})" for k, n in (found.get("system_fingerprints") or {}).items())
    text = (
        f"protocol {found.get('protocol')} v{found.get('protocol_version')}, template sha256 "
        f"{str(found.get('template_sha256'))[:12]}, scope {found.get('scope')}; served model "
        f"{served or 'not reported'}; system fingerprint {systems or 'not reported'}"
    )
    if found.get("identity"):
        text += f"; {found['identity']}"
    members = found.get("members") or []
    if members:
        text += "; members " + ", ".join(
            f"{m['name']} ({m['judge']}{', ' + m['identity'] if m.get('identity') else ''})"
            for m in members
        )
    return [text]


def served_switch_line(name: str, fingerprint: dict[str, Any] | None) -> str | None:
    """``judge NAME: the server-reported model changed within this stage: …`` (the run's
    health line, for a judge), or None when one model (and fingerprint) answered."""
    for key, what in (("served_models", "model"), ("system_fingerprints", "system_fingerprint")):
        values = (fingerprint or {}).get(key) or {}
        if len(values) > 1:
            listing = ", ".join(f"{v} ({n} replies)" for v, n in values.items())
            return f"judge {name}: the server-reported {what} changed within this stage: {listing}"
    return None
