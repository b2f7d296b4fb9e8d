"""Items that cannot be answered meaningfully: a blank question, an empty gold answer, a choice
with one option, two options with the same text. The ``jsonl:`` loader refuses a file holding
any (naming them all, see :class:`BadItems`); ``medlens check`` lists them (``answerable``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from medlens.core.errors import InputError
from medlens.core.items import Item

SHOWN_IN_LINE = 3
"""Bad items described in the refusal's one line; the others are counted and their lines listed."""
LINES_LISTED = 20
"""Line numbers listed after the described ones (then "…")."""


def answerable_problems(item: Item) -> list[tuple[str, str]]:
    """(field, problem) of each reason the item cannot be answered meaningfully."""
    problems = []
    if not item.question.strip() and not item.images:
        problems.append(("question", "blank question"))
    answer = item.answer
    if answer is not None and not isinstance(answer, list) and not str(answer).strip():
        problems.append(("answer", "empty gold answer (null marks a split without answers)"))
    if item.kind in ("choice", "multi_choice") and item.options:
        if len(item.options) < 2:
            problems.append(("options", "one option only: nothing to choose"))
        seen: dict[str, str] = {}
        for letter, text in item.options.items():
            folded = " ".join(str(text).split()).casefold()
            if folded in seen:
                problem = f"options {seen[folded]} and {letter} have the same text {text!r}"
                problems.append(("options", problem))
                break
            seen[folded] = letter
    return problems


@dataclass
class BadItems:
    """The items of a file that `medlens check` lists (fails or warns about), gathered over the whole file so the
    refusal names them all in one line (bounded: a few described, then line numbers)."""

    path: str
    hint: str
    count: int = 0
    described: list[str] = field(default_factory=list)
    first: tuple[str, str] | None = None
    """(where, problem) of the first: a file with one bad item gets the plain one-item line."""
    more_lines: list[int] = field(default_factory=list)

    def add(self, number: int, item_id: str, where: str, problem: str) -> None:
        self.count += 1
        if self.first is None:
            self.first = (where, problem)
        if len(self.described) < SHOWN_IN_LINE:
            self.described.append(f"{where} (id {item_id!r}): {problem}")
        elif len(self.more_lines) <= LINES_LISTED:
            self.more_lines.append(number)

    def refuse(self) -> None:
        """Raise the one-line refusal when any item was bad."""
        if self.first is not None and self.count == 1:
            raise InputError(self.path, self.first[0], self.first[1] + self.hint)
        if self.count:
            raise InputError(self.path, None, self.summary() + self.hint)

    def summary(self) -> str:
        text = f"{self.count:,} items that `medlens check` lists: " + "; ".join(self.described)
        rest = self.count - len(self.described)
        if rest:
            shown = ", ".join(str(n) for n in self.more_lines[:LINES_LISTED])
            dots = ", …" if rest > LINES_LISTED else ""
            text += f"; and {rest:,} more (line{'s' if rest > 1 else ''} {shown}{dots})"
        return text
