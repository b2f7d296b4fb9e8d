"""The wording lexicon: words a question about an image must not contain (MMBU's wording rules).

MMBU builds its questions so that the answer comes from the image, never from the text: a
question names no disease, outcome or malignancy hint, and no abbreviation that gives the answer
away. The built-in lexicon (``data/lexicon/wording.tsv``, a few hundred terms, each with its
category and where it comes from) is what ``medlens build`` warns about in the questions it
writes and what ``medlens check`` counts in a benchmark's image questions; ``--lexicon FILE``
adds a user's own terms (same TSV: ``term<TAB>category[<TAB>note]``; a term already built in
takes the file's category).

Matching (:meth:`Lexicon.find`): whole words only (no match inside a longer word:
"tumour" is not found in "tumourigenesis"); the longest term wins where terms overlap ("basal
cell carcinoma", not "carcinoma"); terms match in any case except abbreviations, which match in
their own capitals only ("MS" is multiple sclerosis, "ms" is milliseconds); plurals are matched
too (-s, -es, and the Latin/Greek forms -is→-es, -us→-i, -um→-a, -oma→-omata), and "'s" in a
term is optional ("Crohn's disease", "Crohn disease"). It lives in ``core`` because both the
builder and the checks use it, and they may not import each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from medlens.core.errors import InputError

CATEGORIES = ("disease", "outcome", "malignancy", "abbreviation")
"""The four kinds of wording MMBU's rules keep out of a question."""
BUILTIN = "data/lexicon/wording.tsv"


@dataclass(frozen=True)
class Term:
    term: str
    category: str
    source: str = ""


@dataclass(frozen=True)
class Hit:
    """One lexicon term found in a text: the words as written, the term and its category."""

    word: str
    term: str
    category: str
    start: int = 0
    end: int = 0


class Lexicon:
    """Terms by category, compiled into one whole-word, longest-first pattern."""

    def __init__(self, terms: tuple[Term, ...]) -> None:
        self.terms = terms
        ordered = sorted(range(len(terms)), key=lambda i: -len(terms[i].term))
        parts = [f"(?P<t{i}>{_term_pattern(terms[i])})" for i in ordered]
        body = "|".join(parts) or "(?!)"
        self._pattern = re.compile(rf"(?<!\w)(?:{body})(?!\w)")

    def find(self, text: str) -> list[Hit]:
        """Every lexicon term in ``text``, left to right, overlapping terms as the longest."""
        hits = []
        for match in self._pattern.finditer(text):
            term = self.terms[int(str(match.lastgroup)[1:])]
            hits.append(Hit(match.group(0), term.term, term.category, *match.span()))
        return hits

    def extended(self, other: Lexicon) -> Lexicon:
        """This lexicon with ``other``'s terms added; a term in both takes ``other``'s category."""
        replaced = {term.term.casefold() for term in other.terms}
        kept = tuple(term for term in self.terms if term.term.casefold() not in replaced)
        return Lexicon(kept + other.terms)

    def __len__(self) -> int:
        return len(self.terms)


def _term_pattern(term: Term) -> str:
    """The regex of one term: its plural forms, an optional "'s", the case rule."""
    text = term.term
    stems = [re.escape(text)]
    for singular, plural in (("is", "es"), ("us", "i"), ("um", "a"), ("oma", "omata")):
        if text.endswith(singular) and len(text) > len(singular) + 2:
            stems.append(re.escape(text[: -len(singular)] + plural))
    suffix = "(?:s|es)?" if term.category != "abbreviation" else "s?"
    body = "(?:" + "|".join(stems) + ")" + suffix
    body = body.replace("'", "\0").replace("\0s", "(?:['’]s)?").replace("\0", "['’]?")
    return body if term.category == "abbreviation" else f"(?i:{body})"


def parse_lexicon(text: str, where: str) -> Lexicon:
    """Terms from TSV text (``term<TAB>category[<TAB>note]``, ``#`` comments, optional header).

    InputError names the file, the line and the field: an empty term, an unknown category, or a
    term given twice (compared ignoring case).
    """
    terms: list[Term] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split("\t")]
        if fields[:2] == ["term", "category"]:
            continue
        term = fields[0]
        category = fields[1] if len(fields) > 1 else ""
        if not term:
            raise InputError(where, f"line {number}, field 'term'", "empty term")
        if category not in CATEGORIES:
            problem = (
                f"unknown category {category!r} for {term!r} (expected "
                f"{', '.join(CATEGORIES[:-1])} or {CATEGORIES[-1]}, after a tab)"
            )
            raise InputError(where, f"line {number}, field 'category'", problem)
        key = term.casefold()
        if key in seen:
            problem = f"duplicate term {term!r} (already on line {seen[key]})"
            raise InputError(where, f"line {number}, field 'term'", problem)
        seen[key] = number
        terms.append(Term(term, category, fields[2] if len(fields) > 2 else ""))
    return Lexicon(tuple(terms))


