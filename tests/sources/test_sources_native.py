"""The readers and answer forms shared by the native loaders (medlens.sources.native)."""

from __future__ import annotations

from pathlib import Path

import pytest

from medlens.core.errors import InputError
from medlens.sources import native


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Yes", "yes"),
        ("yes", "yes"),
        (" NO ", "no"),
        ("No.", "no"),
        ("是的", "yes"),
        ("是", "yes"),
        ("有", "yes"),
        ("包含", "yes"),
        ("可以", "yes"),
        ("不是", "no"),
        ("没有", "no"),
        ("不包含", "no"),
        ("不可以", "no"),
        ("不正常", "no"),
        ("Left", None),
        ("yes, left", None),
        ("肺", None),
        ("", None),
        ("0", None),
    ],
)
def test_yes_no_forms(answer: str, expected: str | None) -> None:
    assert native.yes_no(answer) == expected


def test_read_records_accepts_a_list_or_json_lines(tmp_path: Path) -> None:
    listed = tmp_path / "a.json"
    listed.write_text('\ufeff [{"x": 1}, {"x": 2}]')
    assert [where for where, _ in native.read_records(listed)] == ["record 0", "record 1"]
    lines = tmp_path / "b.json"
    lines.write_text('{"x": 1}\n\n{"x": 2}\n')
    assert [where for where, _ in native.read_records(lines)] == ["line 1", "line 3"]
    lines.write_text('{"x": 1}\n{"x": \n')
    with pytest.raises(InputError, match=r"b\.json, line 2: not valid JSON"):
        list(native.read_records(lines))
    lines.write_text("[1, 2]")
    with pytest.raises(InputError, match="record 0: expected a JSON object"):
        list(native.read_records(lines))


def test_read_csv_counts_lines_across_quoted_newlines(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('h1,h2\n"a\nb",c\n\nd,e\n')
    assert [(where, row) for where, row in native.read_csv(path)] == [
        ("line 2", ["a\nb", "c"]),
        ("line 5", ["d", "e"]),
    ]


def test_read_table_names_short_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\n1\t2\n3\n")
    with pytest.raises(InputError, match=r"t\.tsv, line 3: 1 fields where the header has 2"):
        list(native.read_table(path, "\t"))


def test_letter_of_matches_letters_and_option_text() -> None:
    options = {"A": "Normal", "B": "Glaucoma "}
    assert native.letter_of(options, "B", Path("f"), "record 0") == "B"
    assert native.letter_of(options, "Glaucoma", Path("f"), "record 0") == "B"
    assert native.letter_of(options, "normal", Path("f"), "record 0") == "A"
    with pytest.raises(InputError, match="'Cataract' is none of the options"):
        native.letter_of(options, "Cataract", Path("f"), "record 0")


def test_options_from_every_layout() -> None:
    where = (Path("f"), "line 1")
    assert native.options_from({"options": {"A": "x", "B": ""}}, *where) == {"A": "x"}
    assert native.options_from({"options": ["x", "y"]}, *where) == {"A": "x", "B": "y"}
    assert native.options_from({"options": '["x", "y"]'}, *where) == {"A": "x", "B": "y"}
    assert native.options_from({"A": "x", "B": "nan", "C": "z"}, *where) == {"A": "x", "C": "z"}
    assert native.options_from({"option_A": "x", "option_B": "y"}, *where) == {"A": "x", "B": "y"}
    assert native.options_from({"question": "q"}, *where) == {}
