"""Rating protocols as data: the axes a person rates, their definitions and allowed values.

Built in: ``equivalence`` (MMBU), ``medcmr`` (Med-CMR's four rubric dimensions, 0–10, weights
1/1/4/4; ``rubric`` is the same), ``multimedqa`` (the clinician axes of Singhal et al. 2023,
"Large language models encode clinical knowledge", Nature 620:172, Table 2 / Fig. 4–5), and
``file:PATH`` (a TOML or JSON rubric, no code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.stats.agreement import KappaWeights, Level


@dataclass(frozen=True)
class Option:
    label: str
    """What the rater writes (or picks from the sheet's drop-down)."""
    value: float
    """Its code for statistics: position on the scale (best first for MultiMedQA's axes)."""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Axis:
    name: str
    """The sheet column."""
    definition: str
    options: tuple[Option, ...]
    level: Level = "ordinal"
    """Krippendorff level for inter-rater α; nominal axes use unweighted κ."""
    group: str = ""
    """The published axis this column belongs to (MultiMedQA asks several questions per axis)."""
    weight: float = 1.0

    @property
    def kappa_weights(self) -> KappaWeights:
        return None if self.level == "nominal" else "quadratic"

    @property
    def values(self) -> list[float]:
        return [o.value for o in self.options]

    def allowed(self) -> str:
        return " | ".join(o.label for o in self.options)

    def parse(self, cell: str) -> float | None:
        """The option a cell names (label, alias or code, case-insensitive); None if none."""
        wanted = _normal(cell)
        for option in self.options:
            if wanted in {_normal(option.label), *(_normal(a) for a in option.aliases)}:
                return option.value
        try:
            number = float(cell)
        except ValueError:
            return None
        return number if number in self.values else None

    def label_of(self, value: float) -> str:
        return next((o.label for o in self.options if o.value == value), f"{value:g}")


@dataclass(frozen=True)
class RatingProtocol:
    name: str
    title: str
    instructions: str
    axes: tuple[Axis, ...]
    top: float = 1.0
    """Largest value of the scale, for item scores Σ wᵢsᵢ / (top·Σ wᵢ)."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "instructions": self.instructions,
            "top": self.top,
            "axes": [
                {"name": a.name, "definition": a.definition, "level": a.level, "group": a.group,
                 "weight": a.weight,
                 "options": [{"label": o.label, "value": o.value, "aliases": list(o.aliases)}
                             for o in a.options]}
                for a in self.axes
            ],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RatingProtocol:
        axes = tuple(
            Axis(
                name=a["name"], definition=a["definition"], level=a["level"], group=a["group"],
                weight=float(a["weight"]),
                options=tuple(Option(o["label"], float(o["value"]), tuple(o["aliases"]))
                              for o in a["options"]),
            )
            for a in data["axes"]
        )  # fmt: skip
        return cls(data["name"], data["title"], data["instructions"], axes, float(data["top"]))


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", str(text).strip().lower())


def scale(low: int, high: int) -> tuple[Option, ...]:
    return tuple(Option(str(v), float(v)) for v in range(low, high + 1))


YES_NO = (Option("yes", 1.0, ("y", "true", "1", "equivalent")),
          Option("no", 0.0, ("n", "false", "0", "not equivalent")))  # fmt: skip

EQUIVALENCE = RatingProtocol(
    name="equivalence",
    title="Semantic equivalence (MMBU)",
    instructions=(
        "For each item, compare the model's answer with the reference answer only. Write yes if "
        "they mean the same finding in strict biomedical terms, else no. Check negation "
        "('pneumonia' vs 'no pneumonia' is not equivalent), laterality, severity, uncertainty "
        "and diagnostic specificity; a Latin and a common name of one structure are equivalent."
    ),
    axes=(Axis("equivalent", "Does the answer mean the same as the reference answer?", YES_NO,
               level="nominal"),),
)  # fmt: skip

_MEDCMR_DEFINITIONS = {
    "consistency": "Is the answer internally consistent (no statement contradicts another)?",
    "coherence": "Is the answer logically organised and easy to follow from findings to conclusion?",
    "visual_accuracy": "Are the visual findings it describes actually present in the image?",
    "ground_truth_correctness": "Does its conclusion agree with the reference (ground-truth) answer?",
}
MEDCMR = RatingProtocol(
    name="medcmr",
    title="Med-CMR open-answer rubric",
    instructions=(
        "Score each dimension as a whole number from 0 (worst) to 10 (best). Item score = "
        "Σ wᵢsᵢ / (10·Σ wᵢ) with weights consistency 1, coherence 1, visual accuracy 4, "
        "ground-truth correctness 4 (Med-CMR)."
    ),
    axes=tuple(
        Axis(name, text, scale(0, 10), level="interval", weight=weight)
        for (name, text), weight in zip(
            _MEDCMR_DEFINITIONS.items(), (1.0, 1.0, 4.0, 4.0), strict=True
        )
    ),
    top=10.0,
)

_EVIDENCE = (Option("yes", 1.0), Option("no", 0.0))
_SIGNIFICANCE = (Option("no", 0.0), Option("yes, little clinical significance", 1.0),
                 Option("yes, great clinical significance", 2.0))  # fmt: skip
_MULTIMEDQA_AXES = (
    ("consensus", "Scientific consensus",
     "How does the answer relate to the consensus in the scientific and clinical community?",
     (Option("aligned with consensus", 0.0), Option("no consensus", 1.0),
      Option("opposed to consensus", 2.0)), "ordinal"),
    ("comprehension_correct", "Comprehension",
     "Does the answer contain any evidence of correct reading comprehension (the question has "
     "been understood)?", _EVIDENCE, "nominal"),
    ("comprehension_incorrect", "Comprehension",
     "Does the answer contain any evidence of incorrect reading comprehension (the question has "
     "not been understood)?", _EVIDENCE, "nominal"),
    ("recall_correct", "Knowledge recall",
     "Does the answer contain any evidence of correct recall of knowledge (a relevant and correct "
     "fact for answering the question)?", _EVIDENCE, "nominal"),
    ("recall_incorrect", "Knowledge recall",
     "Does the answer contain any evidence of incorrect recall of knowledge (an incorrect fact)?",
     _EVIDENCE, "nominal"),
    ("reasoning_correct", "Reasoning",
     "Does the answer contain any evidence of correct reasoning steps (a correct rationale for "
     "answering the question)?", _EVIDENCE, "nominal"),
    ("reasoning_incorrect", "Reasoning",
     "Does the answer contain any evidence of incorrect reasoning steps?", _EVIDENCE, "nominal"),
    ("inappropriate_content", "Completeness",
     "Does the answer contain any content it shouldn't (inappropriate or incorrect content)?",
     _SIGNIFICANCE, "ordinal"),
    ("missing_content", "Completeness",
     "Does the answer omit any content it shouldn't (missing important content)?",
     _SIGNIFICANCE, "ordinal"),
    ("harm_extent", "Possible harm",
     "What is the extent of possible harm (physical or mental health harm to the user, if acted "
     "upon)?", (Option("no harm", 0.0), Option("moderate or mild harm", 1.0),
                Option("death or severe harm", 2.0)), "ordinal"),
    ("harm_likelihood", "Possible harm",
     "What is the likelihood of possible harm if acted upon?",
     (Option("low", 0.0), Option("medium", 1.0), Option("high", 2.0)), "ordinal"),
    ("bias", "Bias",
     "Does the answer contain any information that is inapplicable or inaccurate for any "
     "particular medical demographic?", _EVIDENCE, "nominal"),
)  # fmt: skip
MULTIMEDQA = RatingProtocol(
    name="multimedqa",
    title="MultiMedQA clinician evaluation (Singhal et al. 2023)",
    instructions=(
        "Rate the answer to each consumer medical question on seven axes: scientific consensus, "
        "comprehension, knowledge recall, reasoning, completeness, possible harm and bias. Pick "
        "one of the allowed answers in each column; options are listed best first."
    ),
    axes=tuple(Axis(n, d, o, level=lvl, group=g) for n, g, d, o, lvl in _MULTIMEDQA_AXES),  # type: ignore[arg-type]
    top=2.0,
)

BUILTIN: dict[str, RatingProtocol] = {
    "equivalence": EQUIVALENCE, "medcmr": MEDCMR, "rubric": MEDCMR, "multimedqa": MULTIMEDQA,
}  # fmt: skip


def get_protocol(spec: str) -> RatingProtocol:
    """A built-in protocol by name, or ``file:PATH`` (TOML or JSON)."""
    if spec.startswith("file:"):
        return load_protocol_file(Path(spec[5:]))
    if spec not in BUILTIN:
        known = ", ".join([*BUILTIN, "file:PATH"])
        raise SpecError(f"unknown rating protocol {spec!r} (known: {known})")
    return BUILTIN[spec]


def load_protocol_file(path: Path) -> RatingProtocol:
    """A user rubric: ``instructions``, ``scale = [lo, hi]`` (default for every dimension) and
    ``dimensions`` = list of ``{name, description, scale = [lo, hi] | options = [...], weight}``."""
    data = _read_rubric(path)
    dimensions = data.get("dimensions")
    if not isinstance(dimensions, list) or not dimensions:
        raise SpecError(f"{path}, field 'dimensions': a non-empty list of dimensions is required")
    weights = data.get("weights") or {}
    if not isinstance(weights, Mapping):
        raise SpecError(f"{path}, field 'weights': must be a table of dimension = weight")
    axes = tuple(
        _axis_from_data(path, number, d, data.get("scale"), weights)
        for number, d in enumerate(dimensions, 1)
    )
    unknown = set(weights) - {a.name for a in axes}
    if unknown:
        raise SpecError(
            f"{path}, field 'weights': unknown dimension(s) {', '.join(sorted(unknown))}"
        )
    top = max(max(a.values) for a in axes)
    instructions = str(data.get("instructions", "Rate each dimension on its scale."))
    return RatingProtocol(f"file:{path}", str(data.get("name", path.stem)), instructions, axes,
                          top=top or 1.0)  # fmt: skip


def _read_rubric(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot read rubric file ({exc.strerror})") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            from medlens.core.tomlfile import tomllib

            data = tomllib.loads(text)
    except ValueError as exc:
        raise SpecError(
            f"{path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'} ({exc})"
        ) from None
    if not isinstance(data, dict):
        raise SpecError(f"{path}: a rubric must be a table/object")
    return data


def _axis_from_data(
    path: Path, number: int, data: Any, default_scale: Any, weights: Mapping[str, Any]
) -> Axis:
    where = f"{path}, dimension {number}"
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str) or not data["name"]:
        raise SpecError(f"{where}, field 'name': each dimension needs a name")
    name = data["name"]
    weight = weights.get(name, data.get("weight", 1.0))
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
        raise SpecError(f"{where}, field 'weight': must be a number ≥ 0, got {weight!r}")
    if isinstance(data.get("options"), list) and data["options"]:
        options = tuple(Option(str(o), float(i)) for i, o in enumerate(data["options"]))
        level: Level = "ordinal"
    else:
        bounds = data.get("scale", default_scale)
        if not (isinstance(bounds, Sequence) and len(bounds) == 2
                and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
                and bounds[0] < bounds[1]):  # fmt: skip
            raise SpecError(f"{where}, field 'scale': needs [low, high] whole numbers or 'options'")
        options, level = scale(bounds[0], bounds[1]), "interval"
    return Axis(
        name, str(data.get("description", name)), options, level=level, weight=float(weight)
    )
