"""The typer app, the error-to-exit-code policy and the progress bar shared by all commands."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
import typer.core
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.segment import Segment
from rich.text import Text

from medlens.cli.aliases import add_alias_commands, canonical_args
from medlens.cli.help_format import LiteralHelpCommand, LiteralHelpGroup
from medlens.core.errors import EXIT_STORAGE, MedlensError, StorageError
from medlens.core.terminal import terminal_safe, terminal_safe_json


class OneLineErrors(LiteralHelpGroup):
    """Usage errors (a missing option, a value of the wrong type) as one `medlens: error:` line
    with exit code 2, like every other error, instead of click's boxed usage text; an old
    command name runs the command it now names (``medlens.cli.aliases``)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        add_alias_commands(self)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        return super().resolve_command(ctx, canonical_args(args))

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        # typer vendors click; its exception classes are reached through the public names
        usage_error: type[Exception] = typer.BadParameter.__mro__[1]  # UsageError
        click_exception: type[Exception] = usage_error.__mro__[1]  # ClickException
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except usage_error as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed: no error line
                sys.exit(exc.exit_code)  # type: ignore[attr-defined]
            context = getattr(exc, "ctx", None)
            where = context.command_path if context is not None else "medlens"
            message = exc.format_message().rstrip(".")  # type: ignore[attr-defined]
            print(f"medlens: error: {where}: {message[:1].lower()}{message[1:]} "
                  f"(see {where} --help)", file=sys.stderr)  # fmt: skip
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        except click_exception as exc:
            print(f"medlens: error: {exc.format_message()}", file=sys.stderr)  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        except typer.Abort:
            print("medlens: aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


# typer has no setting for its type column (``<bool>`` beside a flag, ``<list[str]>`` beside a
# repeatable option): its two builders are replaced, on the typer range pyproject.toml pins
# (tests/cli/test_private_hooks.py checks the hooks, test_cli_polish.py::
# test_help_shows_no_python_type_names the effect).
_typer_option_type = typer.core.TyperOption.display_type_rich
_typer_argument_type = typer.core.TyperArgument.display_type_rich


def _readable_type(label: str | None) -> str | None:
    """``<str>...`` for a repeatable parameter, where typer writes Python's ``<list[str]>``."""
    repeated = re.fullmatch(r"<list\[(.+)\]>", label or "")
    return f"<{repeated.group(1).lower()}>..." if repeated else label


def _option_type(option: typer.core.TyperOption, ctx: Any) -> str | None:
    """The type column of ``--help``: nothing for a flag (typer writes ``<bool>``)."""
    return None if option.is_flag else _readable_type(_typer_option_type(option, ctx))


def _argument_type(argument: typer.core.TyperArgument, ctx: Any) -> str | None:
    return _readable_type(_typer_argument_type(argument, ctx))


typer.core.TyperOption.display_type_rich = _option_type  # type: ignore[method-assign,assignment]
typer.core.TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]

APP_HELP = """Evaluate vision-language models on medical benchmarks; show where they fail.

Start: medlens run --bench demo --model random
Then:  medlens report runs/demo-random   (medlens GROUP --help: its commands)"""

app = typer.Typer(
    name="medlens",
    help=APP_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineErrors,
)
# Piped output (CI logs, files) gets tables 120 wide instead of rich's 80-column fallback,
# unless $COLUMNS asks for a width.


