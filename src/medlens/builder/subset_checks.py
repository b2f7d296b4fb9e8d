"""What a subset refuses before it writes anything: an output folder whose ``subset.json``
describes another file, ``--drop-solved-by`` runs made on another benchmark, ``--drop-flagged``
audits of another benchmark or naming ids it does not have, and items the jsonl: loader would
refuse (owns the subset's refusals; ``subset`` draws and writes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError, SpecError
from medlens.core.fingerprint import older_hash_note
from medlens.core.items import BenchmarkInfo, Item
from medlens.execution.selection import Recipe, flagged_ids
from medlens.runs.recorded import stored_spec
from medlens.sources.answerable import answerable_problems
from medlens.sources.sidecar import SIDECAR


def check_sidecar_free(output: Path) -> None:
    sidecar = output.parent / SIDECAR
    if not sidecar.is_file():
        return
    try:
        owner = json.loads(sidecar.read_text(encoding="utf-8")).get("output")
    except (OSError, ValueError, AttributeError):
        owner = None
    if owner != output.name:
        raise SpecError(
            f"--output {output}: {sidecar} already describes {owner or 'another file'}; write each "
            "subset into its own folder"
        )


def check_runs(recipe: Recipe, source: BenchmarkInfo) -> None:
    """``--drop-solved-by`` runs must have been made on this very benchmark."""
    from medlens.runs.view import RunView

    for run in recipe.drop_solved_by:
        spec = RunView(run).spec
        hashes = {spec["benchmark"].get("content_hash")}
        hashes.add(((spec.get("selection") or {}).get("source") or {}).get("content_hash"))
        if source.content_hash not in hashes:
            raise SpecError(
                f"--drop-solved-by {run}: that run was made on another benchmark "
                f"({spec['benchmark'].get('spec')}), not on {source.spec}"
                f"{older_hash_note(spec['benchmark'], source.to_json())}"
            )


def check_answerable(output: Path, spec: str, kept: list[Item]) -> None:
    """A jsonl file refuses items that cannot be answered meaningfully (``sources.answerable``)
    that their own loader ran with a warning (MedMCQA's 21 items with two identical options):
    refuse before writing, naming them, instead of failing on the staged file's hidden path."""
    bad = [(item.id, name, problem) for item in kept for name, problem in answerable_problems(item)]
    if not bad:
        return
    shown = "; ".join(f"id {i!r}, field {name!r}: {problem}" for i, name, problem in bad[:3])
    rest = sorted({i for i, _, _ in bad[3:]} - {i for i, _, _ in bad[:3]})
    listed = ", ".join(repr(i) for i in rest[:10]) + (", …" if len(rest) > 10 else "")
    more = f"; and {len(rest)} more ({listed})" if rest else ""
    raise SpecError(
        f"--output {output}: {len({i for i, _, _ in bad})} of the items to write would be refused "
        f"by the jsonl: loader (`medlens check {spec}` lists them under 'answerable'): {shown}"
        f"{more}; leave them out with --exclude FILE (one id per line)"
    )


def check_flagged(recipe: Recipe, source: BenchmarkInfo, every_id: set[str]) -> None:
    """``--drop-flagged`` must be an audit of this very benchmark: an item audit names its
    content hash; every flagged id (of either audit) must be an item of the source, or the
    subset would silently keep the items the user meant to drop."""
    if not recipe.drop_flagged:
        return
    path = Path(recipe.drop_flagged)
    report = json.loads(path.read_text(encoding="utf-8"))  # read once already (Filter)
    audited = report.get("benchmark") if isinstance(report.get("benchmark"), dict) else {}
    content = audited.get("content_hash")
    if content and source.content_hash not in (content, _cut_from(audited)):
        raise InputError(
            path, "field 'benchmark'",
            f"--drop-flagged: an audit of {audited.get('spec')} (content {str(content)[:12]}), "
            f"not of {source.spec} (content {source.content_hash[:12]})"
            f"{older_hash_note(audited, source.to_json())}",
        )  # fmt: skip
    unknown = sorted(flagged_ids(path, recipe.flag_q) - every_id)
    if unknown:
        shown = ", ".join(repr(i) for i in unknown[:5])
        more = f", … ({len(unknown)} in all)" if len(unknown) > 5 else ""
        raise InputError(
            path, "field 'items'",
            f"--drop-flagged: {len(unknown)} flagged ids are not items of {source.spec}: "
            f"{shown}{more}",
        )  # fmt: skip


def _cut_from(audited: dict[str, Any]) -> str | None:
    """The content hash of the benchmark the audited one was cut from (``subset`` and ``items
    sample`` write subset.json beside their output), so an audit of runs on a subset can clean
    its source; None when no such record is found."""
    try:
        spec = stored_spec(str(audited.get("spec", "")))
        folder = Path(spec.argument).expanduser().parent
        sidecar = json.loads((folder / SIDECAR).read_text(encoding="utf-8"))
    except (MedlensError, OSError, ValueError):
        return None
    if not isinstance(sidecar, dict) or sidecar.get("content_hash") != audited.get("content_hash"):
        return None
    found = (sidecar.get("source") or {}).get("content_hash")
    return str(found) if found else None
