"""Questions drafted by a language model from labels, one per label row and dimension.

A *dimension* is the kind of question asked about a label (``identify``: the label is the
answer; ``describe``: a visual property of it; ``reason``: clinical reasoning from it), each with
its prompt template, shipped in ``data/drafting/templates.toml`` and replaceable by
``--draft-templates FILE``. The label, its metadata and the image's other labels go into the
prompt as delimited data. Every reply is read as untrusted: a draft must parse (``question``,
``options``, ``answer`` among the options, options distinct, the right number of them, no other
label of the image as a wrong option, the label itself as answer for ``identify``); a draft that
does not is kept as a row with its problem, rejected unless a reviewer edits it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from medlens.builder.labels import LabelRow
from medlens.builder.model_calls import (
    DATA_NOTE,
    Prompt,
    Reply,
    UnusableReply,
    data_block,
    folded,
    reply_object,
    text_field,
    text_list,
)
from medlens.core.errors import InputError, SpecError
from medlens.core.tomlfile import tomllib

CONTEXT_FIELDS = ("modality", "body_part", "specimen", "stain", "contrast", "source")
REPLY_FORMAT = (
    'Reply with one JSON object and nothing else: {"question": "...", "options": ["...", ...], '
    '"answer": "..."} where answer is the text of the correct option, copied exactly.'
)


@dataclass(frozen=True)
class Template:
    name: str
    group: str
    description: str
    prompt: str
    answer_is_label: bool


@dataclass(frozen=True)
class Templates:
    source: str
    """``built-in`` or the file they came from."""
    by_name: Mapping[str, Template]
    sha256: str
    """Of the templates file's bytes: recorded with each draft."""


def load_templates(path: Path | None = None) -> Templates:
    """The shipped templates, or those of a TOML file of the same layout."""
    if path is None:
        data = resources.files("medlens").joinpath("data/drafting/templates.toml").read_bytes()
        source = "built-in"
    elif not path.is_file():
        raise InputError(path, None, "no such templates file")
    else:
        data, source = path.read_bytes(), str(path)
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(source, None, f"not a TOML templates file ({exc})") from None
    dimensions = parsed.get("dimensions")
    if not isinstance(dimensions, dict) or not dimensions:
        raise InputError(source, "table 'dimensions'", "no [dimensions.NAME] templates")
    by_name = {name: _template(source, name, raw) for name, raw in dimensions.items()}
    return Templates(source, by_name, hashlib.sha256(data).hexdigest())


def _template(source: str, name: str, raw: Any) -> Template:
    where = f"dimensions.{name}"
    if not isinstance(raw, dict):
        raise InputError(source, where, "expected a table")
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError(source, f"{where}, field 'prompt'", "missing or empty")
    answer_is_label = raw.get("answer_is_label", False)
    if not isinstance(answer_is_label, bool):
        raise InputError(source, f"{where}, field 'answer_is_label'", "expected true or false")
    try:
        prompt.format(options=4, options_less_one=3, dimension=name)
    except (KeyError, IndexError, ValueError) as exc:
        problem = f"unknown placeholder or stray brace ({exc}); known: {{options}}, "
        raise InputError(source, f"{where}, field 'prompt'", problem + "{dimension}") from None
    return Template(name, str(raw.get("group", "")), str(raw.get("description", "")),
                    prompt.strip(), answer_is_label)  # fmt: skip


def choose_dimensions(templates: Templates, text: str | None) -> list[Template]:
    """``--dimensions a,b`` (default: every template, in file order)."""
    if text is None or text.strip() == "all":
        return list(templates.by_name.values())
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in templates.by_name:
            known = ", ".join(templates.by_name)
            raise SpecError(f"--dimensions {name!r}: no such template in {templates.source} "
                            f"(known: {known})")  # fmt: skip
    if not names or len(set(names)) != len(names):
        raise SpecError(f"--dimensions {text!r}: name each dimension once")
    return [templates.by_name[n] for n in names]


@dataclass(frozen=True)
class DraftTask:
    """One question to draft: the label row, its dimension, and the stable row id."""

    row_id: str
    row: LabelRow
    template: Template
    other_labels: tuple[str, ...]


def draft_tasks(rows: Sequence[LabelRow], dimensions: Sequence[Template]) -> list[DraftTask]:
    """One task per label row and dimension; row ids ``<row id or row number>:<dimension>``."""
    labels_of: dict[str, list[str]] = {}
    for row in rows:
        labels_of.setdefault(row.image, []).append(row.label)
    tasks = []
    for index, row in enumerate(rows, start=1):
        others = tuple(
            dict.fromkeys(x for x in labels_of[row.image] if folded(x) != folded(row.label))
        )
        for template in dimensions:
            tasks.append(DraftTask(f"{row.id or index}:{template.name}", row, template, others))
    return tasks


def image_blocks(meta: Mapping[str, Any], other_labels: Sequence[str]) -> list[str]:
    """The label's image context and the image's other labels, as delimited data blocks."""
    blocks = []
    context = "; ".join(f"{k}: {meta[k]}" for k in CONTEXT_FIELDS if meta.get(k))
    if context:
        blocks.append("Image context:\n" + data_block("CONTEXT", context))
    if other_labels:
        blocks.append(
            "Other labels of this image:\n" + data_block("OTHER", "; ".join(other_labels))
        )
    return blocks


def draft_prompt(task: DraftTask, options: int) -> Prompt:
    template = task.template
    parts = [template.prompt.format(options=options, options_less_one=options - 1,
                                    dimension=template.name), DATA_NOTE]  # fmt: skip
    parts.append("Label:\n" + data_block("LABEL", task.row.label))
    parts += image_blocks(task.row.meta, task.other_labels)
    parts.append(REPLY_FORMAT)
    return Prompt(task.row_id, "\n\n".join(parts), "draft")


@dataclass(frozen=True)
class Drafted:
    """A checked draft: question, options (in the model's order) and the answer's text."""

    question: str
    options: tuple[str, ...]
    answer: str


def read_draft(task: DraftTask, reply: Reply, options: int) -> Drafted:
    """The draft in a reply, checked; raises UnusableReply saying what is wrong."""
    if reply.error is not None:
        raise UnusableReply(f"no reply ({reply.error})")
    value = reply_object(reply.text)
    question, texts, answer = (text_field(value, "question"), text_list(value, "options"),
                               text_field(value, "answer"))  # fmt: skip
    if len(texts) != options:
        raise UnusableReply(f"{len(texts)} options, expected {options}")
    if len({folded(t) for t in texts}) != len(texts):
        raise UnusableReply("two options are the same text")
    matching = [t for t in texts if folded(t) == folded(answer)]
    if not matching:
        raise UnusableReply(f"the answer {answer!r} is not one of the options")
    if task.template.answer_is_label and folded(answer) != folded(task.row.label):
        raise UnusableReply(f"the answer {answer!r} is not the label {task.row.label!r}")
    for text in texts:
        if text != matching[0] and folded(text) in {folded(o) for o in task.other_labels}:
            raise UnusableReply(f"the wrong option {text!r} is another label of this image")
    return Drafted(question, tuple(texts), matching[0])
