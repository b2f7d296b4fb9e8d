"""Every CLI command has help text and is documented in the README (as sqlite-utils does)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from data_paths import REPO_ROOT
from medlens.cli import app

runner = CliRunner()
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands if c.callback)
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_first_screen_shows_the_two_commands() -> None:
    first_screen = "\n".join(README.splitlines()[:25])
    assert "make demo" in first_screen and "make test" in first_screen


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help(name: str) -> None:
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert len(result.output.strip().splitlines()) > 3


@pytest.mark.parametrize("name", COMMANDS)
def test_command_is_documented_in_readme(name: str) -> None:
    assert f"medlens {name}" in README, f"README.md does not mention `medlens {name}`"
