"""The built-in judge protocols (MMBU equivalence, Med-CMR rubric, VLMEvalKit choice extraction)
and user rubrics read from TOML or JSON files."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.notation import bounded_number, settings
from medlens.core.tomlfile import tomllib
from medlens.judges.protocol import Dimension, JudgeProtocol

EQUIVALENCE = JudgeProtocol(
    name="equivalence",
    kind="equivalence",
    instructions=(
        "You are grading a biomedical answer against a reference answer. Decide whether the "
        "answer is strictly equivalent in biomedical meaning to the reference. Check negation "
        '("pneumonia" vs "no pneumonia": not equivalent), laterality (left vs right), '
        'severity (mild vs severe), uncertainty ("possible" vs definite) and diagnostic '
        "specificity (a broader or narrower finding is not equivalent). Synonyms, a Latin and a "
        "common name of one structure, abbreviations and wording differences are equivalent."
    ),
    reply_format=(
        'End your reply with one JSON object: {"equivalent": true or false, "reason": "..."}'
    ),
    kinds=frozenset({"open", "classify"}),
    default_scope="unresolved",
)

RUBRIC_DIMENSIONS = (
    Dimension(
        "consistency",
        "the answer is consistent with itself and with the question asked",
        1.0,
    ),
    Dimension("coherence", "the reasoning is clear, logical and well organised", 1.0),
    Dimension(
        "visual_accuracy",
        "what the answer says about the image (findings, locations, structures) is accurate",
        4.0,
    ),
    Dimension(
        "ground_truth_correctness",
        "the answer reaches the conclusion of the reference answer",
        4.0,
    ),
)

RUBRIC = JudgeProtocol(
    name="rubric",
    kind="rubric",
    instructions=(
        "You are an independent expert grading a model's answer to a medical question against "
        "the reference answer. Score each dimension below as a whole number."
    ),
    reply_format=(
        "End your reply with one JSON object with the keys consistency, coherence, "
        'visual_accuracy, ground_truth_correctness (whole numbers 0-10) and "rationale" '
        "(a short string)."
    ),
    dimensions=RUBRIC_DIMENSIONS,
    kinds=frozenset({"open", "report"}),
    default_scope="all",
    shows_question=True,
)

CHOICE = JudgeProtocol(
    name="choice",
    kind="choice",
    instructions=(
        "A model answered a multiple-choice question, but its reply could not be matched to an "
        "option by rules. Say which option letter(s) the answer chose. Do not judge whether it "
        "is right."
    ),
    reply_format='End your reply with one JSON object: {"answer": "B"} (several letters: "AC").',
    kinds=frozenset({"choice", "multi_choice"}),
    default_scope="unresolved",
    shows_question=True,
)

BUILTIN = {"equivalence": EQUIVALENCE, "rubric": RUBRIC, "choice": CHOICE}


def load_protocol(name: str, weights: Mapping[str, float] | None = None) -> JudgeProtocol:
    """A built-in protocol or ``file:PATH``, with `weights` replacing the default weights."""
    if name.startswith("file:"):
        protocol = load_protocol_file(Path(name[len("file:") :]))
    else:
        from medlens.judges import JUDGE_PROTOCOLS

        try:
            protocol = JUDGE_PROTOCOLS.get(name)
        except SpecError as exc:
            raise SpecError(f"--protocol: {exc}; or file:PATH for a rubric file") from None
    return with_weights(protocol, weights or {})


def with_weights(protocol: JudgeProtocol, weights: Mapping[str, float]) -> JudgeProtocol:
    """`protocol` with some dimension weights changed; unknown or negative weights refused."""
    known = [d.name for d in protocol.dimensions]
    for key, value in weights.items():
        if key not in known:
            have = ", ".join(known) or "none"
            raise SpecError(
                f"--weights {key}: protocol {protocol.name} has no such dimension (dimensions: {have})"
            )
        if not math.isfinite(value) or value < 0:
            raise SpecError(f"--weights {key}={value:g}: weights must be finite and not negative")
    dimensions = tuple(
        replace(d, weight=float(weights.get(d.name, d.weight))) for d in protocol.dimensions
    )
    if dimensions and sum(d.weight for d in dimensions) <= 0:
        raise SpecError("--weights: at least one weight must be above 0")
    return replace(protocol, dimensions=dimensions)


def parse_weights(text: str | None) -> dict[str, float]:
    """``k=v,k=v`` → {k: v} (``core.notation``'s settings); a malformed pair is an error."""
    text = text or ""
    return {
        key: bounded_number(raw, "--weights", text, key, expected="NAME=NUMBER")
        for key, raw in settings(text, "--weights", "NAME=NUMBER")
    }


def load_protocol_file(path: Path) -> JudgeProtocol:
    """A user rubric from TOML or JSON: instructions, scale, dimensions (name, description,
    weight), and optionally kinds, scope, question and images."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(path, None, f"cannot read the rubric ({exc.strerror})") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except ValueError as exc:
        raise InputError(
            path, None, f"not valid {path.suffix.lstrip('.') or 'JSON'} ({exc})"
        ) from None
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a table/object at the top")
    return _rubric_from_data(path, data)


def _rubric_from_data(path: Path, data: dict[str, Any]) -> JudgeProtocol:
    known = {"instructions", "scale", "dimensions", "kinds", "scope", "question", "images"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InputError(
            path, None, f"unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    instructions = data.get("instructions")
    if not isinstance(instructions, str) or not instructions.strip():
        raise InputError(path, "field instructions", "must be a non-empty string")
    scale = data.get("scale", [0, 10])
    if not (
        isinstance(scale, list)
        and len(scale) == 2
        and all(type(v) is int for v in scale)
        and scale[0] < scale[1]
    ):
        raise InputError(path, "field scale", "must be [LOW, HIGH], two whole numbers, LOW < HIGH")
    dimensions = _dimensions(path, data.get("dimensions"))
    kinds = data.get("kinds", ["open"])
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise InputError(path, "field kinds", "must be a list of item kinds")
    scope = data.get("scope", "all")
    if scope not in ("unresolved", "all"):
        raise InputError(path, "field scope", f"{scope!r}: expected unresolved or all")
    names = ", ".join(d.name for d in dimensions)
    return JudgeProtocol(
        name=f"file:{path}",
        kind="rubric",
        instructions=instructions,
        reply_format=(
            f"End your reply with one JSON object with the keys {names} (whole numbers "
            f'{scale[0]}-{scale[1]}) and "rationale" (a short string).'
        ),
        dimensions=dimensions,
        scale=(scale[0], scale[1]),
        kinds=frozenset(kinds),
        default_scope=scope,
        shows_question=bool(data.get("question", True)),
        shows_images=bool(data.get("images", False)),
    )


def _dimensions(path: Path, raw: Any) -> tuple[Dimension, ...]:
    if not isinstance(raw, list) or not raw:
        raise InputError(
            path, "field dimensions", "must be a non-empty list of {name, description, weight}"
        )
    out: list[Dimension] = []
    for number, entry in enumerate(raw, start=1):
        where = f"dimension {number}"
        if not isinstance(entry, dict):
            raise InputError(path, where, "must be a table/object")
        name, description = entry.get("name"), entry.get("description", "")
        weight = entry.get("weight", 1.0)
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(
                path, f"{where}, field name", "must be a name made of letters, digits and _"
            )
        if any(d.name == name for d in out):
            raise InputError(path, f"{where}, field name", f"{name!r} appears twice")
        if not isinstance(description, str):
            raise InputError(path, f"{where}, field description", "must be a string")
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not math.isfinite(weight)
            or weight < 0
        ):
            raise InputError(path, f"{where}, field weight", f"{weight!r}: must be a number ≥ 0")
        out.append(Dimension(name, description, float(weight)))
    if sum(d.weight for d in out) <= 0:
        raise InputError(path, "field dimensions", "at least one weight must be above 0")
    return tuple(out)
