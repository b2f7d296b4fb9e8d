"""GMAI-MMBench and other VLMEvalKit MCQ TSVs (base64 images), streamed row by row.

The file is never held in memory: :class:`~medlens.sources.tsv_scan.TsvScanner` walks it once
per ``items()`` call and every image becomes an ``ImageRef(source="tsv")`` byte range that is
decoded only when a request is built. Behaviour follows VLMEvalKit (see VLMEVAL_COMPAT.md):

- an image cell of at most 64 characters is the ``index`` of the row whose image it reuses
  (one level, the target must hold an image; forward references are allowed and such a row is
  yielded right after the row it refers to);
- an empty image cell is kept as an item whose image fails to decode (the runner records it as
  that item's error) rather than dropped silently as VLMEvalKit does;
- options are the single-letter columns ``A``..``Z`` whose cell is non-empty and not ``nan``;
- no ``answer`` column means the TEST split: ``answer=None`` and ``has_answers=False``;
- a ``question_type`` column marks single- and multi-answer items (GMAI: ``*`` single,
  ``#`` multi; the words ``single``/``multi`` are read too). The marker decides the kind on VAL
  and TEST alike, so both splits run one protocol; a single-marked item whose gold names two
  letters is an input error. Without markers the kind comes from the gold letters (VAL), and
  on TEST every item is single-choice; the report says which (``protocol_results``) and that
  unmarked TEST multi-answer items cannot be told apart.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item, ItemKind
from medlens.core.specs import Spec, check_options
from medlens.sources.tsv_scan import Row, TsvScanner
from medlens.sources.vlmeval_layout import (
    TsvLayout,
    _marked_kind,
    answer_mode,
    normalise_granularity,
    parse_gold,
)

REFERENCE_MAX_CHARS = 64
"""VLMEvalKit: an image cell this short is another row's index, not an image."""

_AXIS_BY_HEADER = {
    "clinicalvqatask": "task",
    "department": "department",
    "perceptualgranularity": "granularity",
    "modality": "modality",
    "source": "source",
    "dataset": "source",
    "sourcedataset": "source",
}
"""Normalised native header → canonical axis in ``Item.meta``."""

_ROLE_HEADERS = {"index", "question", "image", "answer", "hint"}
_MISSING_VALUES = {"", "nan"}


def normalise_header(name: str) -> str:
    """Header key for matching: lower case, without whitespace, ``-`` or ``_``."""
    return re.sub(r"[\s_\-]+", "", name).lower()


def load_gmai(spec: Spec, *, lenient: bool = False) -> Benchmark:
    """Open a GMAI-MMBench TSV (``gmai:PATH.tsv[?split=NAME]``), or a folder holding the 11
    official TEST parts (``gmai:DIR``), read in part order as VLMEvalKit concatenates them.

    `lenient` keeps rows with a duplicate index or a gold answer not among the options (as
    written) instead of raising, for ``medlens check`` to list them all.
    """
    return _load(spec, "GMAI-MMBench", lenient)


def load_vlmeval(spec: Spec, *, lenient: bool = False) -> Benchmark:
    """Open any VLMEvalKit MCQ TSV (``vlmeval:PATH.tsv[?split=NAME]``); `lenient` as for gmai."""
    return _load(spec, "VLMEvalKit MCQ", lenient)


def _load(spec: Spec, family: str, lenient: bool = False) -> Benchmark:
    check_options(spec, {"split"})
    path = os.path.abspath(os.path.expanduser(spec.argument))
    if spec.argument and family == "GMAI-MMBench" and os.path.isdir(path):
        return _load_test_parts(spec, path, lenient)
    if not spec.argument or not os.path.isfile(path):
        raise InputError(spec.argument or "(no path)", None, "no such TSV file")
    layout = read_layout(path)
    has_answers = layout.answer is not None
    split = spec.option("split") or ("val" if has_answers else "test")
    return Benchmark(
        name=spec.name,
        spec=spec.canonical(),
        source=spec,
        split=split,
        has_answers=has_answers,
        iter_items=lambda: iter_tsv_items(layout, split, lenient=lenient),
        description=f"{family} {os.path.basename(path)} ({split})",
    )


def _load_test_parts(spec: Spec, folder: str, lenient: bool) -> Benchmark:
    """The TEST split from its 11 part files (each part's image references resolve within it)."""
    from pathlib import Path

    from medlens.sources.gmai_files import test_parts

    layouts = [read_layout(str(part)) for part in test_parts(Path(folder))]
    split = spec.option("split") or "test"

    def iter_items() -> Iterator[Item]:
        for layout in layouts:
            yield from iter_tsv_items(layout, split, lenient=lenient)

    return Benchmark(
        name=spec.name,
        spec=spec.canonical(),
        source=spec,
        split=split,
        has_answers=all(layout.answer is not None for layout in layouts),
        iter_items=iter_items,
        description=f"GMAI-MMBench TEST, 11 parts in {os.path.basename(folder)} ({split})",
    )


