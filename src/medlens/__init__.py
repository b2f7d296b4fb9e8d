"""medlens: evaluate vision-language models on medical benchmarks and show where they fail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from medlens.core.errors import InputError, ItemError, MedlensError, RunMismatchError, SpecError
from medlens.core.items import Benchmark, BenchmarkInfo, ImageRef, Item, decode_image
from medlens.core.version import __version__

if TYPE_CHECKING:
    from medlens.api import evaluate, load_benchmark
    from medlens.extract import Extraction
    from medlens.report import load_results
    from medlens.scoring.metrics import random_baseline
    from medlens.stats.bootstrap import bootstrap_ci, bootstrap_ci_groups, group_cis

# Imported on first use, so that `import medlens` (and the TSV indexer) does not pull in numpy.
# (The extraction function is `medlens.extract.extract`: the subpackage owns the name `extract`.)
_LAZY = {
    "evaluate": "medlens.api",
    "Extraction": "medlens.extract",
    "bootstrap_ci": "medlens.stats.bootstrap",
    "bootstrap_ci_groups": "medlens.stats.bootstrap",
    "group_cis": "medlens.stats.bootstrap",
    "random_baseline": "medlens.scoring.metrics",
    "load_benchmark": "medlens.api",
    "load_results": "medlens.report",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'medlens' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "Benchmark",
    "BenchmarkInfo",
    "Extraction",
    "ImageRef",
    "InputError",
    "Item",
    "ItemError",
    "MedlensError",
    "RunMismatchError",
    "SpecError",
    "__version__",
    "bootstrap_ci",
    "bootstrap_ci_groups",
    "decode_image",
    "evaluate",
    "group_cis",
    "load_benchmark",
    "load_results",
    "random_baseline",
]
