"""The protocol card every report carries: what was run and how, its environment, whether the
protocol is the benchmark's official one, and the citations and usage statement it ends with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from medlens.analysis.comparability import READING_PROTOCOLS
from medlens.checks.admission import admission_facts, admission_text, sources_of
from medlens.checks.contamination import cutoff_text, isolation_text
from medlens.execution.generation import generation_text, self_consistency_text
from medlens.judges.identity import fingerprint_lines
from medlens.runs.layout import JUDGE_FILE
from medlens.runs.recorded import run_card
from medlens.sources.cards import USAGE_STATEMENT

UNPARSED_RULE = (
    "unparsed, refused and empty answers count as wrong (their rates are reported separately); "
    "errored items are left out of scores and counted as errors"
)
OFFICIAL_PROTOCOLS = READING_PROTOCOLS
"""The published rows' reading protocol per family (one table: ``analysis.references``)."""


@dataclass(frozen=True)
class ProtocolCard:
    rows: tuple[tuple[str, str], ...]
    templates: tuple[tuple[str, str], ...]
    """(item kind, literal prompt template) for every kind the run holds."""
    official: bool | None
    """True/False against the benchmark's official protocol; None when medlens knows none."""
    deviations: tuple[str, ...]
    environment: tuple[str, ...]
    citations: tuple[tuple[str, str, str], ...]
    """(benchmark, licence, BibTeX)."""
    usage: str = USAGE_STATEMENT
    replayed: bool = False
    """The answers were replayed from a file: medlens sent no prompt, so no protocol is vouched for."""

    @property
    def marker(self) -> str:
        if self.replayed:
            return (
                "protocol: not known (replayed answers: medlens sent no prompt, so it cannot "
                "vouch for the protocol that produced them)"
            )
        if self.official is None:
            return "protocol: medlens (this benchmark has no official protocol recorded in medlens)"
        if self.official:
            return "protocol: official (matches the benchmark's published protocol)"
        return "NON-OFFICIAL PROTOCOL: " + "; ".join(self.deviations)


def protocol_card(run_dir: Path) -> ProtocolCard:
    """Read run.json, items.jsonl, records and judges of `run_dir` into a card."""
    from medlens.runs.provenance import summary_lines
    from medlens.runs.view import RunView

    store = RunView(run_dir)
    run, spec = store.run, store.run["spec"]
    bench = spec["benchmark"]
    items = store.items()
    records = store.records()
    replayed = str(spec.get("model", "")).startswith("replay:")
    official, deviations = (
        (None, []) if replayed else official_status(spec, len(items), len(records))
    )
    card = run_card(run)
    citations: tuple[tuple[str, str, str], ...] = ()
    if card is not None:
        citations = ((str(bench.get("name", "")), card["licence"], card["citation"]),)
    return ProtocolCard(
        rows=(*_rows(run, store.path, len(records)), ("source admission", _admission(run, items))),
        templates=tuple(_templates(items, spec)),
        official=official,
        deviations=tuple(deviations),
        environment=tuple(summary_lines(run, records.values())),
        citations=citations,
        replayed=replayed,
    )


def _rows(run: dict[str, Any], run_dir: Path, n_records: int) -> tuple[tuple[str, str], ...]:
    spec = run["spec"]
    bench = spec["benchmark"]
    return (
        ("benchmark", f"{bench.get('name')} ({bench.get('spec')})"),
        ("split", str(bench.get("split"))),
        ("content hash", str(bench.get("content_hash"))),
        ("items", f"{bench.get('n_items')} in the benchmark, {n_records} with a record"),
        ("subset / sampling", _recipe(spec)),
        ("model", str(spec.get("model"))),
        ("prompt style", _prompt_style(spec)),
        ("prompting strategy", _strategy(spec)),
        ("extraction", str(spec.get("extract"))),
        ("component versions", _components(run)),
        ("judges", _judges(run_dir)),
        ("unparsed answers", UNPARSED_RULE),
        ("probe", str(spec.get("probe") or "none")),
        ("seed", str(spec.get("seed", 0))),
        ("generation parameters", generation_text(run.get("generation"), spec.get("params") or {})),
        *_limit_rows(spec),
        *_self_consistency(run),
        ("training cutoff vs release", cutoff_text(run)),
        ("isolation", isolation_text(spec)),
    )


def _admission(run: dict[str, Any], items: Sequence[Any]) -> str:
    """Each source's licence, label origin and release against the model's training cutoff
    (``checks.admission``; facts a user gave ``run --admission`` are recorded in run.json)."""
    name = str(run["spec"]["benchmark"].get("name", ""))
    sources = sources_of(name, (str(item.meta.get("source", "")) for item in items))
    facts = admission_facts(recorded=run.get("admission"))
    cutoff = (run.get("model_info") or {}).get("training_cutoff")
    return admission_text(sources, facts, cutoff)


