"""Everything a run can refuse on bad input, done before its directory exists: the benchmark
loaded and its items selected, probed and rewritten; the model loaded; the strategy and its
exemplars read; the run spec that names the run (owns what a run is, before it runs;
``evaluate`` runs it).

``prepare`` is also what ``run --dry-run`` and a study's preview call, without loading weights.
"""

from __future__ import annotations

from typing import Any

from medlens.core.errors import SpecError
from medlens.core.extras import check_run_extras
from medlens.core.fingerprint import describe
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.execution.exemplars import Exemplars, load_exemplars, require_reasoning
from medlens.execution.manual import load_manual
from medlens.execution.open_form import rewrite_items
from medlens.execution.options import RunOptions, validate
from medlens.execution.prompt_files import prompt_template
from medlens.execution.prompts import prompt_version
from medlens.execution.requests import RunSettings
from medlens.execution.selection import run_provenance, select_run_items
from medlens.execution.strategies import Strategy
from medlens.extract.vocabulary import provenance as vocab_provenance
from medlens.extract.vocabulary import use_vocabulary
from medlens.models import MODELS, ModelContext, load_model
from medlens.sources import load_benchmark

LoadedBenchmark = tuple[Benchmark, list[Item]]
"""A benchmark and all its items, loaded once by a caller that runs several models on it."""


def load_items(spec: Spec) -> LoadedBenchmark:
    benchmark = load_benchmark(spec)
    return benchmark, list(benchmark.items())


def prepare(
    options: RunOptions, describe_only: bool = False, loaded: LoadedBenchmark | None = None
) -> tuple[dict[str, Any], list[Item], Any, RunSettings, Any]:
    """Everything that can fail on bad input happens here, before the run directory exists.

    Returns the run spec, the (probed) items, the model, the settings and the probe. With
    `describe_only` the model only names its spec (no weights loaded: `run --dry-run`). `loaded`
    is ``options.bench`` already loaded (a study loads each benchmark once for all its models).
    """
    validate(options)
    model_name = options.model.name
    MODELS.get(model_name)  # fail on a mistyped model before a long load
    check_run_extras(model_name, options.executor)
    benchmark, items = loaded if loaded is not None else load_items(options.bench)
    items, selection = select_run_items(
        benchmark, items, options.where, options.sample, options.stratify, options.exclude,
        options.seed,
    )  # fmt: skip
    check_reading_modes(options, benchmark.name, items)
    template = prompt_template(options.prompt, items)
    manual = load_manual(options.manual, items) if options.manual else None
    info = describe(benchmark, items)  # the fingerprint of the items as selected
    items = rewrite_items(options.rewrite, items)  # MMBU's open form (execution.open_form)
    probe, items = probe_items(options, items)
    context = ModelContext(
        items=items,
        seed=options.seed,
        concurrency=options.concurrency,
        describe_only=describe_only or options.executor == "ray",  # Ray workers build theirs
    )
    model = load_model(options.model, context)
    strategy, exemplars = prepare_strategy(options, items, model)
    settings = RunSettings(
        prompt=options.prompt, extract=options.extract, concurrency=options.concurrency,
        probe=options.probe, seed=options.seed, strategy=strategy, exemplars=exemplars,
        vocab=options.vocab, template=template, manual=manual,
        benchmark_source=benchmark.provenance,
    )  # fmt: skip
    spec = {
        "benchmark": info.to_json(),
        "model": model.spec,
        "prompt": options.prompt,
        "extract": options.extract,
        "probe": options.probe,
        "seed": options.seed,
        "params": dict(settings.params),
        **run_provenance(options.bench, info.content_hash, selection),
    }
    if not strategy.is_zero_shot:  # zero-shot runs keep the spec (and hash) they always had
        spec["strategy"] = strategy_spec(strategy, exemplars)
    if prompt_version(options.prompt) > 1:
        spec["prompt_version"] = prompt_version(options.prompt)
    if options.rewrite:
        spec["rewrite"] = options.rewrite
    if manual is not None:  # answers entered by hand: the file's name, sha256, rows
        spec["manual"] = manual.to_spec()
    if template is not None:  # what was sent, its version and the file's sha256
        spec.update(prompt=f"file:{template.name}", prompt_template=template.to_spec())
    use_vocabulary(options.vocab)  # read and validated before anything is written
    if options.vocab:
        spec["vocab"] = vocab_provenance(options.vocab)
    return spec, items, model, settings, probe


