"""The command-line reference of the site is generated from the commands: every visible command
and group has its page and its place in the navigation, nested groups are walked and hidden
aliases left out (`medlens.cli.reference`, `docs/hooks/cli_reference.py`)."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from data_paths import REPO_ROOT
from medlens.cli import app
from medlens.cli.reference import command_pages, navigation, visible_commands


def _click_tree(command: Any, ctx: typer.Context, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every visible command below `command`, walked here independently of the generator."""
    found = [path]
    for name in getattr(command, "list_commands", lambda _ctx: [])(ctx):
        child = command.get_command(ctx, name)
        if not child.hidden:
            child_ctx = typer.Context(child, info_name=name, parent=ctx)
            found += _click_tree(child, child_ctx, (*path, name))
    return found


def _nav_paths(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_paths(value)]
    return [p for entry in nav for p in _nav_paths(entry)]


def test_every_command_of_the_app_has_a_page_in_the_site_and_its_navigation() -> None:
    mkdocs_config = pytest.importorskip("mkdocs.config")
    mkdocs_files = pytest.importorskip("mkdocs.structure.files")
    root = typer.main.get_command(app)
    commands = set(_click_tree(root, typer.Context(root, info_name="medlens"), ()))
    config = mkdocs_config.load_config(str(REPO_ROOT / "mkdocs.yml"))
    config = config.plugins.on_config(config)
    files = config.plugins.on_files(mkdocs_files.Files([]), config=config)
    pages = {page.path: page.doc_path for page in command_pages(app)}
    assert set(pages) == commands
    generated = {file.src_uri for file in files}
    in_nav = set(_nav_paths(config["nav"]))
    for path, doc_path in pages.items():
        assert doc_path in generated, f"no page for `medlens {' '.join(path)}`"
        assert doc_path in in_nav, f"`medlens {' '.join(path)}` is not in the site's navigation"
    assert len(commands) > 30 and ("items", "fit") in commands


def _toy_app() -> typer.Typer:
    toy = typer.Typer()
    build = typer.Typer(help="Make benchmarks.")
    checks = typer.Typer(help="Check benchmarks.")

    @toy.command(help="Run a model.")
    def run(bench: str = typer.Option(..., help="Benchmark spec | with a pipe")) -> None: ...

    @toy.command("build-old", hidden=True, help="Old name of build labels.")
    def build_old() -> None: ...

    @build.command("labels", help="Items from labelled images.")
    def labels(path: str = typer.Argument(..., help="Labels file"), seed: int = 0) -> None: ...

    @checks.command("integrity", help="Integrity checklist.")
    def integrity() -> None: ...

    build.add_typer(checks, name="check")
    toy.add_typer(build, name="build")
    return toy


def test_nested_groups_are_walked_and_hidden_aliases_left_out() -> None:
    toy = _toy_app()
    assert sorted(visible_commands(toy)) == [
        (), ("build",), ("build", "check"), ("build", "check", "integrity"),
        ("build", "labels"), ("run",),
    ]  # fmt: skip
    pages = {page.path: page for page in command_pages(toy)}
    assert pages[("build", "check")].doc_path == "reference/cli/build/check/index.md"
    assert pages[("build", "labels")].doc_path == "reference/cli/build/labels.md"
    assert "build-old" not in pages[()].markdown
    assert "[`check`](check/index.md)" in pages[("build",)].markdown
    nav = navigation(list(pages.values()))
    assert nav[0] == "reference/cli/index.md" and {"medlens run": "reference/cli/run.md"} in nav
    check = "reference/cli/build/check"
    build_entry = [
        "reference/cli/build/index.md",
        {"medlens build labels": "reference/cli/build/labels.md"},
        {"medlens build check": [f"{check}/index.md", {"medlens build check integrity": f"{check}/integrity.md"}]},
    ]  # fmt: skip
    assert {"medlens build": build_entry} in nav


def test_a_page_shows_usage_arguments_options_and_defaults_as_help_does() -> None:
    pages = {page.path: page for page in command_pages(_toy_app())}
    labels = pages[("build", "labels")].markdown
    assert "medlens build labels [OPTIONS] PATH" in labels
    assert "| `PATH` | `<str>` | **required** Labels file |" in labels
    assert "| `--seed` | `<int>` | `0` |" in labels
    run = pages[("run",)].markdown
    assert "Benchmark spec &#124; with a pipe" in run  # a pipe never splits the table row


def test_help_text_is_shown_literally_not_read_as_markdown() -> None:
    toy = typer.Typer()

    @toy.command(help="Read *all* of [values] in <tag> and `code` with a_b.")
    def read() -> None: ...

    @toy.command(help="Second command.")
    def other() -> None: ...

    page = {page.path: page for page in command_pages(toy)}[("read",)]
    assert r"Read \*all\* of \[values\] in &lt;tag&gt; and \`code\` with a\_b." in page.markdown
