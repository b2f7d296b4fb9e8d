"""MMBU (ECCV 2026) perception benchmark: TSV files with an ``image_path`` column.

The public release is not available here, so this reads the layout its paper describes, with
these columns (every other column is kept as a native axis — MMBU has 13 metadata fields):

- ``index`` — item id (prefixed with the file name when a folder holds several TSVs);
- ``image_path`` — image file relative to the TSV's folder;
- ``question``, ``answer``;
- ``task`` — ``classification`` | ``mask_classification`` | ``box_classification`` |
  ``detection`` (→ ``granularity`` image / mask / box / box);
- ``question_type`` — ``basic`` | ``expert`` | ``full`` context template (→ ``template``);
- ``A`` … ``E`` — options of the closed variant; empty for the open variant, whose answer is the
  label text (``answer_type`` closed / open);
- ``dataset`` → ``source``; ``modality``;
- detection: ``answer`` is ``[x1, y1, x2, y2]`` or a list of such boxes, pixels unless every
  coordinate is ≤ 1 (or a ``box_format`` column says so); ``width``/``height`` when known.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.errors import InputError
from medlens.items import Benchmark, Box, Item
from medlens.sources import native
from medlens.specs import Spec

SPLITS = ("test",)
TEMPLATES = ("basic", "expert", "full", "all")
MODES = ("closed", "open", "all")
GRANULARITY = {
    "classification": "image",
    "mask_classification": "mask",
    "box_classification": "box",
    "detection": "box",
}


def load_mmbu(spec: Spec) -> Benchmark:
    """``mmbu:DIR|FILE.tsv[?template=basic|expert|full|all&mode=closed|open|all]``."""
    root = native.open_spec(spec, {"template", "mode"}, want="any")
    template = native.choose_option(spec, "template", TEMPLATES, "all")
    mode = native.choose_option(spec, "mode", MODES, "all")
    files = native.data_files(root, (".tsv",))

    def iter_items() -> Iterator[Item]:
        for path in files:
            prefix = f"{path.stem}-" if len(files) > 1 else ""
            for where, record in native.read_table(path, "\t"):
                if template != "all" and record.get("question_type", "").strip() != template:
                    continue
                item = _item(record, path, where, prefix)
                if mode == "all" or item.meta.get("answer_type") == mode:
                    yield item

    return native.make_benchmark(
        spec, "test", iter_items, description=f"MMBU (template {template}, mode {mode})"
    )


def _item(record: native.Record, path: Path, where: str, prefix: str) -> Item:
    task = native.text(record, "task", path, where).lower()
    if task not in GRANULARITY:
        problem = f"{task!r} is not one of {', '.join(GRANULARITY)}"
        raise InputError(path, f"{where}, field 'task'", problem)
    image_path = native.text(record, "image_path", path, where)
    options = native.options_from(record, path, where)
    common: dict[str, Any] = {
        "id": prefix + native.text(record, "index", path, where),
        "question": native.text(record, "question", path, where),
        "images": (native.file_image(path.parent, image_path, path, where),),
        "meta": _meta(record, task, image_path, closed=bool(options)),
    }
    answer = native.text(record, "answer", path, where)
    if task == "detection":
        boxes = parse_boxes(answer, path, where)
        normalized = all(v <= 1.0 for box in boxes for v in box)
        common["meta"].setdefault("box_format", "normalized" if normalized else "pixel")
        return Item(kind="detect", answer=boxes, **common)
    if options:
        letter = native.letter_of(options, answer, path, where)
        return Item(kind="choice", options=options, answer=letter, **common)
    return Item(kind="open", answer=answer, **common)


def _meta(record: native.Record, task: str, image_path: str, closed: bool) -> dict[str, str]:
    """Native columns plus the canonical axes they map onto."""
    meta = native.native_meta(record, skip=("question", "answer", *native.LETTERS[:10]))
    meta.update(
        task=task,
        granularity=GRANULARITY[task],
        answer_type="closed" if closed else "open",
        split="test",
        image_id=image_path,
    )
    renames = {"question_type": "template", "dataset": "source", "width": "image_width",
               "height": "image_height"}  # fmt: skip
    meta.update(
        {axis: meta[native_name] for native_name, axis in renames.items() if native_name in meta}
    )
    return meta


def parse_boxes(text: str, path: Path, where: str) -> tuple[Box, ...]:
    """``[x1, y1, x2, y2]`` or ``[[x1, y1, x2, y2], …]`` → boxes."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise InputError(path, f"{where}, field 'answer'", "boxes must be JSON lists") from None
    if not isinstance(value, list) or not value:
        raise InputError(
            path, f"{where}, field 'answer'", "expected [x1, y1, x2, y2] or a list of them"
        )
    rows = value if isinstance(value[0], list) else [value]
    boxes: list[Box] = []
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 4
            and all(isinstance(v, (int, float)) for v in row)
        ):
            raise InputError(path, f"{where}, field 'answer'", f"{row!r} is not [x1, y1, x2, y2]")
        x1, y1, x2, y2 = (float(v) for v in row)
        boxes.append((x1, y1, x2, y2))
    return tuple(boxes)


# Licence, access and citation of this source (read by medlens.cards; see docs/design.md).
CARD = {
    "licence": "not stated in any source medlens could cite; assume the licences of its 410 source datasets",
    "access": "mixed",
    "homepage": "https://arxiv.org/abs/2606.06696",
    "access_note": "MMBU is assembled from 410 source datasets; check each source's licence before redistributing images",
    "citation": """@misc{mmbu2026,
  title = {MMBU: A Massive Multi-modal Biomedical Understanding Benchmark to Probe the Perception Capabilities of Vision-Language Models},
  year = {2026},
  eprint = {2606.06696},
  archivePrefix = {arXiv},
  primaryClass = {cs.CV}
}""",
}
