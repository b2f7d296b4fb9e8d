"""MMBU (ECCV 2026) perception benchmark: the public ImageFolder release or a TSV variant.

``mmbu:DIR`` reads the public release when DIR holds ``metadata.jsonl`` (Hugging Face card
``ryandcunha/mmbu``), else every ``.tsv`` in DIR; ``mmbu:FILE.tsv`` / ``mmbu:FILE.jsonl`` one
file. Where each field name comes from:

- the dataset card (``ryandcunha/mmbu``, read through the search tool): the release is laid out
  for the Hugging Face *ImageFolder* loader; ``metadata.jsonl`` holds one example per line, its
  ``file_name`` points to the image file (relative to the folder, as ImageFolder requires), and
  a duplicate ``image_path`` keeps the original source-relative path (``images/classification/…``,
  ``images/detection/…``, ``images/segmentation/…``); repeated ``image_path`` values are expected
  because several questions share an image. medlens opens ``file_name`` and clusters on
  ``image_path``.
- the card excerpt shows no other field names, so the remaining ones are those of the TSV
  variant this loader read before the release (its paper's layout), with aliases:
  ``index`` (or ``id``), ``question``, ``answer``, ``task`` (``classification`` |
  ``mask_classification`` | ``box_classification`` | ``detection``, → ``granularity``
  image / mask / box / box), the context template in ``template`` or ``question_type``
  (No Context / Modality / Full Context → ``none`` / ``modality`` / ``full`` on the
  ``template`` axis; other values are kept as written), options in ``options`` (list or
  object) or ``A`` … ``E`` columns (closed form; none for the open form →
  ``answer_type`` closed / open), ``dataset`` → ``source``, ``modality``, ``width``/``height``,
  and an optional ``sample_id`` tying the closed and open forms of one sample (else the image,
  task, template and gold label tie them; see ``mmbu_results``).
- detection: the open form's ``answer`` is ``[x1, y1, x2, y2]`` or a list of boxes (→ ``detect``
  items, multi-box F1 at IoU ≥ 0.5); the closed form's options are candidate boxes (→ ``choice``
  items, chance 1/k), its answer a letter or one of the candidate boxes.
- the official layouts (``mmbu_official``): the inference TSV (``class_label`` the gold, the task
  from the file name or a ``task`` column, options in one ``options`` cell, kept as written in
  ``meta["options_text"]`` for ``--prompt mmbu``), and the public split (``file_name``,
  ``unique_id``, ``VQA_type``, ``metadata_*``; its ``options`` are the judge's label set, kept
  as ``meta["label_set"]`` and never sent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Box, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.mmbu_names import image_root, released_files
from medlens.sources.mmbu_official import gold_text, options_cell, task_and_form

SPLITS = ("test",)
TEMPLATES = ("none", "modality", "full", "all")
MODES = ("closed", "open", "all")
GRANULARITY = {
    "classification": "image",
    "mask_classification": "mask",
    "box_classification": "box",
    "detection": "box",
}
TEMPLATE_NAMES = {
    "none": "none", "no context": "none", "no_context": "none", "nocontext": "none",
    "modality": "modality", "modality context": "modality", "modality_context": "modality",
    "full": "full", "full context": "full", "full_context": "full", "fullcontext": "full",
}  # fmt: skip
"""The paper's three context templates (No Context / Modality / Full Context), as written."""
METADATA = "metadata.jsonl"


def load_mmbu(spec: Spec) -> Benchmark:
    """``mmbu:DIR|FILE[?template=none|modality|full|all&mode=closed|open|all]``."""
    root = native.open_spec(spec, {"template", "mode"}, want="any")
    template = native.choose_option(spec, "template", TEMPLATES, "all")
    mode = native.choose_option(spec, "mode", MODES, "all")
    files = _files(root)

    def iter_items() -> Iterator[Item]:
        for path in files:
            prefix = f"{path.stem}-" if len(files) > 1 else ""
            rows = (
                native.read_jsonl(path)
                if path.suffix == ".jsonl"
                else native.read_table(path, "\t")
            )
            for where, record in rows:
                item = _item(record, path, where, prefix)
                if template != "all" and item.meta.get("template") != template:
                    continue
                if mode == "all" or item.meta.get("answer_type") == mode:
                    yield item

    layout = "ImageFolder metadata.jsonl" if files[0].name == METADATA else "TSV"
    return native.make_benchmark(
        spec, "test", iter_items, description=f"MMBU {layout} (template {template}, mode {mode})"
    )


def _files(root: Path) -> list[Path]:
    """The public release's metadata.jsonl, a released data root's task TSVs (``final_cls/``
    …, ``mmbu_names``), else the TSV / JSONL files directly in the folder."""
    if root.is_dir() and (root / METADATA).is_file():
        return [root / METADATA]
    if root.is_dir() and not any(p.suffix in (".tsv", ".jsonl") for p in root.iterdir()):
        released = released_files(root)
        if released is not None:
            return released
    return native.data_files(root, (".tsv", ".jsonl"))