def probe_items(options: RunOptions, items: list[Item]) -> tuple[Any, list[Item]]:
    """The run's probe (None without ``--probe``) and the items as it changed them."""
    if not options.probe:
        return None, items
    from medlens.execution.probes import IMAGE_PROBES, get_probe

    probe = get_probe(options.probe, options.seed)
    if options.probe in IMAGE_PROBES and not any(item.images for item in items):
        raise SpecError(
            f"--probe {options.probe}: {options.bench} has no images, so the probe would "
            "change nothing (text probes: options-only, shuffle-options)"
        )
    return probe, [probe.apply_item(item) for item in items]


def check_reading_modes(options: RunOptions, benchmark: str, items: list[Item]) -> None:
    """A peer's prompt or reading only on datasets that peer has; MMBU's prompt only on MMBU."""
    from medlens.extract.peers import check_supported, is_peer_mode

    if is_peer_mode(options.extract):
        check_supported(options.extract, items, "--extract")
    if is_peer_mode(options.prompt):
        check_supported(options.prompt, items, "--prompt")
    if options.prompt == "mmbu" and benchmark != "mmbu":
        raise SpecError(
            f"--prompt mmbu: sends MMBU's official prompt, for mmbu: benchmarks ({benchmark} is not)"
        )


def prepare_strategy(
    options: RunOptions, items: list[Item], model: Any
) -> tuple[Strategy, Exemplars | None]:
    """Read the exemplars ``--strategy`` asks for; refuse sampling on a backend that cannot."""
    strategy = options.strategy
    if options.exemplars and not strategy.few_shot:
        raise SpecError("--exemplars is only used with --strategy few-shot:K")
    if strategy.samples_answers and not getattr(model, "honours_sampling", False):
        raise SpecError(
            f"--strategy {strategy.text}: {options.model.name} cannot draw "
            "samples with their own temperature and seed (use an openai: backend)"
        )
    exemplars = None
    if strategy.few_shot:
        exemplars = load_exemplars(
            options.bench, options.exemplars, items, strategy.few_shot, options.seed
        )
        if strategy.cot:
            require_reasoning(exemplars, strategy.text)
    return strategy, exemplars


def strategy_spec(strategy: Strategy, exemplars: Exemplars | None) -> dict[str, Any]:
    """The strategy as recorded in the run spec, with the exemplars' spec and ids."""
    recorded: dict[str, Any] = {"name": strategy.text}
    if exemplars is not None:
        from medlens.core.fingerprint import items_content_hash

        chosen = {e.id: e for group in exemplars.by_group.values() for e in group}
        recorded["exemplars"] = {
            "spec": exemplars.spec,
            "ids": exemplars.ids(),
            # the exemplars' questions, answers and image bytes: a changed pool is another run
            "content_hash": items_content_hash(chosen[i] for i in sorted(chosen)),
        }
    return recorded


def check_adaptive_options(options: RunOptions) -> None:
    """An adaptive run draws from every item of the benchmark its bank was fitted on, with the
    model's own answers, on this machine."""
    narrowing = {"--limit": options.limit, "--where": options.where, "--sample": options.sample,
                 "--exclude": options.exclude, "--probe": options.probe}  # fmt: skip
    for flag, value in narrowing.items():
        if value is not None:
            raise SpecError(
                f"{flag}: an adaptive run draws from every item of the benchmark (the bank's and "
                f"the baseline's population); leave {flag} out"
            )
    if options.executor != "local":
        raise SpecError("--executor ray: an adaptive run asks its batches on the local executor")
