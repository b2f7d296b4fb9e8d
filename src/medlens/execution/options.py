"""What `medlens run` is asked to do (``RunOptions``), checked before anything is written, and
the run folder it names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.limits import check_calls_per_item
from medlens.core.model_info import parse_model_info
from medlens.core.names import check_folder_name
from medlens.core.specs import Spec
from medlens.execution.cache_check import LIVE_CHECKS
from medlens.execution.dispatch import check_order
from medlens.execution.manual import check_executor
from medlens.execution.open_form import check_rewrite
from medlens.execution.prompt_files import is_prompt_file, load_template
from medlens.execution.prompts import PROMPT_STYLES
from medlens.execution.strategies import ZERO_SHOT, Strategy
from medlens.extract.extraction import EXTRACT_MODES

EXECUTORS = ("local", "ray")
# Above this, connection pools and sockets (not the server) become the limit, and a mistyped
# number would open millions of tasks.
MAX_CONCURRENCY = 4096


@dataclass(frozen=True)
class RunOptions:
    """What `medlens run` was asked to do."""

    bench: Spec
    model: Spec
    out: Path = Path("runs")
    name: str | None = None
    limit: int | None = None
    concurrency: int = 8
    prompt: str = "medlens"
    extract: str = "medlens"
    probe: str | None = None
    manual: str | None = None
    """A file of answers entered by hand (``execution.manual``)."""
    rewrite: str | None = None
    """``open`` or ``both``: MMBU's MCQ → open rewrite (``execution.open_form``)."""
    seed: int = 0
    executor: str = "local"
    ray_address: str | None = None
    cache: bool = True
    cache_check: int = LIVE_CHECKS
    """Cache hits of a server asked live before the cache answers (``cache_check``; 0: none)."""
    strategy: Strategy = ZERO_SHOT
    """``zero-shot|few-shot:K|cot|self-consistency:K|ensemble-refinement:K``, joined by ``+``."""
    exemplars: Spec | None = None
    """Benchmark spec of few-shot exemplars (default: the split the loader names)."""
    where: str | None = None
    sample: int | None = None
    stratify: str | None = None
    exclude: str | None = None
    retry_errors: bool = False
    """Also retry items whose error is permanent (`input`, `image`): after fixing the files."""
    order: str = "image"
    """``image`` (questions sharing an image are sent together) or ``item``: the order requests
    are sent in, not part of the spec (records and scores are the same; see ``dispatch``)."""
    yes: bool = False
    """Confirms a strategy of more than MAX_SAMPLES calls per item (not part of the spec)."""
    vocab: tuple[str, ...] = ()
    """User vocabulary files (``--vocab``) read with the built-in ones (``extract.vocabulary``)."""
    model_info: str | None = None
    """``cutoff=YYYY-MM``: the model's training cutoff, kept in run.json (not the spec)."""
    admission: Mapping[str, Any] | None = None
    """A user's source admission tables (``run --admission``, checked by ``checks.admission``),
    kept in run.json for the protocol card (not the spec)."""


def default_name(options: RunOptions) -> str:
    """`<benchmark>[_<option values>]-<model>[-<probe>][-<prompt>][-<reading>][-<strategy>]`,
    anything unsafe for a folder name replaced: runs of another split, language, prompt or
    reading (``slake?split=train`` beside the test run) get names of their own."""
    bench, model = options.bench, options.model
    parts = ["_".join([bench.name, *(Path(v).name for _, v in sorted(bench.options.items()))])]
    parts.append(model.name)
    if model.argument:
        parts.append(Path(model.argument.rstrip("/")).name)
    if options.probe:
        parts.append(options.probe)
    if options.rewrite:
        parts.append(f"rewrite_{options.rewrite}")
    if options.prompt != "medlens":
        parts.append(f"prompt_{Path(options.prompt.removeprefix('file:')).stem}")
    if options.extract != "medlens":
        parts.append(f"read_{options.extract}")
    if not options.strategy.is_zero_shot:
        parts.append(options.strategy.text)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts)).strip("_.")


def validate(options: RunOptions) -> None:
    if is_prompt_file(options.prompt):
        load_template(options.prompt)  # checked before anything is written
    elif options.prompt not in PROMPT_STYLES:
        raise SpecError(
            f"--prompt {options.prompt!r}: expected one of {', '.join(PROMPT_STYLES)} or file:PATH"
        )
    check_order(options.order)
    check_rewrite(options.rewrite)
    check_executor(options.manual, options.executor)
    if options.extract not in EXTRACT_MODES:
        raise SpecError(
            f"--extract {options.extract!r}: expected one of {', '.join(EXTRACT_MODES)}"
        )
    if options.executor not in EXECUTORS:
        raise SpecError(f"--executor {options.executor!r}: expected one of {', '.join(EXECUTORS)}")
    if options.concurrency < 1:
        raise SpecError("--concurrency must be at least 1")
    if options.cache_check < 0:
        raise SpecError(
            f"--cache-check {options.cache_check}: the number of cache hits asked live, at "
            f"least 0 (default {LIVE_CHECKS}; 0 trusts the cache unasked)"
        )
    if options.concurrency > MAX_CONCURRENCY:
        raise SpecError(
            f"--concurrency {options.concurrency}: at most {MAX_CONCURRENCY} requests in flight"
        )
    check_calls_per_item(
        f"--strategy {options.strategy.text}", options.strategy.requests_per_item, options.yes
    )
    if options.model_info is not None:
        parse_model_info(options.model_info)  # refused before anything is written
    check_run_path(options.out, options.name)
    if options.limit is not None and options.limit < 1:
        raise SpecError(
            f"--limit {options.limit}: must be at least 1 (leave it out to run every item)"
        )


def check_run_path(out: Path, name: str | None) -> None:
    """`--name` is one folder name inside `--out`; `--out` is a folder (or does not exist yet)."""
    if name is not None:
        check_folder_name("--name", name)
    if out.exists() and not out.is_dir():
        raise SpecError(f"--out {out}: is a file, not a folder of runs")
    run_dir = out / (name or "")
    if name is not None and run_dir.exists() and not run_dir.is_dir():
        raise SpecError(f"{run_dir}: is a file, not a run directory")


def run_dir_of(options: RunOptions) -> Path:
    return options.out / (options.name or default_name(options))
