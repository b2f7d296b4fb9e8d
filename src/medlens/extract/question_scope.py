"""What an open question asks: the gold's words a careful reader does not require because the
question did not ask for them (issue 42; real VQA-RAD outputs in ``tests/reading_corpus/``).

- ``asked:modality``: a question that asks only the modality ("What type of image is this?",
  "How was this image taken?", "What is the imaging modality?") is answered by the gold's
  modality: "CT" for ``ct with contrast``, "MRI" for ``t2-mri`` / ``mr-flair`` (an MR sequence
  is an MRI), "x-ray" for ``plain film x-ray`` — unless the answer contradicts the rest of the
  gold (another sequence, "without contrast" for "with contrast").
- ``asked:given``: the gold's words the question already gives need not be repeated: "right"
  for ``right hemisphere`` to "Which hemisphere …?", "head" for ``the pancreatic head`` to
  "… which part of the pancreas?". Words the question offers as alternatives ("left or right")
  are not given.
- ``asked:parenthetical``: a gold's aside in brackets is no part of the answer: "supine" for
  ``supine (see air-fluid level)``.
- ``asked:generic_head``: a gold that is a description plus a generic noun ("hypodense
  lesion") is answered by the description ("hypodense").

Each gives another reference answer, scored by the same assertion rules (negation, hedge, list,
comparison still refuse it). Imports ``core`` only through ``extract``.
"""

from __future__ import annotations

import re

from medlens.extract.concepts import concepts_in
from medlens.extract.normalise import normalize_answer

_ASKS_MODALITY = re.compile(
    r"\b(?:modality|modalities|type\s+of\s+(?:image|imaging|scan|study|film|radiograph)|"
    r"kind\s+of\s+(?:image|imaging|scan|study)|imaging\s+(?:technique|method|test|type)|"
    r"how\s+(?:was|is|were)\s+(?:this|the)\s+(?:image|images|picture|film|scan|study)\s+"
    r"(?:taken|acquired|obtained|made|captured|done|produced))\b",
    re.I,
)
_CONTRAST = re.compile(r"\b(?:without|non|no)[\s-]*contrast\b|\bnoncontrast\b|\bunenhanced\b", re.I)
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*")
_GENERIC_HEADS = frozenset(
    [
        "lesion",
        "lesions",
        "abnormality",
        "abnormalities",
        "finding",
        "findings",
        "area",
        "areas",
        "appearance",
    ]
)
_FUNCTION = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "with", "and", "or"])
_WORD = re.compile(r"[a-z0-9]+")


def asked_references(gold: str, question: str, said: str) -> list[tuple[str, str]]:
    """(reference, rule) a careful reader also accepts for `gold` to `question`, given the
    answer `said` (which must not contradict what it leaves out)."""
    found = []
    bare = _PARENTHETICAL.sub(" ", gold).strip()
    if bare and bare != gold.strip():
        found.append((bare, "asked:parenthetical"))
    modality = _gold_modality(bare, question, said)
    if modality is not None:
        found.append((modality, "asked:modality"))
    rest = _without_given(bare, question)
    if rest is not None:
        found.append((rest, "asked:given"))
    words = normalize_answer(bare).split()
    if len(words) >= 2 and words[-1] in _GENERIC_HEADS:
        found.append((" ".join(words[:-1]), "asked:generic_head"))
    return found


def _gold_modality(gold: str, question: str, said: str) -> str | None:
    if not _ASKS_MODALITY.search(question):
        return None
    named = concepts_in(gold, ("modality",))
    if not named and concepts_in(gold, ("mr_sequence",)):
        named = frozenset({("modality", "MRI")})
    if len(named) != 1:
        return None
    ((_, canonical),) = named
    if normalize_answer(canonical) == normalize_answer(gold):
        return None
    sequences = concepts_in(gold, ("mr_sequence",))
    other = concepts_in(said, ("mr_sequence",))
    if sequences and other and other != sequences:
        return None  # "T1-weighted MRI" for a T2 gold
    if ("contrast" in gold.lower()) and bool(_CONTRAST.search(gold)) != bool(
        _CONTRAST.search(said)
    ):
        return None  # "CT without contrast" for "ct with contrast"
    return canonical


def _without_given(gold: str, question: str) -> str | None:
    """The gold without the words the question gives (None when nothing or everything is)."""
    words = _WORD.findall(gold.lower())
    given = _given_words(question)
    kept = [w for w in words if not any(_same_word(w, g) for g in given)]
    while kept and kept[0] in _FUNCTION:
        kept.pop(0)
    while kept and kept[-1] in _FUNCTION:
        kept.pop()
    if not kept or len(kept) == len(words) or not any(w not in _FUNCTION for w in kept):
        return None
    return " ".join(kept)


def _given_words(question: str) -> set[str]:
    """The question's content words, less those it offers as alternatives ("left or right")."""
    words = _WORD.findall(question.lower())
    offered = {
        words[i + step]
        for i, word in enumerate(words)
        if word in ("or", "vs", "versus")
        for step in (-1, 1)
        if 0 <= i + step < len(words)
    }
    return {w for w in words if w not in _FUNCTION and w not in offered and len(w) > 2}


def _same_word(word: str, given: str) -> bool:
    """The same word, or the same stem ("pancreatic" / "pancreas", "ventricular" / "ventricle")."""
    if word == given:
        return True
    stem = 7 if min(len(word), len(given)) >= 7 else 0
    return bool(stem) and word[:stem] == given[:stem]
