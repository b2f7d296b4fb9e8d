"""Who was evaluated and who evaluated, in Every Eval Ever's terms (``model_info``, the judges).

Every Eval Ever names a model in Hugging Face form (``org/name``) and says how it was deployed
(``self_deployed`` / ``externally_managed`` / ``unknown``) and whether its weights are open. A
medlens model spec says less and more: ``hf:``/``vllm:``/``vllm-serve:`` checkpoints are
self-deployed (their ``config.json`` may name the Hub id they came from); an ``openai:`` model's
spec as run.json keeps it has no ``base_url`` (transport options are not recorded), so its
deployment is ``unknown`` and its id is its name when that reads ``org/name``; the baselines
(``random``, ``prior`` …) are medlens's own. Where the spec cannot tell, ``--model-id`` names
the model outright.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from medlens.core.specs import Spec
from medlens.runs.recorded import stored_spec

LOCAL_BACKENDS = ("hf", "vllm", "vllm-serve")
BASELINES = ("random", "first", "prior", "oracle")
LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def model_id(spec_text: str, override: str | None = None) -> str:
    """The model's ``org/name`` id: `override`, else what the spec says."""
    if override:
        return override
    spec = stored_spec(spec_text)
    if spec.name in BASELINES:
        return f"medlens/{spec.name}-baseline"
    if spec.name == "openai":  # run.json keeps no base_url: the host cannot be told
        name = spec.argument
        return name if "/" in name else f"unknown/{name}"
    if spec.name in LOCAL_BACKENDS:
        return _checkpoint_id(spec.argument)
    return f"unknown/{Path(spec.argument).stem or spec.name}"


def model_info(spec_text: str, run: dict[str, Any], override: str | None = None) -> dict[str, Any]:
    """``model_info`` of one model: name (the spec as recorded), id, developer, deployment."""
    spec = stored_spec(spec_text)
    ident = model_id(spec_text, override)
    details = {"deployment_type": _deployment(spec), "model_availability": _availability(spec),
               "medlens_model_spec": spec_text}  # fmt: skip
    for key in ("image_settings", "server"):
        if run.get(key):
            details[f"medlens_{key}"] = json.dumps(run[key], sort_keys=True)
    out: dict[str, Any] = {"name": spec_text, "id": ident, "developer": ident.split("/")[0],
                           "additional_details": details}  # fmt: skip
    engine = _engine(spec, run)
    if engine:
        out["inference_engine"] = engine
    if spec.name == "openai" and _host(spec):
        out["inference_platform"] = _host(spec)
    return out


def path_parts(ident: str) -> tuple[str, str]:
    """(developer, model) folder names of a model id, as the datastore lays them out."""
    developer, _, name = ident.partition("/")
    if not name:
        developer, name = "unknown", developer
    return _portable(developer), _portable(name.replace("/", "_"))


def _portable(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip("._")
    return cleaned or "unknown"


def _host(spec: Spec) -> str:
    return urlparse(spec.option("base_url") or "").hostname or ""


def _deployment(spec: Spec) -> str:
    if spec.name in LOCAL_BACKENDS or spec.name in BASELINES:
        return "self_deployed"
    if spec.name == "openai" and _host(spec):  # a spec given in full (not as run.json keeps it)
        return "self_deployed" if _host(spec) in LOOPBACK else "externally_managed"
    return "unknown"


def _availability(spec: Spec) -> str:
    if spec.name in LOCAL_BACKENDS or spec.name in BASELINES:
        return "open_weights"  # a local checkpoint's weights are at hand (their licence aside)
    return "unknown"


def _engine(spec: Spec, run: dict[str, Any]) -> dict[str, str] | None:
    packages = (run.get("environment") or {}).get("packages") or {}
    if spec.name == "hf":
        return {"name": "transformers", **_version(packages.get("transformers"))}
    if spec.name in ("vllm", "vllm-serve"):
        server = run.get("server") or {}
        return {"name": "vllm", **_version(server.get("version") or packages.get("vllm"))}
    return None


def _version(value: object) -> dict[str, str]:
    return {"version": str(value)} if value else {}


def _checkpoint_id(argument: str) -> str:
    """A checkpoint folder's Hub id (its config's ``_name_or_path`` when that is ``org/name``),
    else ``local/<folder>``; an argument that is no folder but reads ``org/name`` is an id."""
    folder = Path(argument).expanduser()
    if folder.is_dir():
        try:
            named = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            origin = str(named.get("_name_or_path") or "")
        except (OSError, ValueError, AttributeError):
            origin = ""
        if origin.count("/") == 1 and not Path(origin).is_absolute() and not origin.startswith("."):
            return origin
        return f"local/{folder.resolve().name}"
    return argument if argument.count("/") == 1 else f"local/{Path(argument).name}"


def judge_configs(view_judge: dict[str, Any]) -> list[dict[str, Any]]:
    """``llm_scoring.judges`` of a judge stage (one judge, or a panel's members)."""
    members = view_judge.get("members") or [{"judge": view_judge.get("judge", "unknown")}]
    return [{"model_info": model_info(str(m.get("judge")), {})} for m in members]


def judge_prompt(view_judge: dict[str, Any]) -> str:
    """The judging prompt template of a stage: a built-in protocol's text when its digest
    matches the recorded one, else its name and digest."""
    protocol = view_judge.get("protocol") or {}
    name = str(protocol.get("name") or "unknown")
    digest = str(protocol.get("template_sha256") or "")
    try:
        from medlens.judges.protocols import load_protocol

        loaded = load_protocol(name)
    except Exception:  # a file: protocol or one this medlens no longer knows
        loaded = None
    if loaded is not None and loaded.template_sha256 == digest:
        return f"{loaded.instructions}\n\n{loaded.reply_format}"
    return f"medlens judge protocol {name} (template sha256 {digest or 'not recorded'})"
