"""Prompt styles: item → chat messages.

``vlmeval`` reproduces VLMEvalKit's MCQ prompt byte for byte; ``medlens`` (the default) adds an
explicit instruction on the answer format, and asks for every correct letter on multi-answer items.
``lmms-eval``, ``evalscope``, ``medevalkit`` and ``multimedeval`` send what those tools send for
the datasets they have (``extract.peers``, each citing its source); ``mmbu`` sends what MMBU's
official code sends (``mmbu_prompt``; its images are padded to 512 px by the request builder);
``file:PATH`` sends a user's template (``execution.prompt_files``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from medlens.core.errors import SpecError
from medlens.core.items import Item

if TYPE_CHECKING:
    from medlens.execution.prompt_files import PromptTemplate

PromptStyle = Literal[
    "medlens", "vlmeval", "lmms-eval", "evalscope", "medevalkit", "multimedeval", "mmbu"
]
PROMPT_STYLES: tuple[str, ...] = (
    "medlens", "vlmeval", "lmms-eval", "evalscope", "medevalkit", "multimedeval", "mmbu",
)  # fmt: skip

VLMEVAL_MCQ_TAIL = "Please select the correct answer from the options above. \n"


def build_prompt(item: Item, style: str, template: PromptTemplate | None = None) -> str:
    """The text part of the user message for `item` in the given style (``file:…``: the user's
    `template`, ``execution.prompt_files``)."""
    if template is not None:
        return template.render(item)
    if style == "vlmeval":
        return vlmeval_prompt(item)
    if style == "medlens":
        return medlens_prompt(item)
    if style == "mmbu":
        return mmbu_prompt(item)
    if style in PROMPT_STYLES:
        from medlens.extract.peers import peer_prompt

        return peer_prompt(item, style)
    raise SpecError(f"unknown prompt style {style!r} (known: {', '.join(PROMPT_STYLES)})")


VLMEVAL_YORN_THREE_WAY_TAIL = "\nPlease answer yes, no or maybe."


def vlmeval_prompt(item: Item) -> str:
    """VLMEvalKit's ImageMCQDataset prompt: hint, question, options, then a fixed request.

    Yes/no items without lettered options get its ImageYORNDataset prompt instead: the bare
    question (VLMEvalKit adds nothing for MME, POPE or HallusionBench; only AMBER appends
    "Please answer yes or no."). VLMEvalKit has no yes/no/maybe dataset: for PubMedQA medlens
    keeps the abstract as a ``Hint:`` line and appends AMBER's request extended to "maybe" —
    an adaptation, since the bare question would never let a model say "maybe".
    """
    if item.kind == "yes_no" and not item.options:
        return vlmeval_yes_no_prompt(item)
    text = f"Hint: {item.context}\n" if item.context else ""
    text += f"Question: {item.question}\n"
    if item.options:
        text += "Options:\n" + "".join(f"{key}. {value}\n" for key, value in item.options.items())
        text += VLMEVAL_MCQ_TAIL
    return text


def vlmeval_yes_no_prompt(item: Item) -> str:
    """ImageYORNDataset's text part (the bare question); three-way items: see above."""
    if item.meta.get("answer_set") != "yes/no/maybe":
        return item.question
    hint = f"Hint: {item.context}\n" if item.context else ""
    return hint + item.question + VLMEVAL_YORN_THREE_WAY_TAIL


PROMPT_VERSIONS = {"medlens": 2}
"""Versions of medlens's own prompt texts, shown on the protocol card. 2: the answer
instructions no longer end with a concrete example answer ("for example: Answer: B"), which
anchors weak models on that letter or word; peers' prompts are theirs (version 1)."""


def prompt_version(style: str) -> int:
    return PROMPT_VERSIONS.get(style, 1)


def medlens_prompt(item: Item) -> str:
    """Context, question and options, then an explicit answer-format instruction per item kind."""
    parts = [f"Context: {item.context}"] if item.context else []
    parts.append(f"Question: {item.question}")
    if item.options:
        parts.append("Options:\n" + "\n".join(f"{k}. {v}" for k, v in item.options.items()))
    parts.append(answer_instruction(item))
    return "\n".join(parts) + "\n"


def answer_instruction(item: Item) -> str:
    """The sentence telling the model how to write its answer."""
    if item.kind == "choice":
        return "Answer with the letter of the single correct option."
    if item.kind == "multi_choice":
        return (
            "One or more options may be correct. Answer with the letters of every correct option, "
            "separated by commas."
        )
    if item.kind == "yes_no":
        if item.meta.get("answer_set") == "yes/no/maybe":
            return "Answer with yes, no or maybe."
        return "Answer with yes or no."
    if item.kind == "classify":
        labels = item.meta.get("labels", "").replace("|", ", ")
        return (
            f"Answer with exactly one of these labels: {labels}."
            if labels
            else "Answer with the label."
        )
    if item.kind == "detect":
        return "Answer with the bounding box as [x1, y1, x2, y2]" + (
            " in coordinates normalised to 0-1."
            if item.meta.get("box_format") == "normalized"
            else " in pixels."
        )
    if item.kind == "report":
        if item.meta.get("answer_format") == "long":
            return "Answer the question in full, as you would to the person asking."
        return "Write the report."
    return "Answer concisely, in a few words."


def mmbu_prompt(item: Item) -> str:
    """MMBU's official inference text (dcunhrya/MMBU-vlm-eval ``src/vqa_dataset.py``, snapshot
    3aab73e): the bare question for open tasks; for closed tasks the question, ``" Options: "``
    and the options as the TSV's ``options`` cell holds them (``meta["options_text"]``), else
    ``A. text`` joined by spaces."""
    if not item.options:
        return item.question
    written = item.meta.get("options_text") or " ".join(
        f"{key}. {text}" for key, text in item.options.items()
    )
    return f"{item.question} Options: {written}"
