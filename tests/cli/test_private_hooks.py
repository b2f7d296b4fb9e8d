"""The three places where medlens reaches into typer or rich, each on a pinned release range and
checked here for what it relies on, so a release that renames or reshapes one fails a test
instead of silently printing markup-eaten help, Python type names, or unescaped model text.

- ``cli.help_format`` replaces ``typer.rich_utils._make_rich_text`` and ``_get_parameter_help``
  (help prose as written, folded not cut: typer has no setting for either);
- ``cli.common`` replaces ``TyperOption.display_type_rich`` / ``TyperArgument.display_type_rich``
  (no ``<bool>`` beside a flag, ``<str>...`` for ``<list[str]>``);
- ``cli.common._SafeConsole`` overrides rich's ``Console._render_buffer``: every segment of text
  passes through ``core.terminal.terminal_safe`` (rich's public render hooks see renderables, and
  a live progress bar's are added after them, unsanitised).

The effects are tested where users see them (tests/cli/test_validation_policy.py,
test_cli_polish.py, test_terminal_output.py); these tests pin the hooks themselves.
"""

from __future__ import annotations

import inspect
import io
from importlib.metadata import version
from pathlib import Path

import rich.console
import typer.core
from packaging.requirements import Requirement
from typer.testing import CliRunner

from medlens.cli import app, common, help_format
from medlens.core.tomlfile import tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pinned(name: str) -> Requirement:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    return next(Requirement(d) for d in dependencies if Requirement(d).name == name)


def test_typer_and_rich_are_pinned_to_ranges_the_installed_releases_are_in() -> None:
    for name in ("typer", "rich"):
        requirement = pinned(name)
        assert requirement.specifier, f"{name} is not pinned to a range"
        assert any(spec.operator == "<" for spec in requirement.specifier), name
        assert requirement.specifier.contains(version(name)), (name, version(name))


def test_typers_help_builders_exist_with_the_signature_medlens_calls() -> None:
    from typer import rich_utils

    help_format.use_literal_help()
    assert rich_utils._make_rich_text is help_format._literal_rich_text
    assert rich_utils._get_parameter_help is help_format._folded_parameter_help
    original = inspect.signature(help_format._typer_rich_text).parameters
    assert {"text", "style", "markup_mode"} <= set(original)
    assert all(original[name].kind is inspect.Parameter.KEYWORD_ONLY for name in ("text", "style"))
    assert callable(help_format._typer_parameter_help)
    assert hasattr(rich_utils, "MARKUP_MODE_MARKDOWN") and hasattr(rich_utils, "highlighter")


def test_help_goes_through_the_replaced_builders() -> None:
    shown = CliRunner().invoke(app, ["build", "unpack", "--help"], terminal_width=80)
    assert shown.exit_code == 0, shown.output
    assert "DIR/images/*" in shown.output and "<bool>" not in shown.output


def test_typers_type_column_is_the_one_medlens_replaced() -> None:
    assert typer.core.TyperOption.display_type_rich is common._option_type
    assert typer.core.TyperArgument.display_type_rich is common._argument_type
    assert common._readable_type("<list[str]>") == "<str>..."
    for builder in (common._typer_option_type, common._typer_argument_type):
        assert list(inspect.signature(builder).parameters) == ["self", "ctx"]


def test_richs_segment_buffer_is_where_every_printed_text_passes() -> None:
    assert "_render_buffer" in vars(rich.console.Console)
    assert list(inspect.signature(rich.console.Console._render_buffer).parameters) == [
        "self",
        "buffer",
    ]
    out = io.StringIO()
    console = common._SafeConsole(file=out, width=80, color_system=None)
    console.print("answer \x1b[2J\u202etxt", highlight=False, markup=False)
    console.print({"item \x1b]8;;x\x07": 1})
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "answer" in text and "item" in text
