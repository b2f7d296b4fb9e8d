"""One validation policy for names, filters and id lists, refused in one line with exit 2:
unknown ids, run names, --min-n, --where syntax and values, compare A A, missing options, help."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from board_runs import one_error_line
from cli_runs import named_run
from medlens.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl_benchmark(tmp_path_factory.mktemp("policy"), 30)


@pytest.fixture(scope="module")
def run(bench: Path) -> Path:
    return named_run(f"jsonl:{bench}", "random", bench.parent / "runs", "r")


def refused(*args: str) -> str:
    return one_error_line(runner.invoke(app, [str(a) for a in args]))


def id_file(folder: Path, *ids: str) -> Path:
    path = folder / "ids.txt"
    path.write_text("\n".join(ids) + "\n")
    return path


@pytest.mark.parametrize("flag", ["--include", "--exclude"])
def test_subset_refuses_unknown_ids_listing_the_first(
    bench: Path, tmp_path: Path, flag: str
) -> None:
    ids = id_file(tmp_path, "q1", "q2", "q_typo", *[f"nope{i}" for i in range(9)])
    output = tmp_path / "out" / "s.jsonl"
    line = refused("subset", f"jsonl:{bench}", "--output", output, flag, ids)
    assert f"{flag}: 10 of 12 ids are not items of jsonl:{bench}" in line
    assert "'nope0', 'nope1', 'nope2', 'nope3', 'nope4', … (10 in all)" in line
    assert not output.parent.exists()


def test_run_exclude_refuses_unknown_ids(bench: Path, tmp_path: Path) -> None:
    ids = id_file(tmp_path, "q1", "Q2")
    line = refused("run", "--bench", f"jsonl:{bench}", "--model", "random", "--out",
                   tmp_path / "runs", "--exclude", ids)  # fmt: skip
    assert "--exclude: 1 of 2 ids are not items of" in line and "'Q2'" in line
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", ["-rf", ".hidden", "a\tb", "a\x1b[31mb", "a\nb"])
def test_run_names_without_control_characters_or_leading_dash_or_dot(
    name: str, tmp_path: Path
) -> None:
    line = refused("run", "--bench", "demo", "--model", "random", "--out", tmp_path, "--name", name)
    assert "--name" in line
    assert not any(tmp_path.iterdir())


def test_min_n_at_least_one_everywhere(run: Path) -> None:
    assert "--min-n 0" in refused("board", run, "--min-n", "0")
    assert "--min-n 0" in refused("slice", run, "--by", "modality", "--min-n", "0")


def test_where_syntax_errors_are_syntax_errors(run: Path, bench: Path, tmp_path: Path) -> None:
    for command in (["slice", run, "--by", "modality"], ["board", run],
                    ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", tmp_path],
                    ["subset", f"jsonl:{bench}", "--output", tmp_path / "s.jsonl"]):  # fmt: skip
        line = refused(*command, "--where", "modality==CT")
        assert "--where: cannot read 'modality==CT' (a syntax error" in line
        assert "axis=value with one '='" in line


def test_every_filtering_command_lists_the_known_values(
    run: Path, bench: Path, tmp_path: Path
) -> None:
    for command in (["slice", run, "--by", "modality"], ["board", run],
                    ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", tmp_path],
                    ["subset", f"jsonl:{bench}", "--output", tmp_path / "s.jsonl"]):  # fmt: skip
        line = refused(*command, "--where", "modality=ct")
        assert "known values" in line and "modality: CT, Fundus, MR" in line, (command, line)


def test_compare_a_run_with_itself_is_refused(run: Path) -> None:
    assert "compares a run with itself" in refused("compare", run, run)
    assert "compares a run with itself" in refused("compare", run, run.parent / "." / run.name)


def test_missing_required_options_are_one_line(run: Path) -> None:
    line = refused("judge", run, "--judge", "x")
    assert "missing option '--protocol'" in line
    assert "invalid value for '--limit'" in refused("run", "--bench", "demo", "--limit", "x")


def test_help_has_no_developer_notes() -> None:
    """Every command's help, sub-commands too (`ratings export` showed reST ``--protocol``)."""
    for path, _ in _commands(typer.main.get_command(app)):
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        for note in ("60 lines", "typer", "signature", "(help: HELP)", "``"):
            assert note not in text, (path, note)


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def _groups(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, group
    for name, command in group.commands.items():
        if hasattr(command, "commands") and not command.hidden:
            yield from _groups(command, (*path, name))


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_help_shows_every_help_text_as_written() -> None:
    """Square brackets are not console markup (`'medlens[overlap]'`, `{axis: [values]}` lost
    theirs) and a summary wrapped in the source is one line in the command list."""
    root = typer.main.get_command(app)
    for group_path, group in _groups(root):
        listing = _flat(runner.invoke(app, [*group_path, "--help"], env={"COLUMNS": "2000"}).output)
        for name, command in group.commands.items():
            if not command.hidden:  # an old name (medlens.cli.aliases) is not listed
                summary = command.short_help or (command.help or "").split("\n\n")[0]
                assert _flat(summary) in listing, (*group_path, name)
    listing = _flat(runner.invoke(app, ["--help"], env={"COLUMNS": "2000"}).output)
    for path, command in _commands(root):
        text = _flat(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "2000"}).output)
        assert _flat((command.help or "").split("\n\n")[0]) in text, path
        for param in command.params:
            if getattr(param, "help", None):
                assert _flat(param.help) in text, (path, param.name)
    assert "'medlens[overlap]'" in _flat(runner.invoke(app, ["check", "--help"]).output)
    raw = runner.invoke(app, ["reading", "--help"], env={"COLUMNS": "2000"}).output.splitlines()
    assert any("differ, grouped by the rules" in line for line in raw)


def test_help_at_80_columns_folds_long_words_instead_of_cutting_them() -> None:
    """`run --help` on an 80-column terminal showed `openai:NAME?base_ur…`: rich cut the words
    wider than the help column, and its option column cut `--no-allow-self-ju…` (a flag with
    no use for a negative form: now `--allow-self-judge` alone). Every "…" left is one the help
    text itself holds; no option name is cut."""
    for path, command in _commands(typer.main.get_command(app)):
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}).output
        helps = [command.help or "", *(getattr(p, "help", "") or "" for p in command.params)]
        written = " ".join(helps)
        for token in text.replace("│", " ").split():
            assert not (token.startswith("-") and "…" in token), (path, token)
            if "…" in token:
                assert token.split("…")[0] in written, (path, token)
