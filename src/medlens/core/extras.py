"""Optional dependencies (`pip install 'medlens[hf]'` …) checked before any work starts.

``pip install medlens`` carries what ``run`` and ``report`` need; the rest comes in extras:

- ``plots`` (matplotlib): the HTML report's plots;
- ``viewer`` (starlette, uvicorn, jinja2): ``medlens view``;
- ``hub`` (huggingface_hub): ``hfds:REPO`` from the Hugging Face cache, ``medlens fetch``;
- ``demo`` (scikit-image): the embedded demo benchmark's pictures and drawn contours;
- ``hf``, ``vllm``, ``ray``, ``track``, ``overlap``: model backends, the Ray executor,
  experiment trackers, image near-duplicates.

A command that needs a missing one says so in one line (``pip install 'medlens[EXTRA]'``),
exit 2, before anything is written. ``medlens[all]`` has every extra that needs no GPU;
``medlens[dev]`` everything the tests use.
"""

from __future__ import annotations

import importlib.util

from medlens.core.errors import SpecError

# model backend / executor → (extra, modules it needs)
MODEL_EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hf": ("hf", ("torch", "transformers")),
    "vllm": ("vllm", ("vllm",)),
}
EXECUTOR_EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {"ray": ("ray", ("ray",))}
FEATURE_EXTRAS: dict[str, tuple[str, ...]] = {
    "plots": ("matplotlib",),
    "viewer": ("starlette", "uvicorn", "jinja2"),
    "hub": ("huggingface_hub",),
    "demo": ("skimage",),
}
"""extra → the modules it brings (the extra's name is the feature's)."""


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
            f"{what} needs {', '.join(missing)}, "
            f"which {'is' if len(missing) == 1 else 'are'} not installed: "
            f"pip install 'medlens[{extra}]'"
        )


def require_feature(what: str, extra: str) -> None:
    """SpecError naming ``pip install 'medlens[EXTRA]'`` when `extra`'s modules are missing
    (`what`: the command or option that needs them, as the user wrote it)."""
    require_extra(what, extra, FEATURE_EXTRAS[extra])


def has_feature(extra: str) -> bool:
    """Whether every module of `extra` is installed."""
    return all(_installed(module) for module in FEATURE_EXTRAS[extra])


def check_run_extras(model_name: str, executor: str) -> None:
    """The extras a run's model backend and executor need."""
    if model_name in MODEL_EXTRAS:
        extra, modules = MODEL_EXTRAS[model_name]
        require_extra(f"--model {model_name}:", extra, modules)
    if executor in EXECUTOR_EXTRAS:
        extra, modules = EXECUTOR_EXTRAS[executor]
        require_extra(f"--executor {executor}", extra, modules)
