"""The command-line reference of the documentation site, generated from the commands themselves.

The mkdocs hook ``docs/hooks/cli_reference.py`` asks this module for one Markdown page per
command and per group of the typer app (nested groups walked; hidden commands, such as old names
kept as aliases, left out) and for the navigation entries of those pages. Nothing is copied by
hand: a new, renamed or regrouped command changes the reference by itself, and the strict site
build fails on a link to a command that no longer exists.

Written here rather than taken from mkdocs-click: typer builds its commands on its own copy of
click (``typer._click``), which mkdocs-click does not walk, and mkdocs-click writes neither a
page per command nor navigation. The type column is the one ``--help`` prints (``<str>``,
``<path>``), from the same typer renderers ``medlens.cli.common`` configures."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import typer
import typer.core

REFERENCE_DIR = "reference/cli"
_MARKDOWN_SPECIALS = str.maketrans({c: f"\\{c}" for c in "\\`*_[]#"})


@dataclass(frozen=True)
class CommandPage:
    """One page of the reference: a command, or a group with the list of its commands."""

    path: tuple[str, ...]
    """The words after ``medlens`` (``("items", "fit")``); ``()`` is ``medlens`` itself."""
    summary: str
    """The first line of the command's help."""
    markdown: str
    is_group: bool

    @property
    def title(self) -> str:
        return " ".join(("medlens", *self.path))

    @property
    def doc_path(self) -> str:
        """The page's path under ``docs/``: a group is a folder with ``index.md``."""
        stem = "/".join(self.path)
        if self.is_group:
            return f"{REFERENCE_DIR}/{stem}/index.md" if stem else f"{REFERENCE_DIR}/index.md"
        return f"{REFERENCE_DIR}/{stem}.md"


def visible_commands(app: typer.Typer) -> list[tuple[str, ...]]:
    """Every command and group a user is shown, as words after ``medlens``, in help order."""
    return [path for path, _command, _ctx in _walk(app)]


def command_pages(app: typer.Typer) -> list[CommandPage]:
    """One page per visible command and group, ``medlens`` itself first."""
    return [_page(path, command, ctx) for path, command, ctx in _walk(app)]


def navigation(pages: list[CommandPage]) -> list[Any]:
    """mkdocs ``nav`` entries for the pages: the index, then each command, groups nested."""
    by_path = {page.path: page for page in pages}

    def entries(parent: tuple[str, ...]) -> list[Any]:
        children = [p for p in pages if len(p.path) == len(parent) + 1 and p.path[:-1] == parent]
        out: list[Any] = [by_path[parent].doc_path]
        for child in children:
            out.append({child.title: entries(child.path) if child.is_group else child.doc_path})
        return out

    return entries(())


def _walk(app: typer.Typer) -> Iterator[tuple[tuple[str, ...], Any, typer.Context]]:
    root = typer.main.get_command(app)
    yield from _walk_command((), root, typer.Context(root, info_name="medlens"))


def _walk_command(
    path: tuple[str, ...], command: Any, ctx: typer.Context
) -> Iterator[tuple[tuple[str, ...], Any, typer.Context]]:
    yield path, command, ctx
    if not _is_group(command):
        return
    for name in command.list_commands(ctx):
        child = command.get_command(ctx, name)
        if child is None or child.hidden:
            continue
        yield from _walk_command(
            (*path, name), child, typer.Context(child, info_name=name, parent=ctx)
        )


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands")


def _page(path: tuple[str, ...], command: Any, ctx: typer.Context) -> CommandPage:
    summary = _summary(command)
    title = " ".join(("medlens", *path))
    parts = [f"# `{title}`", _prose(command.help or ""), _usage(title, command, ctx)]
    if _is_group(command):
        parts.append(_command_table(command, ctx))
    parts.extend(_parameter_tables(command, ctx))
    parts.append(f"*Generated from the command itself; `{title} --help` prints the same.*")
    markdown = "\n\n".join(part for part in parts if part) + "\n"
    return CommandPage(path, summary, markdown, _is_group(command))


def _summary(command: Any) -> str:
    text = command.short_help or command.help or ""
    return " ".join(text.strip().split("\n\n")[0].split())


def _prose(text: str) -> str:
    """Help text as written: paragraphs kept, Markdown and HTML characters shown literally."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]
    return "\n\n".join(_escape(p) for p in paragraphs)


def _escape(text: str) -> str:
    return html.escape(text, quote=False).translate(_MARKDOWN_SPECIALS).replace("|", "&#124;")


def _usage(title: str, command: Any, ctx: typer.Context) -> str:
    pieces = [title, "[OPTIONS]"]
    for param in command.params:
        if isinstance(param, typer.core.TyperArgument) and not param.hidden:
            word = _argument_name(param) + ("..." if param.nargs == -1 else "")
            pieces.append(word if param.required else f"[{word}]")
    if _is_group(command):
        pieces.append("COMMAND [ARGS]...")
    return "```text\n" + " ".join(pieces) + "\n```"


def _argument_name(param: Any) -> str:
    return str(param.metavar or param.name or "").upper().replace("_", "-")


def _command_table(command: Any, ctx: typer.Context) -> str:
    rows = ["| command | what it does |", "|---|---|"]
    for name in command.list_commands(ctx):
        child = command.get_command(ctx, name)
        if child is None or child.hidden:
            continue
        link = f"{name}/index.md" if _is_group(child) else f"{name}.md"
        rows.append(f"| [`{name}`]({link}) | {_escape(_summary(child))} |")
    return "## Commands\n\n" + "\n".join(rows)


def _parameter_tables(command: Any, ctx: typer.Context) -> list[str]:
    params = [p for p in command.params if not p.hidden]
    arguments = [p for p in params if isinstance(p, typer.core.TyperArgument)]
    options = [p for p in params if not isinstance(p, typer.core.TyperArgument)]
    tables = []
    if arguments:
        rows = [_argument_row(p, ctx) for p in arguments]
        tables.append("## Arguments\n\n| argument | type | description |\n|---|---|---|\n"
                      + "\n".join(rows))  # fmt: skip
    if options:
        rows = [_option_row(p, ctx) for p in options]
        tables.append("## Options\n\n| option | type | default | description |\n|---|---|---|---|\n"
                      + "\n".join(rows))  # fmt: skip
    return tables


def _argument_row(param: Any, ctx: typer.Context) -> str:
    kind = typer.core.TyperArgument.display_type_rich(param, ctx)
    return f"| `{_argument_name(param)}` | {_code(kind)} | {_help(param)} |"


def _option_row(param: Any, ctx: typer.Context) -> str:
    names = ", ".join(f"`{name}`" for name in (*param.opts, *param.secondary_opts))
    kind = typer.core.TyperOption.display_type_rich(param, ctx)
    return f"| {names} | {_code(kind)} | {_default(param)} | {_help(param)} |"


def _help(param: Any) -> str:
    text = _escape(" ".join((getattr(param, "help", None) or "").split()))
    return f"**required** {text}" if param.required else text


def _code(text: str | None) -> str:
    return f"`{text.replace('|', '&#124;')}`" if text else ""


def _default(param: Any) -> str:
    """The default ``--help`` shows; nothing for a flag, an empty value or a hidden default."""
    if getattr(param, "is_flag", False) or param.show_default is False:
        return ""
    if isinstance(param.show_default, str):
        return _escape(param.show_default)
    value = param.default
    if value is None or value == "" or callable(value) or value in ([], ()):
        return ""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    return _code(str(getattr(value, "value", value)))