def load_lexicon(path: str | Path) -> Lexicon:
    """A user's lexicon file (``--lexicon FILE``); InputError when it cannot be read."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, None, "no such lexicon file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the lexicon ({exc})") from None
    return parse_lexicon(text, str(path))


@cache
def builtin_lexicon() -> Lexicon:
    """The lexicon that ships with medlens."""
    return parse_lexicon(resources.files("medlens").joinpath(BUILTIN).read_text("utf-8"), BUILTIN)


def wording_lexicon(path: str | Path | None) -> Lexicon:
    """The built-in lexicon, extended by the user's file when one is given."""
    builtin = builtin_lexicon()
    return builtin if path is None else builtin.extended(load_lexicon(path))


@dataclass(frozen=True)
class Wording:
    """What MMBU's wording rules flag in one question."""

    names_gold: tuple[str, ...] = ()
    """Gold answers the question names (the worst case: the text gives the answer)."""
    hits: tuple[Hit, ...] = ()
    """Lexicon terms the rules do not allow in this question."""

    def __bool__(self) -> bool:
        return bool(self.names_gold or self.hits)

    def described(self) -> list[str]:
        """``names its gold answer 'x'`` and ``'word' (category)`` phrases."""
        named = [f"names its gold answer {gold!r}" for gold in self.names_gold]
        return named + [f"{hit.word!r} ({hit.category})" for hit in self.hits]


def judge_wording(
    question: str,
    lexicon: Lexicon,
    *,
    kind: str,
    options: Sequence[str] = (),
    golds: Sequence[str] = (),
    target: str = "",
) -> Wording:
    """Apply the wording rules to one question (answer options are never checked: MMBU sends
    them apart from the question, and they name diagnoses by design).

    - A yes/no question must name what it asks about, and yes/no is not given away by it:
      nothing is flagged.
    - A question that names every one of its options ("benign or malignant?") restates the
      choice: neither its option words nor its gold are flagged. An option counts as named by
      its distinctive words too (options "lead II", "lead V1": a layout naming "II, V1").
    - Otherwise a gold answer named in the question is the worst case (``names_gold``); other
      lexicon terms are flagged, except the target a grounding question asks to locate
      (``target``: "Where is the polyp?" is answered with a box, not with the word).
    """
    if kind == "yes_no":
        return Wording()
    spans = {text: _spans(text, question) for text in dict.fromkeys([*options, *golds]) if text}
    target_spans = _spans(target, question) if target.strip() else []
    stated = {t: spans.get(t, []) or _spans(short, question) for t, short in _distinct(options)}
    if len(options) >= 2 and all(stated.values()):
        gold_named: tuple[str, ...] = ()
        covered = [span for text in options for span in stated[text]]
    else:
        gold_named = tuple(text for text in golds if spans.get(text))
        covered = [span for text in gold_named for span in spans[text]]
    covered += target_spans
    hits = tuple(hit for hit in lexicon.find(question) if not _inside(hit, covered))
    return Wording(gold_named, hits)


def _spans(text: str, question: str) -> list[tuple[int, int]]:
    """Where ``text`` stands as whole words in the question, in any case; a text ending in a
    lowercase letter also as its plural (-s, -es, lowercase: "lead I" is not "lead is")."""
    text = text.strip()
    if not text:
        return []
    plural = "(?-i:s|es)?" if text[-1:].islower() else ""
    pattern = rf"(?<!\w)(?i:{re.escape(text)}){plural}(?!\w)"
    return [m.span() for m in re.finditer(pattern, question)]


def _distinct(options: Sequence[str]) -> list[tuple[str, str]]:
    """Each option with the words every option shares left out ("lead II" → "II")."""
    words = [text.split() for text in options]
    shared = set.intersection(*map(set, words)) if len(words) >= 2 else set()
    return [(text, " ".join(w for w in split if w not in shared))
            for text, split in zip(options, words, strict=True)]  # fmt: skip


def _inside(hit: Hit, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= hit.start and hit.end <= end for start, end in spans)
