"""Free-text kinds: open answers, classification labels, reports and boxes for detection.

- ``open``: the answer text, with containers ("Answer: …", ``\\boxed{}``, JSON) unwrapped and
  pure disclaimer sentences dropped.
- ``classify``: one label from ``item.options`` values (or ``meta["labels"]``, "|"-separated),
  by exact match, else by a single non-negated mention; two labels → ``unparsed``.
- ``report``: the report text as written (its final full stop kept), disclaimer sentences dropped.
- ``detect``: boxes ``[x1, y1, x2, y2]`` (or ``(x1, y1), (x2, y2)``) as JSON text in the item's
  declared frame (``meta["box_format"]``: ``pixel``, the default, or ``normalized`` 0–1).
  Coordinates clearly in the other frame (a "pixel" box with every value ≤ 1, a "normalized"
  box with a value > 1) are converted with ``meta["image_width"]``/``["image_height"]``; without
  the image size such a box is ``unparsed``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from medlens.core.items import Box
from medlens.extract.choice import extract_choice
from medlens.extract.containers import (
    container_levels,
    normalize_output,
    sentences,
    without_reasoning,
)
from medlens.extract.extraction import Extraction
from medlens.extract.mentions import find_mentions, positive_letters
from medlens.extract.refusal import is_refusal

_TRAILING = re.compile(r"[\s.。!！]+$")


def extract_open(text: str) -> Extraction:
    """The answer text of an open question."""
    cleaned = normalize_output(text)
    if not cleaned:
        return Extraction(None, "empty", "empty")
    for level in container_levels(cleaned):
        for span in reversed(level):
            answer = _TRAILING.sub("", span.text.strip())
            if answer:
                return Extraction(answer, "ok", span.method)
    return _free_text(cleaned, "free_text")


def extract_report(text: str) -> Extraction:
    """A generated report: the text as written, without disclaimer sentences (report metrics
    compare it with the reference normalised alike: ``scoring.report_text``)."""
    cleaned = without_reasoning(text)
    if not cleaned:
        return Extraction(None, "empty", "empty")
    return _free_text(cleaned, "report_text", keep_end=True)


def _free_text(cleaned: str, method: str, *, keep_end: bool = False) -> Extraction:
    def end(text: str) -> str:
        return text.strip() if keep_end else _TRAILING.sub("", text)

    if not is_refusal(cleaned):
        return Extraction(end(cleaned), "ok", method)
    kept = [part for part in sentences(cleaned) if not is_refusal(part)]
    if not kept:
        return Extraction(None, "refused", "refusal")
    return Extraction(end(" ".join(kept)), "ok", f"{method}:disclaimer_dropped")


def classify_labels(options: Mapping[str, str], meta: Mapping[str, str]) -> list[str]:
    if options:
        return [str(value) for value in options.values()]
    return [label.strip() for label in meta.get("labels", "").split("|") if label.strip()]


def extract_label(options: Mapping[str, str], meta: Mapping[str, str], text: str) -> Extraction:
    """One label of a classification item, or ``unparsed`` when none or several are named."""
    labels = classify_labels(options, meta)
    if options:
        lettered = extract_choice(options, text, multi=False)
        if lettered.status == "ok" and lettered.answer is not None and lettered.answer in options:
            return Extraction(options[lettered.answer], "ok", f"option:{lettered.method}")
    read = extract_open(text)
    if read.answer is None or not labels:
        return read
    by_key = {f"L{i}": label for i, label in enumerate(labels)}
    lowered = read.answer.strip().lower()
    exact = [label for label in labels if label.strip().lower() == lowered]
    if exact:
        return Extraction(exact[0], "ok", "label_exact")
    named = positive_letters(find_mentions(read.answer, by_key))
    if len(named) == 1:
        return Extraction(by_key[named.pop()], "ok", "label_mention")
    if not named and is_refusal(read.answer):
        return Extraction(None, "refused", "refusal")
    return Extraction(None, "unparsed", f"label:{'ambiguous' if named else 'no_label'}")


_NUMBER = r"\s*(-?\d+(?:\.\d+)?)\s*"
_BRACKETED = re.compile(r"[\[(]" + ",".join([_NUMBER] * 4) + r"[\])]")
_POINT_PAIR = re.compile(
    r"\(" + _NUMBER + "," + _NUMBER + r"\)\s*,?\s*(?:to\s*)?\(" + _NUMBER + "," + _NUMBER + r"\)"
)


def parse_boxes(text: str) -> list[Box]:
    """Every ``[x1, y1, x2, y2]`` / ``(x1, y1, x2, y2)`` / ``(x1, y1), (x2, y2)`` box, in order."""
    found = [(m.start(), m.groups()) for m in _BRACKETED.finditer(text)]
    found += [(m.start(), m.groups()) for m in _POINT_PAIR.finditer(text)]
    boxes = []
    for _, values in sorted(found):
        x1, y1, x2, y2 = (float(v) for v in values)
        boxes.append((min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)))
    return boxes


def extract_boxes(meta: Mapping[str, str], text: str) -> Extraction:
    """Boxes as JSON text (``[[x1, y1, x2, y2], …]``) in the item's declared frame."""
    cleaned = normalize_output(text)
    if not cleaned:
        return Extraction(None, "empty", "empty")
    boxes = parse_boxes(cleaned)
    if not boxes:
        if is_refusal(cleaned):
            return Extraction(None, "refused", "refusal")
        return Extraction(None, "unparsed", "no_box")
    converted = to_declared_frame(boxes, meta)
    if converted is None:
        return Extraction(None, "unparsed", "box:frame_unknown")
    method = "box" if converted == boxes else "box:converted"
    return Extraction(boxes_to_text(converted), "ok", method)


def to_declared_frame(boxes: list[Box], meta: Mapping[str, str]) -> list[Box] | None:
    """Boxes in the item's frame; None when they are in the other frame and the size is unknown."""
    normalized = meta.get("box_format", "pixel") == "normalized"
    values = [v for box in boxes for v in box]
    in_other_frame = max(values) > 1.0 if normalized else max(values) <= 1.0
    if not in_other_frame:
        return boxes
    try:
        width, height = float(meta["image_width"]), float(meta["image_height"])
    except (KeyError, ValueError):
        return None
    sx, sy = (1 / width, 1 / height) if normalized else (width, height)
    return [(x1 * sx, y1 * sy, x2 * sx, y2 * sy) for x1, y1, x2, y2 in boxes]


def boxes_to_text(boxes: list[Box]) -> str:
    return json.dumps([[round(v, 6) for v in box] for box in boxes])


def boxes_from_text(answer: str) -> list[Box]:
    """Inverse of :func:`boxes_to_text` (also accepts any text :func:`parse_boxes` reads)."""
    try:
        data = json.loads(answer)
        return [(float(b[0]), float(b[1]), float(b[2]), float(b[3])) for b in data]
    except (ValueError, TypeError, IndexError, KeyError):
        return parse_boxes(answer)
