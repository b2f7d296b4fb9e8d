"""The versions of the components a run used, recorded in ``run.json["components"]``.

- ``reader``: the extraction mode and medlens's reading rules' version
  (``extract.rules_version.READER_RULES_VERSION``);
- ``prompt``: the style and its version (``execution.prompts.prompt_version``), or for a user's
  template (``--prompt file:PATH``) its file name, sha256 and the version it declares.

Judge stages record theirs in their own ``judge.json`` (protocol, version, template sha256:
``judges.identity``). Components are not part of the spec hash (a newer reader must not refuse
to resume a run); a resume with other components keeps the first and appends the new ones to
``resumed_components`` with a warning, as a resumed environment is (``runs.provenance``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from medlens.execution.prompts import prompt_version
from medlens.execution.requests import RunSettings
from medlens.extract.rules_version import reader_component


def run_components(settings: RunSettings) -> dict[str, Any]:
    """What this process reads and prompts with."""
    template = settings.template
    prompt: dict[str, Any] = {"style": settings.prompt, "version": prompt_version(settings.prompt)}
    if template is not None:
        prompt = {"style": f"file:{template.name}", "file": template.name,
                  "sha256": template.sha256, "version": template.version}  # fmt: skip
    return {"reader": reader_component(settings.extract), "prompt": prompt}


def record_components(run: dict[str, Any], current: dict[str, Any], created: bool) -> list[str]:
    """Put `current` into `run` (a run.json mapping); the warnings to print on a resume."""
    if created or "components" not in run:
        run["components"] = current
        return []
    if run["components"] == current:
        return []
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run.setdefault("resumed_components", []).append({"resumed": stamp, **current})
    changed = [f"{name}: {run['components'].get(name)} → {value}" for name, value in current.items()
               if run["components"].get(name) != value]  # fmt: skip
    return [f"warning: resuming with other components ({'; '.join(changed)}); answers recorded "
            "before and after this point were read or asked differently"]  # fmt: skip


def components_text(components: dict[str, Any] | None) -> str:
    """``reader medlens rules v1; prompt medlens v2`` for the protocol card."""
    if not components:
        return "not recorded (a run made before medlens recorded them)"
    reader = components.get("reader") or {}
    prompt = components.get("prompt") or {}
    text = f"reader {reader.get('mode')} rules v{reader.get('rules')}; prompt {prompt.get('style')}"
    if prompt.get("sha256"):
        text += f" sha256 {str(prompt['sha256'])[:12]}"
    if prompt.get("version") is not None:
        text += f" v{prompt['version']}"
    return text
