"""medlens: evaluate vision-language models on medical benchmarks and show where they fail."""

from __future__ import annotations

__version__ = "0.1.0"

from medlens.errors import InputError, ItemError, MedlensError, RunMismatchError, SpecError
from medlens.items import Benchmark, BenchmarkInfo, ImageRef, Item, decode_image

__all__ = [
    "Benchmark",
    "BenchmarkInfo",
    "ImageRef",
    "InputError",
    "Item",
    "ItemError",
    "MedlensError",
    "RunMismatchError",
    "SpecError",
    "__version__",
    "decode_image",
]
