"""The ``--where`` filter language shared by ``slice``, ``board``, ``run`` and ``subset``.

``axis=value``, ``axis!=value``, ``axis in (a|b)``, ``axis not in (a|b)``; ``,`` means AND.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from medlens.core.errors import SpecError

_IN = re.compile(r"^(?P<axis>.+?)\s+(?P<negate>not\s+)?in\s*\((?P<values>.*)\)$", re.IGNORECASE)
_COMPARE = re.compile(r"^(?P<axis>[^!=<>]+?)\s*(?P<op>!=|=)\s*(?P<value>.*)$")
SYNTAX = "use axis=value with one '=', axis!=value, axis in (a|b), axis not in (a|b); ',' = AND"
MAX_LISTED = 20


def _plain(value: str) -> bool:
    """A value that is not the rest of a mistyped operator (``==CT``, ``=> 3``); an empty
    value (``axis=``: the axis is missing) is plain."""
    return value.strip()[:1] not in ("=", "<", ">", "!")


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
        elif (found := _COMPARE.match(term)) and _plain(found["value"]):
            condition = Condition(
                found["axis"].strip(), (found["value"].strip(),), found["op"] == "!="
            )
        else:
            raise SpecError(f"--where: cannot read {term!r} (a syntax error: {SYNTAX})")
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


def known_values_text(axis: str, values: Iterable[str]) -> str:
    """``modality: CT, Fundus, MR`` (the first MAX_LISTED values, then how many there are)."""
    listed = sorted(set(values) - {""})
    shown = ", ".join(listed[:MAX_LISTED])
    more = f", … ({len(listed)} values)" if len(listed) > MAX_LISTED else ""
    return f"{axis}: {shown or 'no values'}{more}"


def check_values(conditions: Sequence[Condition], known: Mapping[str, Iterable[str]]) -> None:
    """Refuse a value that no item has on its axis: a typo would keep nothing (``=``) or
    everything (``!=``) without a word; the axis's known values are listed."""
    for condition in conditions:
        values = set(known.get(condition.axis, ())) - {""}
        unknown = [value for value in condition.values if value and value not in values]
        if unknown:
            raise SpecError(
                f"--where matches no item (known values: "
                f"{known_values_text(condition.axis, values)}): none has "
                f"{condition.axis}={unknown[0]!r}"
            )
