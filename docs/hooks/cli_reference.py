"""mkdocs hook: the command-line reference, one page per command, generated at build time.

The pages come from ``medlens.cli.reference`` (which walks the typer app) and never exist on
disk; the navigation entry ``reference/cli/index.md`` in mkdocs.yml is replaced by the nested
list of every visible command, so a command added or regrouped appears without editing a file."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

from medlens.cli import app
from medlens.cli.reference import REFERENCE_DIR, CommandPage, command_pages, navigation

_PAGES: list[CommandPage] = []


def on_config(config: Any) -> Any:
    _PAGES[:] = command_pages(app)
    index = f"{REFERENCE_DIR}/index.md"
    if not _replace_entry(config["nav"] or [], index, navigation(_PAGES)):
        raise ValueError(f"mkdocs.yml: nav has no entry for {index} (the CLI reference)")
    return config


def on_files(files: Files, config: Any) -> Files:
    for page in _PAGES:
        files.append(File.generated(config, page.doc_path, content=page.markdown))
    return files


def _replace_entry(nav: list[Any], target: str, replacement: list[Any]) -> bool:
    """Replace ``{title: target}`` in a nav list (at any depth) by ``{title: replacement}``."""
    for entry in nav:
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if value == target:
                entry[title] = replacement
                return True
            if isinstance(value, list) and _replace_entry(value, target, replacement):
                return True
    return False
