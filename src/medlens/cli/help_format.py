"""``--help`` shows help text as written.

typer's rich help reads square brackets in help text as console markup and drops them
(``pip install 'medlens[overlap]'`` came out as ``'medlens'``, ``{axis: [values]}`` as
``{axis: }``), and its command list keeps a docstring's line breaks, so a summary wrapped in the
source broke mid-sentence. medlens's help holds no markup, so its prose is rendered literally
and a command's summary as one line.

The summary goes through click's public ``short_help`` (set from the docstring's first
paragraph by :class:`LiteralHelpCommand` and :class:`LiteralHelpGroup`). Literal prose, folded
rather than cut, has no setting in typer (its ``rich_markup_mode`` is rich markup, Markdown, or
click's plain help without the panels), so two text builders of ``typer.rich_utils`` are
replaced — only when help is printed, since typer imports that module only then — on the typer
release range ``pyproject.toml`` pins; ``tests/cli/test_private_hooks.py`` checks the hooks and
``tests/cli/test_validation_policy.py`` their effects, so a typer that renamed or reshaped them
fails a test instead of printing markup-eaten help."""

from __future__ import annotations

import inspect
from typing import Any

import typer.core
from rich.text import Text

_patched = False


def _literal_rich_text(*, text: str, style: str = "", markup_mode: Any) -> Any:
    """Help prose as written (typer's builder parses it as rich markup); Markdown stays Markdown."""
    from typer import rich_utils

    if markup_mode == rich_utils.MARKUP_MODE_MARKDOWN:
        return _typer_rich_text(text=text, style=style, markup_mode=markup_mode)
    cleaned = inspect.cleandoc(text)
    if "\x1b" in cleaned:  # text carrying its own colours, as typer allows
        found = rich_utils.highlighter(Text.from_ansi(cleaned, style=style))
    else:
        found = rich_utils.highlighter(Text(cleaned, style=style))
    # a word wider than its column (a spec like openai:NAME?base_url=URL) is folded onto the
    # next line, never cut with "…" (rich's default) on an 80-column terminal
    found.overflow = "fold"
    return found


def _folded_parameter_help(*args: Any, **kwargs: Any) -> Any:
    """A parameter's help cell with every part (help, ``[default: …]``) folded, not cut."""
    cell = _typer_parameter_help(*args, **kwargs)
    for part in getattr(cell, "renderables", ()):
        if isinstance(part, Text):
            part.overflow = "fold"
    return cell


def use_literal_help() -> None:
    """Replace typer's help-text builders (once)."""
    global _patched, _typer_rich_text, _typer_parameter_help
    if _patched:
        return
    from typer import rich_utils

    _typer_rich_text, _typer_parameter_help = (
        rich_utils._make_rich_text,
        rich_utils._get_parameter_help,
    )
    rich_utils._make_rich_text = _literal_rich_text
    rich_utils._get_parameter_help = _folded_parameter_help
    _patched = True


_typer_rich_text: Any = None
_typer_parameter_help: Any = None


def one_line_summary(help_text: str | None) -> str | None:
    """A command's summary in a command list: its help's first paragraph on one line."""
    if not help_text:
        return None
    return " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())


class LiteralHelpGroup(typer.core.TyperGroup):
    """A command group whose ``--help`` shows help text as written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.short_help = self.short_help or one_line_summary(self.help)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        use_literal_help()
        super().format_help(ctx, formatter)


class LiteralHelpCommand(typer.core.TyperCommand):
    """A command whose ``--help`` shows help text as written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.short_help = self.short_help or one_line_summary(self.help)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        use_literal_help()
        super().format_help(ctx, formatter)
