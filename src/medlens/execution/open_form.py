"""The MCQ → open rewrite MMBU describes (``run --rewrite open|both``).

MMBU asks each perception question in two forms: closed (the question and its options) and
open (the same question, bare: "Do not send options or answer", its public split card says;
the options become the label set only the judge sees). medlens makes that open form from any
benchmark's single-answer choice items:

- the open item keeps the question and the images, drops the options; its gold answer is the
  text of the correct option; ``meta["label_set"]`` keeps the option texts (as MMBU's public
  split keeps them for its judge; never sent), ``meta["rewritten_from"] = "choice"``; its id is
  ``ID~open``;
- ``both`` keeps the closed item beside it, both tied by ``meta["sample_id"] = ID``, so the
  closed − open Δ is paired per sample (``scoring.closed_open``), as MMBU's is;
- items of other kinds (multi-answer, yes/no, open) are kept as they are.

The rewrite is recorded in the spec (``rewrite``); the benchmark's fingerprint stays that of
the items as loaded, and a rewritten run is never comparable with a published table of the
closed form. Open answers are read by the rules (exact and contained match) until a judge
scores them (``medlens judge RUN --protocol mmbu`` or ``equivalence``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from medlens.core.errors import SpecError
from medlens.core.items import Item

REWRITES = ("open", "both")
SUFFIX = "~open"


def check_rewrite(rewrite: str | None) -> None:
    if rewrite is not None and rewrite not in REWRITES:
        raise SpecError(f"--rewrite {rewrite!r}: expected open (each MCQ asked open) or both "
                        "(closed and open forms, paired)")  # fmt: skip


def rewrite_items(rewrite: str | None, items: Iterable[Item]) -> list[Item]:
    """The items as `rewrite` asks (None: unchanged); refused when no item is single-answer
    multiple choice (nothing to rewrite)."""
    items = list(items)
    if rewrite is None:
        return items
    if not any(item.kind == "choice" for item in items):
        raise SpecError(f"--rewrite {rewrite}: the benchmark has no single-answer choice item")
    out: list[Item] = []
    for item in items:
        if item.kind != "choice" or item.answer not in item.options:
            out.append(item)
            continue
        if rewrite == "both":
            out.append(replace(item, meta={**item.meta, "sample_id": item.id,
                                           "answer_type": "closed"}))  # fmt: skip
        out.append(open_form(item))
    return out


def open_form(item: Item) -> Item:
    """The bare question, the correct option's text as gold, the options as the label set."""
    assert isinstance(item.answer, str)
    meta = {**item.meta, "sample_id": item.id, "answer_type": "open", "rewritten_from": "choice",
            "label_set": "|".join(item.options.values())}  # fmt: skip
    return replace(item, id=item.id + SUFFIX, kind="open", options={},
                   answer=item.options[item.answer], meta=meta)  # fmt: skip
