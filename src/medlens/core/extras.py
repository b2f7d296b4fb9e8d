"""Optional dependencies (`pip install 'medlens[hf]'` …) checked before any work starts."""

from __future__ import annotations

import importlib.util

from medlens.core.errors import SpecError

# model backend / executor → (extra, modules it needs)
MODEL_EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hf": ("hf", ("torch", "transformers")),
    "vllm": ("vllm", ("vllm",)),
}
EXECUTOR_EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {"ray": ("ray", ("ray",))}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(what: str, extra: str, modules: tuple[str, ...]) -> None:
    """SpecError naming the extra to install when one of `modules` is missing."""
    missing = [module for module in modules if not _installed(module)]
    if missing:
        raise SpecError(
            f"{what} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'medlens[{extra}]'"
        )


def check_run_extras(model_name: str, executor: str) -> None:
    """The extras a run's model backend and executor need."""
    if model_name in MODEL_EXTRAS:
        extra, modules = MODEL_EXTRAS[model_name]
        require_extra(f"--model {model_name}:", extra, modules)
    if executor in EXECUTOR_EXTRAS:
        extra, modules = EXECUTOR_EXTRAS[executor]
        require_extra(f"--executor {executor}", extra, modules)