def _components(run: dict[str, Any]) -> str:
    from medlens.execution.components import components_text

    return components_text(run.get("components"))


def _prompt_style(spec: dict[str, Any]) -> str:
    """The style, and for medlens's own prompts their version (``execution.prompts``): 2 has no
    example answer in its instructions; runs made before versions were recorded had version 1."""
    style = str(spec.get("prompt"))
    recorded = spec.get("prompt_template")
    if recorded:
        label = f"version {recorded['version']}, " if recorded.get("version") else ""
        return f"{style} (a user's template: {label}sha256 {str(recorded.get('sha256'))[:12]})"
    if style != "medlens":
        return style
    version = int(spec.get("prompt_version", 1))
    change = "no example answer" if version >= 2 else "instructions end with an example answer"
    return f"{style} (prompt version {version}: {change})"


def _limit_rows(spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The token cap and the image handling the model spec implies (``models.limits``)."""
    from medlens.models.limits import image_handling_text, max_tokens_text
    from medlens.runs.recorded import stored_spec

    try:
        model = stored_spec(str(spec.get("model", "")))
    except Exception:  # an old or hand-edited run.json: the card still renders
        return ()
    return (
        ("max tokens", max_tokens_text(model, spec.get("params"))),
        ("images", image_handling_text(model, str(spec.get("prompt", "medlens")))),
    )


def _self_consistency(run: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    text = self_consistency_text(run.get("generation"))
    refined = bool((run.get("generation") or {}).get("ensemble_refinement"))
    return (("ensemble refinement" if refined else "self-consistency", text),) if text else ()


def _recipe(spec: dict[str, Any]) -> str:
    """The subset or sampling recipe: a frozen subset's or a run's own selection (with the
    source's size), else whatever loader options the benchmark spec carries."""
    from medlens.execution.selection import provenance_rows

    recorded = provenance_rows(spec)
    if recorded:
        return "; ".join(f"{name}: {value}" for name, value in recorded)
    bench = spec["benchmark"]
    spec_text = str(bench.get("spec", ""))
    options = spec_text.partition("?")[2]
    description = str(bench.get("description", ""))
    if options:
        return f"loader options {options}" + (f" ({description})" if description else "")
    return "the whole split as the loader reads it"


def _strategy(spec: dict[str, Any]) -> str:
    """``zero-shot``, or the strategy with the exemplars' source and ids per group."""
    recorded = spec.get("strategy") or {}
    text = str(recorded.get("name", "zero-shot"))
    exemplars = recorded.get("exemplars")
    if exemplars:
        ids = "; ".join(f"{g or 'any'}: {', '.join(i)}" for g, i in exemplars["ids"].items())
        text += f" (exemplars from {exemplars['spec']}: {ids})"
    return text


def _judges(run_dir: Path) -> str:
    """`name: protocol (weights)` of each judge stored beside the records, or 'none'."""
    from medlens.runs.judgements import stage_specs

    found = []
    for name, judge in stage_specs(run_dir):
        if judge is None:
            found.append(f"{name}: unreadable {JUDGE_FILE}")
            continue
        protocol = judge.get("protocol") or {}
        weights = protocol.get("weights") or {}
        weight_text = ", ".join(f"{k} {v:g}" for k, v in weights.items()) if weights else ""
        found.append(
            f"{judge.get('name', name)}: {protocol.get('name', '?')} by "
            f"{judge.get('judge', '?')}"
            + (f" (weights {weight_text})" if weight_text else "")
            + "".join(f" [fingerprint: {line}]" for line in fingerprint_lines(judge))
            + (" [self-judged]" if judge.get("self_judged") else "")
        )
    return "; ".join(found) or "none"


def official_status(
    spec: dict[str, Any], n_items: int, n_records: int
) -> tuple[bool | None, list[str]]:
    """Whether the run follows its benchmark's official protocol, and how it departs from it."""
    name = str(spec["benchmark"].get("name", ""))
    official = OFFICIAL_PROTOCOLS.get(name)
    if official is None:
        return None, []
    deviations = [
        f"{key} {spec.get(key)!r} (official: {wanted!r})"
        for key, wanted in official.items()
        if spec.get(key) != wanted
    ]
    if n_records < n_items:
        deviations.append(f"only {n_records} of {n_items} items answered")
    return not deviations, deviations


def _templates(items: list[Any], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """The literal prompt of each item kind, with the item's own text replaced by placeholders
    (under chain-of-thought with its reasoning request; exemplar turns are listed above)."""
    from medlens.execution.prompt_files import template_of_spec
    from medlens.execution.requests import RunSettings, prompt_text
    from medlens.execution.strategies import recorded_strategy

    recorded = spec.get("prompt_template")
    settings = RunSettings(
        prompt=str(spec.get("prompt", "medlens")), strategy=recorded_strategy(spec),
        template=template_of_spec(recorded) if recorded else None,
    )  # fmt: skip

    seen: dict[str, Any] = {}
    for item in items:
        seen.setdefault(item.kind, item)
    out = []
    for kind, item in seen.items():
        shape = replace(
            item,
            question="{question}",
            context="{context}" if item.context else item.context,
            options={letter: "{" + letter + "}" for letter in item.options},
        )
        out.append((kind, prompt_text(shape, settings)))
    return out


RUN_ROWS = frozenset(
    {
        "benchmark",
        "items",
        "medlens version",
        "date",
        "subset",
        "selection",
        "full-benchmark estimate",
        "entered by hand",
    }
)
"""Rows of the report's run summary that the card lacks or says less well (the benchmark's
description, item counts with errors and pending, version, date, a subset's or selection's
source): merged into the card, so that a report has one protocol table."""


def with_run_rows(card: ProtocolCard, protocol: Sequence[tuple[str, str]]) -> ProtocolCard:
    """The card with the report's run rows merged in: one protocol table instead of two that
    repeat each other. The strategy keeps the card's exemplars and gains the run's
    self-consistency agreement."""
    summary = dict(protocol)
    extra = {name: value for name, value in protocol if name in RUN_ROWS}
    rows = []
    for name, value in card.rows:
        if name == "prompting strategy" and "; " in summary.get(name, ""):
            value += "; " + summary[name].split("; ", 1)[1]
        rows.append((name, extra.pop(name, value)))
    return replace(card, rows=(*rows, *extra.items()))


def card_lines(card: ProtocolCard) -> list[str]:
    """The card as plain lines (text and markdown renderers build on these)."""
    lines = [card.marker, *(f"{name}: {value}" for name, value in card.rows)]
    lines += [f"environment: {line}" for line in card.environment]
    return lines


def citation_lines(card: ProtocolCard) -> list[str]:
    lines = []
    for name, licence, bibtex in card.citations:
        lines.append(f"{name} — licence: {licence}")
        lines += bibtex.splitlines() if bibtex else ["(user data: cite its own source)"]
    return lines


# -- per-format pieces (each renderer calls two of these) ----------------------------------------
def markdown_card(card: ProtocolCard) -> str:
    from medlens.report.md_format import md_text, table

    rows = [(md_text(name), md_text(value)) for name, value in card.rows]
    rows += [("environment", md_text(line)) for line in card.environment]
    parts = [f"## Protocol\n\n**{md_text(card.marker)}**", table(("", ""), rows, right_from=2)]
    for kind, template in card.templates:
        parts.append(f"Prompt template ({md_text(kind)}):\n\n```text\n{template.rstrip()}\n```")
    return "\n\n".join(parts)


def markdown_citations(card: ProtocolCard) -> str:
    from medlens.report.md_format import md_text

    parts = ["## Citations and usage"]
    for name, licence, bibtex in card.citations:
        parts.append(f"{md_text(name)} — licence: {md_text(licence)}")
        if bibtex:
            parts.append(f"```bibtex\n{bibtex}\n```")
    parts.append(md_text(card.usage))
    return "\n\n".join(parts)


def html_card(card: ProtocolCard) -> str:
    from medlens.report.html_format import esc, table_html

    rows = [[(name, None), (value, None)] for name, value in card.rows]
    rows += [[("environment", None), (line, None)] for line in card.environment]
    kind = "official" if card.official else "non-official" if card.official is False else "medlens"
    parts = [
        f'<h2>Protocol</h2><p class="protocol-{kind}"><strong>{esc(card.marker)}</strong></p>',
        table_html(("", ""), rows, sortable=False, text_columns=2),
    ]
    for item_kind, template in card.templates:
        parts.append(f"<p>Prompt template ({esc(item_kind)}):</p><pre>{esc(template)}</pre>")
    return "".join(parts)


def html_citations(card: ProtocolCard) -> str:
    from medlens.report.html_format import esc

    parts = ["<h2>Citations and usage</h2>"]
    for name, licence, bibtex in card.citations:
        parts.append(f"<p>{esc(name)} — licence: {esc(licence)}</p>")
        if bibtex:
            parts.append(f"<pre>{esc(bibtex)}</pre>")
    parts.append(f'<p class="usage">{esc(card.usage)}</p>')
    return "".join(parts)


def sheet_rows(card: ProtocolCard) -> list[tuple[str, str]]:
    """Rows of the workbook's "protocol card" sheet, citations and usage statement last."""
    rows = [("protocol", card.marker), *card.rows]
    rows += [("environment", line) for line in card.environment]
    rows += [(f"prompt template ({kind})", template) for kind, template in card.templates]
    for name, licence, bibtex in card.citations:
        rows += [(f"licence ({name})", licence), (f"citation ({name})", bibtex)]
    rows.append(("usage", card.usage))
    return rows
