"""Ceilings on the knobs that multiply work, so that a mistyped number is refused in one line
instead of running for hours (``board --resamples 100000000`` ran past 10 minutes at 1 GB)."""

from __future__ import annotations

from medlens.core.errors import SpecError

MIN_RESAMPLES = 100
MAX_RESAMPLES = 100_000
"""Bootstrap resamples: 100,000 puts the Monte-Carlo error of a 95% bound far below its CI."""
MAX_SAMPLES = 64
"""Calls per item (``self-consistency:K``, ``judge --repeats``) allowed without ``--yes``."""
MAX_NGRAM = 32
"""``audit --n``: contamination studies use 8- to 13-grams; longer spans match almost nothing."""


def check_resamples(value: int, flag: str = "--resamples") -> None:
    if value < MIN_RESAMPLES:
        raise SpecError(f"{flag}: {value} is too few (at least {MIN_RESAMPLES})")
    if value > MAX_RESAMPLES:
        raise SpecError(f"{flag} {value}: at most {MAX_RESAMPLES:,} resamples")


def check_calls_per_item(what: str, value: int, confirmed: bool) -> None:
    """`what` asks `value` calls per item: above MAX_SAMPLES only with ``--yes``."""
    if value > MAX_SAMPLES and not confirmed:
        raise SpecError(
            f"{what}: at most {MAX_SAMPLES} calls per item without --yes "
            f"(this multiplies every item's cost by {value:,}); add --yes if you mean it"
        )
