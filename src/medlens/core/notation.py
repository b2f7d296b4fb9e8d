"""The small languages of option values, read by one family of parsers with one error style.

medlens's options carry a few notations, each spelled the same wherever it appears:

- a **list**: ``a,b,c`` (``--by``, ``--stratify``, ``--categories``, ``--judges``, run lists);
  blanks around items are dropped, empty items skipped;
- **settings**: ``key=value,key=value`` (``--price``, ``--weights``, ``--model-info``);
- a **tagged value**: ``tag:rest`` (``--score judge:NAME``, ``--log mlflow:URI``, ``--pairs
  BASE:TUNED``, a strategy's ``few-shot:K``);
- **joined parts**: ``a+b`` (``--strategy few-shot:5+cot``);
- a **spec**: ``name:argument?key=value&…`` (benchmarks, models, judges: :mod:`.specs`), and
  the ``--where`` filter (:mod:`.where`).

Every error is one line in one style: ``OPTION 'TEXT': what is wrong (what was expected)`` — a
:class:`~medlens.core.errors.SpecError` (exit 2, before any work).
"""

from __future__ import annotations

import math
from collections.abc import Collection

from medlens.core.errors import SpecError


def bad(option: str, text: str, problem: str) -> SpecError:
    """The one error of the family: ``OPTION 'TEXT': PROBLEM``."""
    return SpecError(f"{option} {text!r}: {problem}")


def split_list(text: str | None, sep: str = ",") -> list[str]:
    """``a, b,,c`` → ``["a", "b", "c"]`` (None or blank: an empty list)."""
    return [part.strip() for part in (text or "").split(sep) if part.strip()]


def distinct_list(text: str, option: str, what: str) -> list[str]:
    """A list that must name at least one `what` and none twice."""
    found = split_list(text)
    if not found:
        raise bad(option, text, f"needs at least one {what}")
    twice = sorted({name for name in found if found.count(name) > 1})
    if twice:
        raise bad(option, text, f"lists a {what} twice ({', '.join(twice)})")
    return found


def tagged(text: str, sep: str = ":") -> tuple[str, str, bool]:
    """``tag:rest`` → (tag, rest, whether the separator was there), both stripped."""
    tag, found, rest = text.strip().partition(sep)
    return tag.strip(), rest.strip(), bool(found)


def settings(
    text: str, option: str, expected: str, keys: Collection[str] | None = None
) -> list[tuple[str, str]]:
    """``key=value,key=value`` → [(key, value), …] in order; a piece without ``=``, an empty
    key or (with `keys`) an unknown one is an error naming `expected` and the piece."""
    out = []
    for part in split_list(text):
        key, found, value = part.partition("=")
        key = key.strip()
        if not found or not key or (keys is not None and key not in keys):
            raise bad(option, text, f"expected {expected} (got {part!r})")
        out.append((key, value.strip()))
    return out


def bounded_number(
    raw: str, option: str, text: str, what: str, low: float | None = None,
    high: float | None = None, expected: str = "", unit: str = "",
) -> float:  # fmt: skip
    """A finite number within [low, high], or an error naming `what`, its bounds (in `unit`,
    when given) and (when given) the `expected` form."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (low is not None and value < low):
        hint = f" (expected {expected})" if expected else ""
        raise bad(option, text, f"{what}={raw!r} is not a {_bounds(low)}number{hint}")
    if high is not None and value > high:
        raise bad(option, text, f"{what}={raw}: at most {high:,.0f}{unit}")
    return value


def _bounds(low: float | None) -> str:
    return "non-negative " if low == 0 else ""
