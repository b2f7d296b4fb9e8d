"""The index page escapes everything a user or a server wrote (labels, messages, notes); the
TOML key locator finds the line of every kind of key; the identity diff names each change."""

from __future__ import annotations

import pytest

from medlens.study.index import Section, html_page, markdown
from medlens.study.record import identity_changes
from medlens.study.tomlkeys import KeyLines


def test_the_index_escapes_text_and_links() -> None:
    evil = '<script>alert("x")</script> & *bold* | pipe'
    section = Section(
        "Runs", ["run", "report"], [[(evil, None), ("report", 'a"><b>.html')]], [evil]
    )
    page = html_page("medlens study <i>s</i>", [evil], [section])
    assert "<script>" not in page and "<i>" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and 'href="a&quot;&gt;&lt;b&gt;.html"' in page
    text = markdown("study", [evil], [section])
    assert "<script>" not in text and "\\*bold\\*" in text and "\\| pipe" in text


TOML = '''name = "s"  # a comment
[models]
a = "random"
"b.c" = { spec = "first", concurrency = 2 }
notes = """
x = 1
"""
list = [
  "y = 2",
]
[benchmarks]
d = "demo"
[[boards]]
benchmark = "d"
[[boards]]
benchmark = "d"
name = "second"
'''


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("name",), 1),
        (("models",), 2),
        (("models", "a"), 3),
        (("models", "b.c"), 4),
        (("models", "b.c", "concurrency"), 4),
        (("models", "x"), 2),  # inside a multi-line string: not a key; falls back to the table
        (("models", "list"), 8),
        (("benchmarks", "d"), 12),
        (("boards", 0, "benchmark"), 14),
        (("boards", 1, "name"), 17),
        (("boards", 1, "nosuch"), 15),
    ],
)
def test_key_lines(path: tuple[str | int, ...], line: int) -> None:
    assert KeyLines(TOML).line_of(path) == line


def test_identity_changes_name_each_difference_and_take_up_additions() -> None:
    old = {"seed": 0, "models": {"a": {"spec": "random"}}, "benchmarks": {"d": {"spec": "demo"}},
           "judges": {"eq": {"spec": "j", "benchmarks": ["d"]}}}  # fmt: skip
    new = {"seed": 1, "models": {"a": {"spec": "first"}, "b": {"spec": "x"}},
           "benchmarks": {"d": {"spec": "demo"}, "e": {"spec": "demo"}},
           "judges": {"eq": {"spec": "j", "benchmarks": ["d", "e"]}}}  # fmt: skip
    added, refused = identity_changes(old, new)
    assert added == ["model b", "benchmark e", "judge eq on e"]
    assert refused == ["seed 0 → 1", "model a: spec 'random' → 'first'"]
    assert identity_changes(new, new) == ([], [])