class _SafeConsole(Console):
    """A console whose printed text passes through the one sanitiser (``core.terminal``):
    item ids, axis values, questions and model text in any table or line show their control
    and bidi characters escaped; rich's own control codes (styles, the progress bar) pass.

    It overrides rich's private ``_render_buffer`` (rich pinned in pyproject.toml;
    tests/cli/test_private_hooks.py): rich's public render hooks see renderables before a live
    progress bar adds its own, so a server's error text shown in the bar would pass unescaped."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(terminal_safe(segment.text), segment.style)
            for segment in buffer
        )


class _PipeConsole(_SafeConsole):
    """rich's console exits 1 when the reader of a pipe goes away (`medlens run | head`);
    the reader had all it wanted, so end quietly with 0 instead."""

    def on_broken_pipe(self) -> None:
        silence_stdout()
        raise typer.Exit(0)


console = _PipeConsole(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120)
err_console = _SafeConsole(stderr=True)


def write_text(text: str) -> None:
    """A rendered report, board or page (text, md, html) on stdout, through the sanitiser."""
    sys.stdout.write(terminal_safe(text))


def write_json(data: Any, **dumps: Any) -> None:
    """One JSON value on stdout, one line; the characters a terminal acts on that JSON writes
    raw (C1 controls, bidi marks) as ``\\uXXXX`` escapes: the same value, harmless on a terminal."""
    write_json_text(json.dumps(data, ensure_ascii=False, **dumps) + "\n")


def write_json_text(text: str) -> None:
    """JSON text already rendered, on stdout, as :func:`write_json` writes it."""
    sys.stdout.write(terminal_safe_json(text))


F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def command(
    name: str | None = None, *, under: typer.Typer | None = None, **kwargs: Any
) -> Callable[[F], F]:
    """Register a command (of group ``under``, else top-level) whose user errors print one line
    and exit 2, and Ctrl-C exits 130."""

    def decorate(function: F) -> F:
        (under or app).command(name, cls=LiteralHelpCommand, **kwargs)(with_error_policy(function))
        return function

    return decorate


def with_error_policy(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` as a command: user errors one line and exit 2, a closed pipe 0, Ctrl-C 130."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kw: Any) -> Any:
        try:
            return function(*args, **kw)
        except MedlensError as exc:
            fail(str(exc), getattr(exc, "exit_code", EXIT_BAD_INPUT))
        except BrokenPipeError:
            # `medlens … | head`: the reader has all it wanted; exit 1 would claim errors.
            silence_stdout()
            raise typer.Exit(0) from None
        except OSError as exc:  # a file the command writes (or reads) refused: one line, exit 4
            fail(str(StorageError(exc.filename or "a file", exc, "read or write")), EXIT_STORAGE)
        except KeyboardInterrupt:
            err_console.print("interrupted; rerun the same command to resume", highlight=False)
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return wrapper


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing a closed pipe at exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def flush_stdout_quietly() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def show_version(value: bool) -> None:
    if value:
        from medlens.core.version import __version__

        print(f"medlens {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the medlens version and exit.",
            callback=show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Evaluate vision-language models on medical benchmarks and show where they fail."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    """Print one error line on stderr and exit (file and server text in it shown escaped)."""
    print(f"medlens: error: {terminal_safe(message)}", file=sys.stderr)
    raise typer.Exit(code)


class RateColumn(ProgressColumn):
    """Units (items, tokens …) per second."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} {self.unit}/s" if speed else f"- {self.unit}/s")


def progress_bar(description: str, unit: str = "items") -> Progress:
    """A rich progress bar with count, rate and ETA (on stderr, so stdout stays parseable)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(unit),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
        refresh_per_second=4,
    )


SCORE_HELP = "Scores to read: rules, judge:NAME (judged scope only) or combined:NAME"
"""Help of every command's ``--score`` option (``analysis.score_source``)."""


def write_output(path: Path, data: str | bytes) -> None:
    """Write a command's ``--output`` file whole or not at all. Missing folders on the way are
    created, as ``run --out``, ``build`` and ``subset`` create theirs, and a note says so (a
    mistyped folder does not go unnoticed)."""
    from medlens.core.errors import SpecError
    from medlens.runs.files import write_atomic

    folder = path.parent
    if path.is_dir():
        raise SpecError(f"--output {path}: is a folder; give a file name (e.g. {path / 'report'}…)")
    if folder.exists() and not folder.is_dir():
        raise SpecError(f"--output {path}: {folder} is a file, not a folder")
    if not folder.exists():
        folder.mkdir(parents=True)
        err_console.print(
            f"note: created folder {folder}", highlight=False, markup=False, soft_wrap=True
        )
    write_atomic(path, data)


def refuse_page_on_terminal(format: str, output: Path | None) -> None:
    """An HTML page (hundreds of kB) is a file to open, never text for a terminal."""
    from medlens.core.errors import SpecError

    if format == "html" and output is None and sys.stdout.isatty():
        raise SpecError(
            "--format html writes a whole web page: give --output FILE.html (or redirect stdout)"
        )


def print_warnings(warnings: list[str]) -> None:
    """Warnings on stderr, one line each (stdout stays parseable)."""
    for warning in warnings:
        err_console.print(
            f"warning: {terminal_safe(warning)}", highlight=False, markup=False, soft_wrap=True
        )
