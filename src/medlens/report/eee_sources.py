"""A run's benchmark provenance and generation settings in Every Eval Ever's fields.

``source_data`` is ``hf_dataset`` when the benchmark came from a Hugging Face repo (run.json's
``benchmark_source``: repo, revision, commit), else ``url`` with the loader card's homepage, else
``other``; each carries the loader, the spec (its path reduced to the folder's name: a local
path says nothing to a reader and may say too much), the content hash, the item count, the
licence and the citation. ``generation_config`` holds what medlens sent (run.json's
``generation.sent``) in the schema's typed fields and the rest (prompt style, reader, strategy,
seed, probe) as text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.specs import Spec
from medlens.runs.recorded import stored_spec

if TYPE_CHECKING:
    from medlens.runs.view import RunView


def source_data(view: RunView) -> dict[str, Any]:
    from medlens.runs.recorded import run_card

    bench = view.spec["benchmark"]
    card = run_card(view.run) or {}
    details = {"loader": str(bench["name"]), "spec": public_spec(str(bench.get("spec", ""))),
               "split": str(bench.get("split", "")), "n_items": str(bench.get("n_items", "")),
               "content_hash": str(bench.get("content_hash", "")),
               "content_hash_version": str(bench.get("content_hash_version", 1))}  # fmt: skip
    for key in ("licence", "citation"):
        if card.get(key):
            details[key] = str(card[key])
    origin = view.run.get("benchmark_source") or {}
    name = str(bench["name"])
    if origin.get("repo"):
        details.update(
            revision=str(origin.get("revision") or "main"), commit=str(origin.get("commit") or "")
        )
        return {"dataset_name": name, "source_type": "hf_dataset", "hf_repo": str(origin["repo"]),
                "hf_split": str(bench.get("split", "")), "samples_number": int(bench.get("n_items", 0)),
                "additional_details": details}  # fmt: skip
    urls = [word for word in str(card.get("homepage") or "").split() if word.startswith("https://")]
    if urls:
        return {"dataset_name": name, "source_type": "url", "url": urls,
                "additional_details": details}  # fmt: skip
    return {"dataset_name": name, "source_type": "other", "additional_details": details}


def public_spec(text: str) -> str:
    """The spec with its path argument reduced to the last part (``mmmu:MMMU?split=test``); a
    Hub repo id (``hfds:MMMU/MMMU``) is kept."""
    try:
        spec = stored_spec(text)
    except Exception:  # an old run's spec that no longer parses: keep it as recorded
        return text
    argument = spec.argument
    hub_repo = spec.name == "hfds" and re.fullmatch(r"[\w.-]+/[\w.-]+", argument)
    if ("/" in argument or "\\" in argument) and not hub_repo:
        argument = Path(argument).name
    options = {k: (Path(v).name if k == "images" else v) for k, v in spec.options.items()}
    return Spec(spec.name, argument, options).canonical()


def generation_config(view: RunView) -> dict[str, Any]:
    spec = view.spec
    sent = dict(((view.run.get("generation") or {}).get("sent")) or {})
    args: dict[str, Any] = {}
    for key in ("temperature", "top_p", "top_k"):
        if isinstance(sent.get(key), (int, float)) and not isinstance(sent.get(key), bool):
            args[key] = float(sent[key])
    if isinstance(sent.get("max_tokens"), int) and sent["max_tokens"] >= 1:
        args["max_tokens"] = int(sent["max_tokens"])
    strategy = str(spec.get("strategy") or "zero-shot")
    args["reasoning"] = "cot" in strategy
    details = {"prompt_style": str(spec.get("prompt", "")), "prompt_version": str(spec.get("prompt_version", "")),
               "reader": str(spec.get("extract", "")), "strategy": strategy, "seed": str(spec.get("seed")),
               "probe": str(spec.get("probe") or "none"),
               "sent": json.dumps(sent, sort_keys=True, default=str)}  # fmt: skip
    return {"generation_args": args, "additional_details": details}