def _item(record: native.Record, path: Path, where: str, prefix: str) -> Item:
    written, task, form = task_and_form(record, path, where)
    if task not in GRANULARITY:
        problem = f"{written!r} is not one of {', '.join(GRANULARITY)} or an official task name"
        raise InputError(path, f"{where}, field 'task'", problem)
    image_key = "file_name" if "file_name" in record else "image_path"
    image_path = native.text(record, image_key, path, where)
    cluster = native.optional_text(record, "image_path") or image_path
    options = _options(record, path, where, form)
    id_key, _ = native.pick(record, ("index", "id", "unique_id"))
    meta = _meta(record, task, cluster, closed=bool(options))
    if written != task:
        meta["official_task"] = written
    if options and isinstance(record.get("options"), str) and record["options"].strip():
        meta["options_text"] = record["options"].strip()
    elif not options and native.optional_text(record, "options"):
        meta["label_set"] = str(record["options"]).strip()  # the judge's, never sent
    common: dict[str, Any] = {
        "id": prefix + native.text(record, id_key, path, where),
        "question": native.text(record, "question", path, where),
        "images": (native.file_image(image_root(path), image_path, path, where),),
        "meta": meta,
    }
    answer = gold_text(record, path, where)
    if task == "detection" and options:
        letter = _box_letter(options, answer, path, where)
        return Item(kind="choice", options=options, answer=letter, **common)
    if task == "detection":
        boxes = parse_boxes(answer, path, where)
        normalized = all(v <= 1.0 for box in boxes for v in box)
        common["meta"].setdefault("box_format", "normalized" if normalized else "pixel")
        return Item(kind="detect", answer=boxes, **common)
    if options:
        letter = native.letter_of(options, answer, path, where)
        return Item(kind="choice", options=options, answer=letter, **common)
    return Item(kind="open", answer=answer, **common)


def _options(record: native.Record, path: Path, where: str, form: str | None) -> dict[str, str]:
    """Letter columns, else the official ``options`` cell (rows with a ``class_label``), else
    an ``options`` list; none for the open form (the public split's are the judge's)."""
    if form == "open":
        return {}
    lettered = native.options_from({**record, "options": None}, path, where)
    if lettered:
        return lettered
    if "class_label" in record:
        return options_cell(record, path, where)
    return native.options_from(record, path, where)


def _meta(record: native.Record, task: str, cluster: str, closed: bool) -> dict[str, str]:
    """Native fields plus the canonical axes they map onto."""
    skip = ("question", "answer", "class_label", "options", *native.LETTERS[:10])
    meta = native.native_meta(record, skip=skip)
    meta.update(
        task=task,
        granularity=GRANULARITY[task],
        answer_type="closed" if closed else "open",
        split="test",
        image_id=cluster,
    )
    renames = {"dataset": "source", "width": "image_width", "height": "image_height",
               "metadata_modality": "modality"}  # fmt: skip
    meta.update(
        {axis: meta[name] for name, axis in renames.items() if name in meta and axis not in meta}
    )
    template = meta.get("template", meta.get("question_type"))
    if template is not None:
        meta["template"] = TEMPLATE_NAMES.get(" ".join(template.lower().split()), template)
    return meta


def _box_letter(options: dict[str, str], answer: str, path: Path, where: str) -> str:
    """Closed detection: the letter of the gold box among the candidate boxes."""
    if answer.strip() in options:
        return answer.strip()
    wanted = parse_boxes(answer, path, where)
    for letter, option in options.items():
        if parse_boxes(option, path, f"{where}, option {letter}") == wanted:
            return letter
    raise InputError(path, f"{where}, field 'answer'", f"{answer!r} is none of the candidate boxes")


def parse_boxes(text: str, path: Path, where: str) -> tuple[Box, ...]:
    """``[x1, y1, x2, y2]`` or ``[[x1, y1, x2, y2], …]`` → boxes."""
    field = where if ", option " in where else f"{where}, field 'answer'"
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise InputError(path, field, "boxes must be JSON lists") from None
    if not isinstance(value, list) or not value:
        raise InputError(path, field, "expected [x1, y1, x2, y2] or a list of them")
    rows = value if isinstance(value[0], list) else [value]
    boxes: list[Box] = []
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 4
            and all(isinstance(v, (int, float)) for v in row)
        ):
            raise InputError(path, field, f"{row!r} is not [x1, y1, x2, y2]")
        x1, y1, x2, y2 = (float(v) for v in row)
        boxes.append((x1, y1, x2, y2))
    return tuple(boxes)


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
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
