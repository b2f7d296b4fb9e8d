"""medlens: evaluate vision-language models on medical benchmarks and show where they fail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from medlens.errors import InputError, ItemError, MedlensError, RunMismatchError, SpecError
from medlens.items import Benchmark, BenchmarkInfo, ImageRef, Item, decode_image

if TYPE_CHECKING:
    from medlens.api import evaluate
    from medlens.bootstrap import bootstrap_ci, bootstrap_ci_groups, group_cis
    from medlens.extract import Extraction
    from medlens.metrics import random_baseline
    from medlens.report import load_results
    from medlens.sources import load_benchmark

# Imported on first use, so that `import medlens` (and the TSV indexer) does not pull in numpy.
# (The extraction function is `medlens.extract.extract`: the subpackage owns the name `extract`.)
_LAZY = {
    "Extraction": "medlens.extract",
    "bootstrap_ci": "medlens.bootstrap",
    "bootstrap_ci_groups": "medlens.bootstrap",
    "group_cis": "medlens.bootstrap",
    "random_baseline": "medlens.metrics",
    "load_benchmark": "medlens.sources",
    "load_results": "medlens.report",
}


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        # The submodule medlens/evaluate.py is callable: medlens.evaluate(bench, model, ...) runs
        # medlens.api.evaluate, while `medlens.evaluate.RunOptions` and patching keep working.
        import importlib

        return importlib.import_module("medlens.evaluate")
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
