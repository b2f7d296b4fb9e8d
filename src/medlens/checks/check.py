"""``medlens check``: the integrity checklist of a benchmark, computed in one streaming pass
(owns the checklist's order and its report; the pass is ``tally``, the rows from it
``item_checks``, the others their own modules).

Memory stays bounded whatever the benchmark's size (see ``tally``).

Statuses: ``fail`` (an integrity error: the run's numbers would be wrong), ``warn`` (worth
knowing, e.g. images shared across splits, which the published VQA-RAD and SLAKE splits do),
``info`` (counts). ``--strict`` treats warnings as failures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from medlens.checks.admission import (
    AdmissionFacts,
    admission_check,
    shipped_admission,
    sources_of,
)
from medlens.checks.item_checks import SMALL_N, axis_counts_check, suspicious_variants, tally_checks
from medlens.checks.leakage import _ContentHashes, _leakage_check
from medlens.checks.result import CheckResult
from medlens.checks.tally import MAX_AXIS_VALUES, ItemTally, gold_problem
from medlens.checks.vocabulary import Vocabulary, shipped_vocabulary, vocabulary_check
from medlens.checks.wording import WordingTally
from medlens.core.items import Benchmark
from medlens.core.lexicon import Lexicon

__all__ = [
    "DEFAULT_SAMPLE",
    "MAX_AXIS_VALUES",
    "SMALL_N",
    "CheckReport",
    "gold_problem",
    "run_checks",
    "suspicious_variants",
]

DEFAULT_SAMPLE = 32


@dataclass(frozen=True)
class CheckReport:
    """The whole checklist of one benchmark."""

    spec: str
    split: str
    n_items: int
    checks: tuple[CheckResult, ...]

    def failed(self, strict: bool = False) -> list[str]:
        """Names of the checks that fail (warnings too when ``strict``)."""
        bad = ("fail", "warn") if strict else ("fail",)
        return [check.name for check in self.checks if check.status in bad]

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "split": self.split,
            "n_items": self.n_items,
            "ok": not self.failed(strict),
            "failed": self.failed(strict),
            "checks": [check.to_json() for check in self.checks],
        }


def run_checks(
    benchmark: Benchmark,
    *,
    others: Sequence[Benchmark] = (),
    skipped: Sequence[str] = (),
    sample_size: int = DEFAULT_SAMPLE,
    seed: int = 0,
    on_item: Callable[[], None] | None = None,
    vocabulary: Vocabulary | None = None,
    lexicon: Lexicon | None = None,
    admission: AdmissionFacts | None = None,
) -> CheckReport:
    """Stream the benchmark once and return its checklist; ``others`` are checked for leakage.

    ``skipped`` names other splits that could not be opened (reported, not failed);
    ``on_item`` is called after each item (progress); ``vocabulary`` (default: the one that
    ships for the loader, GMAI-MMBench's) names axis values outside it; ``lexicon`` (default:
    the built-in one) is the wording lexicon of the ``wording`` check; ``admission`` (default:
    the shipped facts) the source admission facts.
    """
    from medlens.checks.protocol import ProtocolTally
    from medlens.checks.readiness import ReadinessTally, readiness_check

    tally = ItemTally(sample_size, seed)
    protocol = ProtocolTally()  # issue 15: patient leakage, gold labels, rare classes
    readiness = ReadinessTally()
    wording = WordingTally(lexicon)
    hashes = _ContentHashes() if others else None
    for item in benchmark.items():
        tally.add(item)
        protocol.add(item)
        readiness.add(item)
        wording.add(item)
        if hashes is not None:
            hashes.add(item)
        if on_item is not None:
            on_item()
    checks = [
        *tally_checks(tally, benchmark.has_answers),
        *(_leakage_check(hashes, other) for other in others if hashes is not None),
        *(
            [CheckResult("leakage", "info", "splits not compared", tuple(skipped))]
            if skipped
            else []
        ),
        axis_counts_check(tally),
        *protocol.checks(others),
        *_reference_checks(benchmark, tally, vocabulary, wording, admission),
    ]
    checks.append(readiness_check(readiness, checks))  # DAIMS items, scored from the data
    return CheckReport(benchmark.spec, benchmark.split, tally.count, tuple(checks))


def _reference_checks(
    benchmark: Benchmark,
    tally: ItemTally,
    vocabulary: Vocabulary | None,
    wording: WordingTally,
    admission: AdmissionFacts | None,
) -> list[CheckResult]:
    """Checks against what medlens knows of the benchmark: GMAI's official files, its axis
    vocabulary, MMBU's wording rules and each source's admission facts, in this order."""
    from medlens.checks.gmai_official import gmai_file_check
    from medlens.checks.published_counts import published_count_check

    checks = []
    official = gmai_file_check(benchmark, tally.axes, tally.count)  # issue 23
    if official is not None:
        checks.append(official)
    published = published_count_check(benchmark, tally.axes, tally.count)  # issue 47
    if published is not None:
        checks.append(published)
    vocabulary = vocabulary or shipped_vocabulary(benchmark.name)
    if vocabulary is not None:
        checks.append(vocabulary_check(tally.axes, vocabulary))
    sources = sources_of(benchmark.name, tally.axes.get("source", {}))
    return [*checks, wording.check(benchmark.name),
            admission_check(sources, admission or shipped_admission())]  # fmt: skip
