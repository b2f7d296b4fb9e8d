"""Question wording for built items: standard stems, MMBU context templates, and the word lint.

Templates (MMBU's three context levels), recorded as ``meta["template"]``:

- ``none``: the standard question alone;
- ``modality``: the same question after a sentence naming the modality
  ("This is a CT image.");
- ``full``: the sentence filled from every metadata field present among specimen, modality,
  stain, contrast, preparation and body part ("This is a CT image of the abdomen. Contrast:
  portal venous.").

The word lint (:class:`WordingLint`) applies MMBU's wording rules to every question the build
writes, with the built-in lexicon (``core.lexicon``; ``--lexicon FILE`` extends it) and the
``--lint`` words: a question that names its own gold answer, and every disease, outcome,
malignancy or abbreviation term the rules do not allow, become warnings (the first
:data:`SHOWN_WORDING` questions one line each, then a count).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from medlens.builder.skips import Unbuildable
from medlens.core.errors import SpecError
from medlens.core.lexicon import Lexicon, builtin_lexicon, judge_wording

TEMPLATES = ("none", "modality", "full")
FULL_FIELDS = (("specimen", "Specimen"), ("stain", "Stain"), ("contrast", "Contrast"),
               ("preparation", "Preparation"))  # fmt: skip
"""Fields of the full template after the modality/body-part sentence, in this order."""

SHOWN_WORDING = 20
"""Questions the build names one per warning line; the rest are counted."""

COLOUR_OF = {"box": "red", "mask": "green", "contour": "yellow"}

_STEMS = {
    ("image", False): "Which of the following is shown in this image?",
    ("image", True): "Which of the following are shown in this image? Select all that apply.",
    ("box", False): "What is shown inside the red box?",
    ("box", True): "Which of the following are inside the red box? Select all that apply.",
    ("mask", False): "What does the region shaded in green show?",
    ("mask", True): "Which of the following does the region shaded in green show? "
    "Select all that apply.",
    ("contour", False): "What does the region outlined in yellow show?",
    ("contour", True): "Which of the following does the region outlined in yellow show? "
    "Select all that apply.",
}
_DETECT_OPEN = (
    "Where is the {label} in this image? Answer with its bounding box as [x0, y0, x1, y1] "
    "in pixels of the image."
)
_DETECT_CLOSED = "Which box, given as [x0, y0, x1, y1] in pixels, contains the {label}?"
_DETECT_CLOSED_MULTI = (
    "Which boxes, given as [x0, y0, x1, y1] in pixels, contain a {label}? Select all that apply."
)


def parse_templates(text: str) -> tuple[str, ...]:
    """``none``, ``modality``, ``full``, a comma list of them, or ``all``."""
    names = TEMPLATES if text.strip() == "all" else tuple(t.strip() for t in text.split(","))
    for name in names:
        if name not in TEMPLATES:
            raise SpecError(f"--template {name!r}: expected none, modality, full or all")
    if len(set(names)) != len(names) or not names:
        raise SpecError(f"--template {text!r}: name each template once")
    return names


def stem(
    granularity: str, task: str, multi: bool, closed: bool, label: str, question: str | None
) -> str:
    """The standard question (or the user's ``--question``, with ``{label}``/``{colour}``)."""
    if question is None:
        if task == "detect" and not closed:
            question = _DETECT_OPEN
        elif task == "detect":
            question = _DETECT_CLOSED_MULTI if multi else _DETECT_CLOSED
        else:
            question = _STEMS[(granularity, multi)]
    return question.replace("{label}", label).replace("{colour}", COLOUR_OF.get(granularity, ""))


def context_sentence(template: str, meta: Mapping[str, str], source: Path, where: str) -> str:
    """The context a template puts before the question ('' for ``none``)."""
    if template == "none":
        return ""
    modality = meta.get("modality", "")
    if not modality:
        problem = f"the {template} template needs a modality value"
        raise Unbuildable(source, f"{where}, field 'modality'", problem, problem, where)
    sentence = f"This is {_article(modality)} {modality} image"
    if template == "modality":
        return sentence + "."
    if body := meta.get("body_part", ""):
        sentence += f" of the {body}"
    extra = [f"{title}: {meta[key]}." for key, title in FULL_FIELDS if meta.get(key)]
    return " ".join([sentence + ".", *extra])


def _article(word: str) -> str:
    """``an`` before a vowel sound: ``an MRI``, ``an X-ray``, ``an ultrasound``, ``a CT``."""
    spelled = word[:2].isupper() or len(word) == 1 or word[1:2] == "-"
    return "an" if word[:1].upper() in ("AEFHILMNORSX" if spelled else "AEIOU") else "a"


def with_context(context: str, question: str) -> str:
    return f"{context} {question}" if context else question


def lint_words(text: str) -> tuple[str, ...]:
    """``--lint``: a comma-separated list of words, or a file with one word per line."""
    path = Path(text)
    words = path.read_text(encoding="utf-8").splitlines() if path.is_file() else text.split(",")
    return tuple(w.strip() for w in words if w.strip() and not w.strip().startswith("#"))


def lint(question: str, words: Sequence[str]) -> list[str]:
    """Listed words the question contains (whole words, case-insensitive)."""
    found = []
    for word in words:
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", question, flags=re.IGNORECASE):
            found.append(word)
    return found


class WordingLint:
    """The build's wording warnings: per question, the gold it names, the lexicon terms and the
    ``--lint`` words it contains."""

    def __init__(self, words: Sequence[str], lexicon: Lexicon | None = None) -> None:
        self.words = tuple(words)
        self.lexicon = lexicon if lexicon is not None else builtin_lexicon()
        self.lines: list[str] = []
        self.flagged = 0

    def add(
        self, where: str, item_id: str, question: str, kind: str, options: Sequence[str],
        golds: Sequence[str], target: str = "",
    ) -> None:  # fmt: skip
        """Check one question; ``where`` is "FILE, row N" of its label row."""
        listed = lint(question, self.words)
        found = judge_wording(
            question, self.lexicon, kind=kind, options=options, golds=golds, target=target
        )
        folded = {word.casefold() for word in listed}
        named = [f"names its gold answer {gold!r}" for gold in found.names_gold]
        terms = [
            f"{h.word!r} ({h.category})" for h in found.hits if h.word.casefold() not in folded
        ]
        phrases = named + [repr(word) for word in listed] + terms
        if not phrases:
            return
        self.flagged += 1
        if len(self.lines) < SHOWN_WORDING:
            self.lines.append(f"{where}: question of item {item_id!r} {_joined(phrases)}")

    def summary(self) -> list[str]:
        """The warning lines, and a count of the questions not shown."""
        more = self.flagged - len(self.lines)
        if more <= 0:
            return list(self.lines)
        return [*self.lines, f"… and {more} more questions break the wording rules (same kinds)"]


def _joined(phrases: list[str]) -> str:
    """``names its gold answer 'x'; contains 'a' (disease), 'b'``."""
    named = [p for p in phrases if p.startswith("names ")]
    words = [p for p in phrases if not p.startswith("names ")]
    parts = named + ([f"contains {', '.join(words)}"] if words else [])
    return "; ".join(parts)
