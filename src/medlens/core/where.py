"""The ``--where`` filter language shared by ``slice``, ``board``, ``run`` and ``subset``.

``axis=value``, ``axis!=value``, ``axis in (a|b)``, ``axis not in (a|b)``; ``,`` means AND.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from medlens.core.errors import SpecError

_IN = re.compile(r"^(?P<axis>.+?)\s+(?P<negate>not\s+)?in\s*\((?P<values>.*)\)$", re.IGNORECASE)
_COMPARE = re.compile(r"^(?P<axis>[^!=]+?)\s*(?P<op>!=|=)\s*(?P<value>.*)$")


@dataclass(frozen=True)
class Condition:
    """One term of a ``--where`` expression."""

    axis: str
    values: tuple[str, ...]
    negate: bool = False
    """True for ``!=`` and ``not in``."""


def parse_where(text: str, known_axes: Sequence[str]) -> tuple[Condition, ...]:
    """Parse ``axis=value``, ``axis!=value``, ``axis in (a|b)``, ``axis not in (a|b)``; ``,`` = AND."""
    conditions = []
    for term in _where_terms(text):
        found = _IN.match(term)
        if found:
            values = tuple(v.strip() for v in found["values"].split("|") if v.strip())
            condition = Condition(found["axis"].strip(), values, bool(found["negate"]))
        elif found := _COMPARE.match(term):
            condition = Condition(
                found["axis"].strip(), (found["value"].strip(),), found["op"] == "!="
            )
        else:
            raise SpecError(
                f"--where: cannot read {term!r} (use axis=value, axis!=value, axis in (a|b))"
            )
        check_axes([condition.axis], known_axes, "--where")
        conditions.append(condition)
    return tuple(conditions)


def _where_terms(text: str) -> list[str]:
    """Split on the commas outside parentheses; a piece that is no condition continues the value
    before it (VQA-RAD's question types read ``PRES, POS``)."""
    terms: list[str] = []
    for piece in re.split(r",(?![^()]*\))", text):
        if terms and piece.strip() and not (_IN.match(piece.strip()) or _COMPARE.match(piece)):
            terms[-1] += "," + piece
        else:
            terms.append(piece)
    return [t.strip() for t in terms if t.strip()]


def check_axes(axes: Sequence[str], known_axes: Sequence[str], flag: str) -> None:
    """Refuse unknown axes with one line that lists the known ones."""
    for axis in axes:
        if axis not in known_axes:
            known = ", ".join(known_axes) or "none"
            raise SpecError(f"{flag}: unknown axis {axis!r} (known axes: {known})")
