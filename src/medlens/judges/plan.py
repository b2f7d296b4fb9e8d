"""Everything `medlens judge` checks and lists before it writes anything: the protocol, the
judges (one, or a panel's members), self-judging, ``--swap``, the label sets of ``mmbu``, each
stage's judge.json and the calls to make.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.execution.strategies import final_answer_text
from medlens.judges.combine import protocol_kind
from medlens.judges.identity import evaluated_models, judge_fingerprint, refuse_self_judge
from medlens.judges.mmbu import label_set_summary, label_sets
from medlens.judges.options import (
    JudgeOptions,
    default_judge_name,
    load_judge_model,
    member_names,
    validate,
)
from medlens.judges.panel import panel_block
from medlens.judges.protocol import JudgeProtocol
from medlens.judges.protocols import load_protocol
from medlens.judges.tasks import (
    JudgeSettings,
    JudgeTask,
    answer_text,
    eligible,
    rule_judgement,
    settled_by_rules,
)
from medlens.models.base import Model
from medlens.runs.judgements import JUDGE_SCHEMA, check_resumable, judges_dir, member_folder
from medlens.runs.recorded import stored_spec
from medlens.runs.view import RunView


@dataclass
class PreparedJudge:
    """One judge stage: a single judge, or one member of a panel."""

    options: JudgeOptions
    folder: Path
    spec: dict[str, Any]
    settings: JudgeSettings
    model: Model
    rule_lines: list[dict[str, Any]]
    tasks: list[JudgeTask]
    run: RunView
    cache_checks: list[dict[str, Any]] = field(default_factory=list)
    """Failed live checks of the response cache during this stage (``execution.cache``)."""


@dataclass
class JudgePlan:
    """What one `medlens judge` command will do."""

    stages: list[PreparedJudge]
    folder: Path
    """The judge's folder (the panel's, for a panel)."""
    run: RunView
    panel_spec: dict[str, Any] | None = None
    self_judged: tuple[str, ...] = ()
    """Why the judge is the evaluated model, when ``--allow-self-judge`` let it judge."""
    evaluated: frozenset[str] = frozenset()
    """The evaluated model's names (spec and served), lower case."""


def prepare_judge(options: JudgeOptions) -> JudgePlan:
    """Validate, load the run and the judge(s), and list the work; writes nothing."""
    validate(options)
    protocol = load_protocol(options.protocol, options.weights)
    if options.swap and not protocol.shows_order:
        raise SpecError(
            f"--swap: protocol {protocol.name} shows one answer and no options, so there is no "
            "order to swap (use it with --protocol choice)"
        )
    run = RunView(options.run_dir)
    records = run.records()
    evaluated = evaluated_models(stored_spec(str(run.run["spec"]["model"])), records.values())
    reasons = refuse_self_judge(options.judges, evaluated, options.allow_self_judge)
    settings = judge_settings(options, protocol, run, evaluated)
    if not options.panel:
        name = options.name or default_judge_name(options.judge)
        folder = judges_dir(options.run_dir) / name
        stage = prepare_stage(options, protocol, settings, run, (folder, name))
        return JudgePlan([stage], folder, run, None, tuple(reasons), evaluated)
    return replace(
        prepare_panel(options, protocol, settings, run, tuple(reasons)), evaluated=evaluated
    )


def judge_settings(
    options: JudgeOptions, protocol: JudgeProtocol, run: RunView, evaluated: frozenset[str]
) -> JudgeSettings:
    kinds = protocol.kinds | ({"report"} if options.reports else set())
    items = run.items()
    return JudgeSettings(
        protocol=protocol,
        scope=options.scope or protocol.default_scope,
        repeats=options.repeats,
        images=options.images,
        with_question=options.with_question,
        kinds=frozenset(kinds),
        swap=options.swap,
        label_sets=label_sets(items, protocol.kinds) if protocol.kind == "mmbu" else {},
        self_models=frozenset() if options.allow_self_judge else evaluated,
    )


