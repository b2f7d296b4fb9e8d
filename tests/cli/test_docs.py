"""Every CLI command has help text and is documented in the user guide (as sqlite-utils does);
the README's first screen shows the two commands a newcomer needs.

The README is a two-minute front door; the user guide is the site's pages under docs/ (the
generated command reference and the decision records are not counted: a command must be
explained where users look, not only listed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from data_paths import REPO_ROOT
from medlens.cli import app
from medlens.cli.reference import visible_commands

runner = CliRunner()
COMMANDS = [" ".join(path) for path in visible_commands(app) if path]
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = REPO_ROOT / "docs"
GUIDE = "\n".join(
    page.read_text(encoding="utf-8")
    for page in sorted(DOCS.rglob("*.md"))
    if page.relative_to(DOCS).parts[0] not in {"reference", "decisions"}
)


def test_readme_first_screen_shows_the_two_commands() -> None:
    first_screen = "\n".join(README.splitlines()[:25])
    assert "make demo" in first_screen and "make test" in first_screen


def test_readme_is_read_in_two_minutes() -> None:
    assert len(README.splitlines()) <= 150


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help(name: str) -> None:
    result = runner.invoke(app, [*name.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert len(result.output.strip().splitlines()) > 3


@pytest.mark.parametrize("name", COMMANDS)
def test_command_is_documented_in_the_user_guide(name: str) -> None:
    assert f"medlens {name}" in GUIDE, f"no page under docs/ explains `medlens {name}`"
