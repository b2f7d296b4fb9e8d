"""A run's files are named and read in ``runs/`` only (issue 46: one way into a run).

``runs.layout`` names every file of a run directory and of its judge stages; every other module
asks it for a path and reads through ``runs.view.RunView`` (or ``runs.judgements``), so a file
can be renamed, moved or read faster in one place, and no reader drifts from the store's rules.
Two checks over the package's source: no string outside ``runs/`` (docstrings aside) holds a
run file's name, and no path that ``runs.layout`` gives for a run file is opened outside
``runs/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import medlens
from medlens.runs import layout

PACKAGE = Path(medlens.__file__).parent
RUN_FILES = (
    layout.RUN_FILE,
    layout.ITEMS_FILE,
    layout.RECORDS_FILE,
    layout.RESULTS_FILE,
    layout.JUDGE_FILE,
    layout.JUDGEMENTS_FILE,
    layout.AGREEMENT_FILE,
)
PATHS = {
    "run_file", "items_file", "records_file", "results_file", "judge_file", "judgements_file",
    "agreement_file",
}  # fmt: skip
"""runs.layout's functions that give the path of a run's file."""
READS = {"open", "read_text", "read_bytes", "read_json", "loads", "JsonLines"}
ALLOWED = {
    # a built benchmark's own items.jsonl (`jsonl:` loads it), a file of another kind that
    # happens to share the name of a run's items file
    ("builder/folder.py", layout.ITEMS_FILE),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that stand alone as statements (docstrings of modules,
    classes, functions and attributes)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", [])
        for statement in body if isinstance(body, list) else []:
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                found.add(id(statement.value))
    return found


def names_of_run_files(source: str, relative: str) -> list[str]:
    """`line: name` of each string (docstrings aside) that names a run's file."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [
        f"{node.lineno}: {name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for name in RUN_FILES
        if name in node.value and (relative, name) not in ALLOWED
    ]


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    return getattr(node.func, "id", getattr(node.func, "attr", None))


def reads_of_run_files(source: str) -> list[int]:
    """Lines where a path from ``runs.layout`` is opened or parsed (``open(records_file(p))``,
    ``judge_file(f).read_text()``, ``orjson.loads(results_file(p).read_bytes())``)."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in READS and _called(node.value) in PATHS:
            lines.append(node.lineno)
        if _called(node) in READS:
            arguments = [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
            lines += [a.lineno for a in arguments if _called(a) in PATHS]
    return lines


def offenders() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("runs/"):
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{relative}:{line}" for line in names_of_run_files(source, relative)]
        found += [f"{relative}:{line}: reads a run file" for line in reads_of_run_files(source)]
    return found


def test_no_module_outside_runs_names_or_reads_a_run_file() -> None:
    assert not offenders(), f"run files named or read outside runs/: {offenders()}"


def test_the_checks_see_a_name_and_a_read() -> None:
    source = '''
"""Reads run.json (a docstring: allowed)."""
import json
from medlens.runs.layout import records_file, run_file

def read(path):
    """The records.jsonl of a run."""
    spec = json.loads(run_file(path).read_text())
    with open(records_file(path)) as lines:
        return spec, f"{path}/results.json", lines.read()
'''
    assert names_of_run_files(source, "x.py") == ["10: results.json"]
    assert sorted(reads_of_run_files(source)) == [8, 9]
    assert names_of_run_files('ITEMS_FILE = "items.jsonl"', "builder/folder.py") == []


def test_runs_layout_names_each_file_once() -> None:
    source = (PACKAGE / "runs" / "layout.py").read_text(encoding="utf-8")
    for name in RUN_FILES:
        assert source.count(f'"{name}"') == 1, name
