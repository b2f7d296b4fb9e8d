"""What `medlens judge` was asked to do, checked before anything runs, and the judge model it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.core.limits import check_calls_per_item
from medlens.core.specs import Spec
from medlens.judges.identity import model_name, refuse_self_judge
from medlens.judges.protocols import load_protocol
from medlens.models.base import Model, ModelContext

SCOPES = ("unresolved", "all")


LOADS_WEIGHTS = ("hf", "vllm")
"""Backends whose describe-only form (``ModelContext.describe_only``) skips loading weights."""


@dataclass(frozen=True)
class JudgeOptions:
    """What `medlens judge` was asked to do."""

    run_dir: Path
    judge: Spec
    protocol: str
    name: str | None = None
    scope: str | None = None
    """None: the protocol's default (unresolved for equivalence and choice, all for rubric)."""
    weights: dict[str, float] = field(default_factory=dict)
    repeats: int = 1
    concurrency: int = 8
    images: bool = False
    with_question: bool = False
    reports: bool = False
    """Also judge ``report`` items (equivalence)."""
    cache: bool = True
    executor: str = "local"
    ray_address: str | None = None
    panel: tuple[Spec, ...] = ()
    """Every member when two or more ``--judge`` are given (``judge`` is the first): a panel."""
    swap: bool = False
    """Ask each item in both orders of its options and count order flips (choice)."""
    allow_self_judge: bool = False
    """Judge even when the judge is the evaluated model; judged tables say "self-judged"."""
    retry_errors: bool = False
    """Ask again every (item, repeat) whose line holds no verdict (unparseable and out-of-scale
    replies too, not only transport failures)."""

    @property
    def judges(self) -> tuple[Spec, ...]:
        return self.panel or (self.judge,)

    yes: bool = False
    """Confirms more than MAX_SAMPLES repeats per item."""


def default_judge_name(spec: Spec) -> str:
    """The judge model's name (``openai:gpt-4o`` → ``gpt-4o``; ``hf:/m/tiny`` → ``tiny``)."""
    tail = Path(spec.argument.rstrip("/")).name if spec.argument else ""
    name = (
        tail
        if spec.name in ("openai", "hf", "vllm") and tail
        else "-".join(filter(None, (spec.name, tail)))
    )
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.") or "judge"


def validate(options: JudgeOptions) -> None:
    if options.scope is not None and options.scope not in SCOPES:
        raise SpecError(f"--scope {options.scope!r}: expected unresolved or all")
    if options.repeats < 1:
        raise SpecError("--repeats must be at least 1")
    check_calls_per_item(f"--repeats {options.repeats}", options.repeats, options.yes)
    if options.concurrency < 1:
        raise SpecError("--concurrency must be at least 1")
    if options.executor not in ("local", "ray"):
        raise SpecError(f"--executor {options.executor!r}: expected local or ray")
    if options.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", options.name):
        raise SpecError(f"--name {options.name!r}: use letters, digits, '.', '_' and '-'")
    for spec in options.judges:
        if spec.name == "openai" and not spec.option("base_url"):
            raise SpecError(
                f"--judge {spec}: give the judge server's base_url "
                "(e.g. openai:NAME?base_url=http://127.0.0.1:8000/v1); a judge never defaults to a paid API"
            )
    seen: set[str] = set()
    for spec in options.panel:
        if spec.canonical() in seen:
            raise SpecError(
                f"--judge {spec}: given twice; a panel needs different judges (another model, "
                "server or setting), since one judge twice agrees with itself by construction"
            )
        seen.add(spec.canonical())


def judge_options_for_run(
    judge: Spec,
    protocol: str,
    concurrency: int,
    cache: bool,
    allow_self_judge: bool = False,
    model: Spec | None = None,
) -> JudgeOptions:
    """`medlens run --judge SPEC --judge-protocol P`: options checked before the run starts
    (a judge naming the evaluated `model` is refused then, not after the answers)."""
    options = JudgeOptions(
        run_dir=Path(), judge=judge, protocol=protocol, concurrency=concurrency, cache=cache,
        allow_self_judge=allow_self_judge,
    )  # fmt: skip
    validate(options)
    if model is not None:
        refuse_self_judge([judge], frozenset({model_name(model)} - {""}), allow_self_judge)
    load_protocol(protocol)
    from medlens.models import MODELS

    name = judge.name
    if name != "replay":
        MODELS.get(name)
    return options


def member_names(specs: tuple[Spec, ...]) -> list[str]:
    """Each panel member's folder name: its model's name, numbered when two share one."""
    names: list[str] = []
    for spec in specs:
        base = default_judge_name(spec)
        name, number = base, 2
        while name in names:
            name, number = f"{base}-{number}", number + 1
        names.append(name)
    return names


def load_judge_model(spec: Spec, items: list[Item], concurrency: int, describe_only: bool) -> Model:
    """Any answering backend, or ``replay:FILE`` of stored judge replies."""
    if spec.name == "replay":
        from medlens.judges.replay import make_replay_judge

        return make_replay_judge(spec)
    from medlens.models import load_model

    context = ModelContext(items=items, concurrency=concurrency, describe_only=describe_only)
    return load_model(spec, context)
