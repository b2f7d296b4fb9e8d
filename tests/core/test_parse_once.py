"""Spec text is parsed once: by the command line, the Python API, or the reader of a run's files.

Every layer below takes the parsed ``Spec`` (and ``Strategy``), so a benchmark, model or judge
spec cannot be read two ways in two places.
"""

from __future__ import annotations

import ast
from pathlib import Path

import medlens

PACKAGE = Path(medlens.__file__).parent
PARSERS = {"parse_spec", "parse_strategy"}
ALLOWED = {
    "api.py",
    "core/specs.py",  # the parser itself
    "runs/recorded.py",  # specs a run's files recorded as text
    "execution/strategies.py",  # the strategy parser, and the run spec's recorded strategy
    # a study file is where its spec texts enter medlens (as flags do for the CLI and arguments
    # for the API): its reader parses each once, and the study's layers take the parsed specs
    "study/file.py",
}


def _calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) in PARSERS
    ]


def test_spec_text_is_parsed_only_at_the_edges() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("cli/") or relative in ALLOWED:
            continue
        offenders += [f"{relative}:{line}" for line in _calls(path)]
    assert not offenders, f"spec text parsed below the command line and the API: {offenders}"


def test_the_check_sees_a_call() -> None:
    assert _calls(PACKAGE / "runs" / "recorded.py")