def prepare_stage(
    options: JudgeOptions,
    protocol: JudgeProtocol,
    settings: JudgeSettings,
    run: RunView,
    where: tuple[Path, str],
) -> PreparedJudge:
    """One stage of `options.judge`, in folder `where` under name; refused if it differs from
    the stage already there."""
    folder, name = where
    items = run.items()
    # Only the spec is needed until there is something to judge: local engines (hf:, vllm:)
    # load their weights when calls remain, so a refused or finished stage loads none.
    model = load_judge_model(options.judge, items, options.concurrency, describe_only=True)
    if options.repeats > 1 and model.deterministic and options.judge.name != "replay":
        raise SpecError(
            f"--repeats {options.repeats}: the judge {model.spec.split('?')[0]} answers "
            "deterministically, so repeats would agree by construction; sample it "
            "(e.g. temperature=0.7 without seed in an openai: spec)"
        )
    spec = stage_spec(name, model.spec, protocol, settings, judge_identity(model))
    check_resumable(folder, spec)
    rule_lines, tasks = plan(items, run.records(), settings, cot=_cot_run(run))
    return PreparedJudge(options, folder, spec, settings, model, rule_lines, tasks, run)


def judge_identity(model: Model) -> str | None:
    """Who answers beyond the spec: a served judge's endpoint, a local one's weights (the
    response cache's ``cache_identity``); None for replayed replies."""
    return str(getattr(model, "cache_identity", "") or "") or None


def stage_spec(
    name: str,
    judge: str,
    protocol: JudgeProtocol,
    settings: JudgeSettings,
    identity: str | None = None,
    members: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A stage's judge.json (keys that are new since schema 1 appear only when used, so an
    older stage of the same judge still resumes)."""
    spec: dict[str, Any] = {
        "schema": JUDGE_SCHEMA,
        "name": name,
        "judge": judge,
        "protocol": protocol.to_json(),
        "scope": settings.scope,
        "repeats": settings.repeats,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "judge_fingerprint": judge_fingerprint(judge, protocol, settings.scope, identity, members),
    }
    if settings.swap:
        spec["swap"] = True
    if settings.label_sets:
        spec["label_sets"] = label_set_summary(settings.label_sets)
    return spec


def prepare_panel(
    options: JudgeOptions,
    protocol: JudgeProtocol,
    settings: JudgeSettings,
    run: RunView,
    reasons: tuple[str, ...],
) -> JudgePlan:
    """The panel's judge.json and one stage per member under ``members/``."""
    name = options.name or "panel"
    folder = judges_dir(options.run_dir) / name
    stages = []
    for judge, member in zip(options.panel, member_names(options.panel), strict=True):
        member_options = replace(options, judge=judge, panel=(), name=member)
        where = (member_folder(folder, member), member)
        stages.append(prepare_stage(member_options, protocol, settings, run, where))
    members = [(stage.spec["name"], str(stage.spec["judge"])) for stage in stages]
    label = "panel(" + ", ".join(name for name, _ in members) + ")"
    block = [
        {"name": n, "judge": j, "identity": stage.spec["judge_fingerprint"]["identity"]}
        for (n, j), stage in zip(members, stages, strict=True)
    ]
    spec = stage_spec(name, label, protocol, settings, members=block)
    spec["panel"] = panel_block(protocol_kind(spec), members)
    check_resumable(folder, spec)
    return JudgePlan(stages, folder, run, spec, reasons)


def plan(
    items: list[Item], records: dict[str, Any], settings: JudgeSettings, cot: bool = False
) -> tuple[list[dict[str, Any]], list[JudgeTask]]:
    """Lines the rules settle without a call, and the calls to make (every repeat, and with
    ``--swap`` every repeat in the second order too, numbered after the first ones)."""
    rule_lines: list[dict[str, Any]] = []
    tasks: list[JudgeTask] = []
    for item in items:
        record = records.get(item.id)
        if record is None or not eligible(item, record, settings):
            continue
        if settled_by_rules(item, record, settings):
            rule_lines.append(rule_judgement(item, record))
            continue
        answer = answer_text(record)
        if cot and settings.protocol.kind == "mmbu":  # MMBU's judge reads the final answer
            answer = final_answer_text(answer)
        tasks.extend(JudgeTask(item, answer, repeat) for repeat in range(settings.repeats))
        if settings.swap:
            tasks.extend(
                JudgeTask(item, answer, settings.repeats + repeat, swapped=True)
                for repeat in range(settings.repeats)
            )
    return rule_lines, tasks


def _cot_run(run: RunView) -> bool:
    strategy = (run.run.get("spec") or {}).get("strategy") or {}
    return "cot" in str(strategy.get("name", "")).split("+")