def read_layout(path: str) -> TsvLayout:
    """Read and check the header; also check that at least one data row follows it."""
    with TsvScanner(path) as scanner:
        header = scanner.read_row()
        if header is None:
            raise InputError(path, None, "empty file: no header row")
        names = tuple(
            _decode(path, "header", f"column {i + 1}", value, header.offset(i))
            for i, value in enumerate(header.values)
        )
        layout = _layout_from_names(path, names)
        scanner.names = names
        if scanner.read_row(span=layout.image) is None:
            raise InputError(path, "row 1", "header only: the file has no data rows")
    return layout


def _layout_from_names(path: str, names: Sequence[str]) -> TsvLayout:
    columns: dict[str, int] = {}
    for number, name in enumerate(names):
        key = normalise_header(name)
        if key in columns:
            first = names[columns[key]]
            raise InputError(path, "header", f"columns {first!r} and {name!r} are the same column")
        columns[key] = number
    for required in ("index", "question", "image"):
        if required not in columns:
            raise InputError(path, "header", f"missing required column {required!r}")
    letters = sorted(n.strip() for n in names if re.fullmatch(r"[A-Z]", n.strip()))
    options = tuple((letter, columns[letter.lower()]) for letter in letters)
    if not options:
        raise InputError(path, "header", "no option columns (A, B, C, …)")
    used = {columns[role] for role in _ROLE_HEADERS if role in columns} | {c for _, c in options}
    native = tuple((names[c], c) for c in range(len(names)) if c not in used)
    axes = tuple((_AXIS_BY_HEADER[k], c) for k, c in columns.items() if k in _AXIS_BY_HEADER)
    return TsvLayout(
        path=path,
        names=tuple(names),
        index=columns["index"],
        question=columns["question"],
        image=columns["image"],
        answer=columns.get("answer"),
        hint=columns.get("hint"),
        options=options,
        meta=native + tuple(axis for axis in axes if axis not in native),
        question_type=columns.get("questiontype"),
    )


RowSpan = tuple[int, int, int, int]
"""(row start, row end, image cell offset, image cell length), absolute byte offsets."""


def iter_tsv_items(
    layout: TsvLayout,
    split: str,
    *,
    lenient: bool = False,
    spans: dict[str, RowSpan] | None = None,
) -> Iterator[Item]:
    """Stream the items of a TSV in file order (a forward reference waits for its target).

    `spans` (``medlens subset``, which copies rows byte for byte) receives each row's byte span.
    """
    # every index seen → the image its row owns (None for a row that references another)
    owners: dict[str, ImageRef | None] = {}
    waiting: dict[str, list[tuple[int, Item]]] = {}
    with TsvScanner(layout.path) as scanner:
        scanner.names = layout.names
        scanner.read_row()
        while (cells := scanner.read_row(span=layout.image)) is not None:
            row = scanner.rows_read - 1
            item, reference = _row_to_item(layout, row, cells, split, lenient)
            if item.id in owners and not lenient:
                raise InputError(
                    layout.path, f"row {row}, field 'index'", f"duplicate index {item.id!r}"
                )
            owners[item.id] = item.images[0] if reference is None and item.images else None
            if spans is not None:
                column = layout.image
                spans[item.id] = (
                    cells.start, scanner.position, cells.offset(column), cells.lengths[column]
                )  # fmt: skip
            if reference is None:
                yield item
            elif reference in owners:
                yield _with_image(layout, row, item, reference, owners)
            else:
                waiting.setdefault(reference, []).append((row, item))
            for waiting_row, waiter in waiting.pop(item.id, ()):
                yield _with_image(layout, waiting_row, waiter, item.id, owners)
    if waiting:
        target, rows = min(waiting.items(), key=lambda pair: pair[1][0][0])
        problem = f"refers to index {target!r}, which no row has"
        raise InputError(layout.path, f"row {rows[0][0]}, field 'image'", problem)


def _with_image(
    layout: TsvLayout, row: int, item: Item, target: str, owners: dict[str, ImageRef | None]
) -> Item:
    """The item with the image of row ``target`` (which must own one)."""
    image = owners[target]
    if image is None:
        problem = f"refers to index {target!r}, whose own image cell is a reference"
        raise InputError(layout.path, f"row {row}, field 'image'", problem)
    return Item(  # not dataclasses.replace: its field walk cost more than the row's decoding
        id=item.id,
        question=item.question,
        kind=item.kind,
        options=item.options,
        answer=item.answer,
        images=(image,),
        context=item.context,
        meta={**item.meta, "image_id": target},
    )


