"""The grouped command surface: `medlens --help` fits one 80×40 screen and says where to start,
and every old command name is a hidden alias whose output is the new name's, byte for byte."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import typer.main
from PIL import Image
from typer.testing import CliRunner, Result

from cli_runs import named_run
from medlens.cli import app
from medlens.cli.aliases import ALIASES, DEFAULTS

NARROW = {"COLUMNS": "80", "TERM": "dumb"}


def invoke(args: Sequence[str], stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin, env=NARROW)


def steady(text: str) -> str:
    """A progress bar's rate and clock, which differ between any two runs, as placeholders, and
    its bar (whose length rich fits around them) as one character."""
    text = re.sub(r"[\d.,]+ (\w+)/s", r"<RATE> \1/s", text)
    text = re.sub(r"\b\d+:\d\d:\d\d\b", "<CLOCK>", text)
    return re.sub(r" +", " ", re.sub(r"━+", "━", text))


def same(old: Sequence[str], new: Sequence[str], stdin: str | None = None) -> Result:
    """Run both; assert the same exit code, stdout and stderr; the new name's result."""
    before, after = invoke(old, stdin), invoke(new, stdin)
    assert (before.exit_code, before.stdout, steady(before.stderr)) == (
        after.exit_code,
        after.stdout,
        steady(after.stderr),
    ), (old, new)
    return after


def visible(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command a reference lists: the tree walked, hidden ones skipped."""
    for name, command in group.commands.items():
        if command.hidden:
            continue
        if hasattr(command, "commands"):
            yield from visible(command, (*path, name))
        else:
            yield (*path, name), command


def test_top_level_help_fits_one_80_by_40_screen_and_says_where_to_start() -> None:
    result = invoke(["--help"])
    assert result.exit_code == 0
    lines = result.stdout.rstrip("\n").splitlines()
    assert len(lines) <= 40, len(lines)
    assert max(len(line) for line in lines) <= 80
    assert "Start: medlens run --bench demo --model random" in result.stdout
    root = typer.main.get_command(app)
    listed = [n for n, c in root.commands.items() if not c.hidden]  # type: ignore[attr-defined]
    assert len(listed) <= 25, listed
    for name in listed:  # each on one line of the list: its summary is not wrapped
        assert sum(line.startswith(f"│ {name} ") for line in lines) == 1, name
    for group in ("build", "check", "reading", "ratings", "items"):
        assert group in listed


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_old_name_is_hidden_and_names_the_same_command(old: str) -> None:
    root = typer.main.get_command(app)
    target = root
    for name in ALIASES[old]:
        target = target.commands[name]  # type: ignore[attr-defined]
    alias = root.commands[old]  # type: ignore[attr-defined]
    assert alias.hidden and not target.hidden
    assert alias.callback is target.callback
    assert f"│ {old} " not in invoke(["--help"]).stdout


@pytest.mark.parametrize("old", sorted(ALIASES))
@pytest.mark.parametrize("args", [["--help"], [], ["--no-such-option"]], ids=str)
def test_an_old_name_prints_what_the_new_name_prints(old: str, args: list[str]) -> None:
    result = same([old, *args], [*ALIASES[old], *args])
    if args == ["--no-such-option"]:
        assert result.exit_code == 2 and "no such option" in result.stderr
    if args == ["--help"]:
        assert result.exit_code == 0
        assert f"Usage: medlens {' '.join(ALIASES[old])} " in result.stdout


def test_a_reference_walking_the_tree_lists_each_command_once() -> None:
    paths = [path for path, _ in visible(typer.main.get_command(app))]
    callbacks = [command.callback for _, command in visible(typer.main.get_command(app))]
    assert len(set(callbacks)) == len(callbacks), paths
    for old in ALIASES:
        assert (old,) not in paths
    assert {("check", "contamination"), ("build", "subset"), ("items", "gate")} <= set(paths)


@pytest.mark.parametrize("group", sorted(DEFAULTS))
def test_a_group_that_was_a_command_runs_its_default_given_no_subcommand(group: str) -> None:
    default = DEFAULTS[group]
    for args in (["--no-such-option"], ["only-an-argument"], ["x", "--help"]):
        same([group, *args], [group, default, *args])
    listing = invoke([group, "--help"]).stdout
    assert f"│ {default} " in listing and f"Usage: medlens {group} [OPTIONS] COMMAND" in listing


def test_a_group_without_arguments_prints_its_help_and_no_empty_error_line() -> None:
    for args in ([], ["check"], ["ratings"]):
        result = invoke(args)
        assert result.exit_code == 2 and "Usage: medlens" in result.stdout
        assert "error" not in result.stderr, result.stderr


# real invocations: the old and the new name write the same files and print the same lines


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return named_run("demo", "random", tmp_path_factory.mktemp("runs"), "r", "--limit", "24")


def test_extract_and_vocab_and_explain_as_before(demo_run: Path) -> None:
    cases = "".join(
        json.dumps({"output": text, "options": {"A": "CT", "B": "MRI"}}) + "\n"
        for text in ("The answer is B", "A. CT", "neither")
    )
    result = same(
        ["extract", "--kind", "choice"], ["reading", "extract", "--kind", "choice"], cases
    )
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3
    assert same(["vocab", "modality"], ["reading", "vocab", "modality"]).exit_code == 0
    args = [str(demo_run), "--against", "vlmeval", "--json"]
    assert same(["explain", *args], ["reading", "explain", *args]).exit_code == 0


def test_check_and_audit_as_before(tmp_path: Path) -> None:
    assert same(["check", "demo", "--json"], ["check", "integrity", "demo", "--json"]).stdout
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("What imaging modality was used to acquire this image?\n")
    args = ["demo", "--corpus", str(corpus), "--n", "4", "--json"]
    assert same(["audit", *args], ["check", "contamination", *args]).exit_code == 0


def test_subset_unpack_and_build_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = str(_labels(tmp_path))
    cases = [  # old argv, new argv, the file written (relative: each pair in its own folder)
        (["subset"], ["build", "subset"], ["demo", "--sample", "12", "--output", "s.jsonl"], "s.jsonl"),
        (["unpack"], ["build", "unpack"], ["demo", "--output", "u"], "u/items.jsonl"),
        (["build"], ["build", "from-labels"], [labels, "--output", "b.jsonl"], "b.jsonl"),
    ]  # fmt: skip
    for index, (old, new, args, written) in enumerate(cases):
        outputs = []
        for side, name in (("old", old), ("new", new)):
            folder = tmp_path / f"{index}-{side}"
            folder.mkdir()
            monkeypatch.chdir(folder)
            result = invoke([*name, *args])
            assert result.exit_code == 0, result.output
            outputs.append((result.stdout, steady(result.stderr), (folder / written).read_bytes()))
        assert outputs[0] == outputs[1], old


def _labels(folder: Path) -> Path:
    """Eight small labelled images (four labels) and their labels CSV."""
    images = folder / "images"
    images.mkdir()
    rows = []
    for i, (label, colour) in enumerate([("cyst", "red"), ("nodule", "blue"), ("mass", "green"),
                                         ("calcification", "white")] * 2):  # fmt: skip
        Image.new("RGB", (16, 16), colour).save(images / f"{i}.png")
        rows.append({"image": f"{i}.png", "label": label})
    labels = images / "labels.csv"
    with open(labels, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["image", "label"])
        writer.writeheader()
        writer.writerows(rows)
    return labels
