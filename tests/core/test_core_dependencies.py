"""Every third-party module medlens imports is installed by ``pip install medlens`` or by the
extra that names it: a module the core needs must not arrive only because an extra (or the dev
tools) happens to pull it in. (``hfds:DIR`` read dataset cards with PyYAML, which the core got
only through matplotlib and huggingface_hub until they moved to extras.)

A module behind an extra must come with that extra (``core.extras``'s tables name them); any
other module with the core. Each closure is read from the installed distributions' metadata (the
dev install holds every extra but ``vllm``); a module whose distribution is not installed here
passes only when a requirement of its install names it directly.
"""

from __future__ import annotations

import ast
import sys
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import medlens
from medlens.core.extras import EXECUTOR_EXTRAS, FEATURE_EXTRAS, MODEL_EXTRAS
from medlens.core.tomlfile import tomllib

PACKAGE = Path(medlens.__file__).parent
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def closure(requirements: list[str]) -> set[str]:
    """The distributions `requirements` install (markers of the direct ones ignored: a
    ``tomli; python_version < '3.11'`` counts), as installed here."""
    found: set[str] = set()
    pending = [(Requirement(text), True) for text in requirements]
    while pending:
        requirement, direct = pending.pop()
        if not direct and requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found.add(name)
        try:
            needs = distribution(requirement.name).requires or []
        except PackageNotFoundError:
            continue
        pending += [(Requirement(text), False) for text in needs]
    return found


def imported_modules() -> dict[str, str]:
    """Top-level module → one file of medlens importing it (third-party modules only)."""
    out: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "medlens":
                    out.setdefault(top, path.relative_to(PACKAGE).as_posix())
    return out


OTHER_OPTIONAL = {"imagehash": "overlap", "nibabel": "nifti", "mlflow": "track", "wandb": "track"}
"""Modules behind an extra that ``core.extras``'s tables do not list (their commands check)."""


def optional_modules() -> dict[str, str]:
    """Module → the extra that installs it."""
    out = dict(OTHER_OPTIONAL)
    for extra, modules in FEATURE_EXTRAS.items():
        out.update(dict.fromkeys(modules, extra))
    for extra, modules in (*MODEL_EXTRAS.values(), *EXECUTOR_EXTRAS.values()):
        out.update(dict.fromkeys(modules, extra))
    return out


def test_every_imported_module_comes_with_the_core_or_its_extra() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    core = closure(project["dependencies"])
    optional = optional_modules()
    owners = packages_distributions()
    wrong = []
    for module, where in imported_modules().items():
        dists = {canonicalize_name(d) for d in owners.get(module, [])} or {
            canonicalize_name(module)
        }
        extra = optional.get(module)
        installs = core if extra is None else closure(project["optional-dependencies"][extra])
        if not dists & installs:
            wrong.append(f"{module} ({where}): not installed by {extra or 'the core'}")
    assert not wrong, f"imported modules their install does not bring: {wrong}"


def test_the_core_is_the_core() -> None:
    core = closure(tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"])
    for heavy in ("matplotlib", "statsmodels", "starlette", "uvicorn", "huggingface-hub"):
        assert heavy not in core, heavy
    assert "scikit-image" not in core and "pyyaml" in core