def _row_to_item(
    layout: TsvLayout, row: int, cells: Row, split: str, lenient: bool = False
) -> tuple[Item, str | None]:
    """The item of one row, and the index its image cell refers to (None when it owns one)."""
    if len(cells.values) != len(layout.names):
        _wrong_width(layout, row, len(cells.values))
    texts = _decode_row(layout, row, cells)
    index, question = _required_text(layout, row, texts)
    options = {letter: texts[c] for letter, c in layout.options if not _is_missing(texts[c])}
    kind: ItemKind = "choice"
    answer: str | None = None
    if layout.answer is not None:
        kind, answer = parse_gold(layout, row, texts[layout.answer], options, lenient)
    marked = answer_mode(layout, row, texts)
    if marked is not None:
        kind = _marked_kind(layout, row, marked, answer, lenient)
    hint = texts[layout.hint] if layout.hint is not None else ""
    images, reference = _image_of(layout, cells, index, texts)
    meta = _meta(layout, texts, split)
    if reference is None:
        meta["image_id"] = index
    item = Item(
        id=index,
        question=question,
        kind=kind,
        options=options,
        answer=answer,
        images=images,
        context=None if _is_missing(hint) else hint,
        meta=meta,
    )
    return item, reference


def _required_text(layout: TsvLayout, row: int, texts: list[str]) -> tuple[str, str]:
    """The row's index and question, which must not be empty."""
    index, question = texts[layout.index].strip(), texts[layout.question].strip()
    for column, value in ((layout.index, index), (layout.question, question)):
        if not value:
            raise InputError(
                layout.path, f"row {row}, field {layout.names[column]!r}", "empty cell"
            )
    return index, question


def _image_of(
    layout: TsvLayout, cells: Row, index: str, texts: list[str]
) -> tuple[tuple[ImageRef, ...], str | None]:
    """The image a row owns, or the index of the row whose image it reuses."""
    offset, length = cells.offset(layout.image), cells.lengths[layout.image]
    if length > REFERENCE_MAX_CHARS:
        return (ImageRef("tsv", layout.path, offset, length, name=index),), None
    reference = texts[layout.image].strip()
    if reference:
        return (), reference
    # An empty cell is kept, not dropped: its image fails to decode, so the runner records
    # that item's error and the report shows it.
    return (ImageRef("tsv", layout.path, offset, 0, name=index),), None


def _meta(layout: TsvLayout, texts: list[str], split: str) -> dict[str, str]:
    """Every native metadata column under its own name, plus the canonical axes."""
    meta = {key: value for key, column in layout.meta if (value := texts[column].strip())}
    if "granularity" in meta:
        meta["granularity"] = normalise_granularity(meta["granularity"])
    meta["split"] = split
    return meta


def _is_missing(value: str) -> bool:
    return value.strip().lower() in _MISSING_VALUES


def _wrong_width(layout: TsvLayout, row: int, width: int) -> None:
    expected = len(layout.names)
    if width < expected:
        missing = layout.names[width]
        problem = f"row has {width} fields, the header {expected} (truncated line?)"
        raise InputError(layout.path, f"row {row}, field {missing!r}", problem)
    problem = f"row has {width} fields, the header only {expected} (a stray tab?)"
    raise InputError(layout.path, f"row {row}, field {f'column {expected + 1}'!r}", problem)


def _decode_row(layout: TsvLayout, row: int, cells: Row) -> list[str]:
    """Every cell as text (an image cell, too long to keep, is ``""``)."""
    try:
        return [*map(bytes.decode, cells.values)]  # UTF-8; one C-level loop
    except UnicodeDecodeError:
        for column, value in enumerate(cells.values):
            where, field = f"row {row}", layout.names[column]
            _decode(layout.path, where, field, value, cells.offset(column))
        raise AssertionError("a cell failed to decode, then decoded") from None


def _decode(path: str, where: str, field: str, value: bytes, offset: int) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"bytes that are not UTF-8 at byte {offset + exc.start} of the file"
        raise InputError(path, f"{where}, field {field!r}", problem) from None


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "user data: the licence of the files you supply applies; medlens adds none",
    "access": "mixed",
    "homepage": "https://github.com/open-compass/VLMEvalKit",
    "citation": "",
}

# ``gmai:`` is loaded by this module too; its own card overrides CARD for load_gmai.
GMAI_CARD = {
    "licence": "inherits the licences of its 284 source datasets; no single licence",
    "access": "mixed",
    "homepage": "https://uni-medical.github.io/GMAI-MMBench.github.io/",
    "access_note": "GMAI-MMBench inherits the licences of its 284 source datasets (no single licence); its authors ask that scores from other scripts be labelled 'non-official protocol'",
    "citation": """@inproceedings{chen2024gmaimmbench,
  title = {GMAI-MMBench: A Comprehensive Multimodal Evaluation Benchmark Towards General Medical AI},
  author = {Chen, Pengcheng and Ye, Jin and Wang, Guoan and Li, Yanjun and Deng, Zhongying and Li, Wei and Li, Tianbin and Duan, Haodong and Huang, Ziyan and Su, Yanzhou and Wang, Benyou and Zhang, Shaoting and Fu, Bin and Cai, Jianfei and Zhuang, Bohan and Seibel, Eric J. and He, Junjun and Qiao, Yu},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS) Datasets and Benchmarks Track},
  year = {2024},
  eprint = {2408.03361},
  archivePrefix = {arXiv}
}""",
}
CARDS = {"load_gmai": GMAI_CARD}
