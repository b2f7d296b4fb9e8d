"""Vocabularies as data: the names a model may write for a benchmark's own answers, per axis.

Each axis (modality, plane, sex, body region, organ, laterality, MR sequence, number words,
finding) is one versioned TSV file in the package (``medlens/data/vocab/AXIS.tsv``)::

    # vocabulary: modality
    # version: 1
    canonical	term	source
    CT	computed tomography	RadLex preferred name "computed tomography"

``canonical`` is the benchmark's gold spelling, ``term`` another name for the same concept and
``source`` where the name comes from (RadLex, SNOMED CT or UMLS preferred names where they
apply). Terms are compared SQuAD-normalised (lower case, no punctuation, no articles). A user's
file (``--vocab FILE``, same layout; its ``# vocabulary:`` line names the axis) adds entries.

A file with a ``# relation: narrower`` line (``AXIS.narrower.tsv``) lists narrower concepts
instead: ``MRI<TAB>flair<TAB>…`` says that an answer naming FLAIR asserts MRI, while an answer
"MRI" does not assert a gold "FLAIR". Its canonical values must be concepts of the axis.

Validation at load: a row without three fields, a term listed twice, or a term (or canonical
value) mapped to two canonical values is an :class:`InputError` naming the file and line.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from medlens.core.errors import InputError
from medlens.extract.normalise import normalize_answer

AXES: tuple[str, ...] = (
    "modality", "plane", "sex", "body_region", "organ", "laterality", "mr_sequence",
    "number_words", "finding",
)  # fmt: skip
"""The built-in vocabularies, one data file each."""
NARROWER: tuple[str, ...] = ("modality", "plane", "organ")
"""Axes with a built-in file of narrower terms (``AXIS.narrower.tsv``, ``# relation: narrower``)."""
RELATIONS = ("same", "narrower")


@dataclass(frozen=True)
class Entry:
    """One name of a concept: ``term`` means ``canonical`` on ``axis``."""

    axis: str
    canonical: str
    term: str
    source: str
    where: str
    """``FILE:LINE`` the entry was read from."""
    relation: str = "same"
    """``same`` (another name of `canonical`) or ``narrower`` (a narrower concept: an answer
    saying `term` asserts `canonical`, not the reverse: FLAIR is an MRI, an MRI need not be
    FLAIR)."""

    @property
    def name(self) -> str:
        """How ``extraction.method`` names the entry: ``vocab:AXIS:TERM``."""
        return f"vocab:{self.axis}:{self.term}"


@dataclass(frozen=True)
class VocabFile:
    axis: str
    version: str
    path: str
    entries: tuple[Entry, ...]
    sha256: str = ""
    relation: str = "same"


@dataclass
class Vocabulary:
    """Every loaded entry, looked up by normalised term or canonical value."""

    files: list[VocabFile] = field(default_factory=list)
    by_key: dict[str, tuple[str, str, Entry | None]] = field(default_factory=dict)
    """normalised text → (axis, canonical, the entry, None when the text is the canonical)."""
    forms: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(axis, canonical) → every normalised form, canonical first."""
    narrower: dict[tuple[str, str], dict[str, Entry]] = field(default_factory=dict)
    """(axis, canonical) → normalised narrower term → its entry (``# relation: narrower``)."""

    @functools.cached_property
    def first_words(self) -> frozenset[str]:
        """First words of every normalised term: a text word outside it starts no term."""
        return frozenset(key.split()[0] for key in self.by_key if key)

    def concept(self, text: str) -> tuple[str, str, Entry | None] | None:
        """(axis, canonical, entry) when the whole `text` names a concept, else None."""
        return self.by_key.get(normalize_answer(text))

    def forms_of(self, axis: str, canonical: str) -> list[str]:
        return self.forms.get((axis, canonical), [])

    def narrower_of(self, axis: str, canonical: str) -> dict[str, Entry]:
        """Normalised narrower terms of a concept, each with its entry."""
        return self.narrower.get((axis, canonical), {})

    def entries(self, axis: str | None = None) -> list[Entry]:
        return [e for f in self.files if axis is None or f.axis == axis for e in f.entries]


def parse_vocab_file(text: str, path: str) -> VocabFile:
    """One vocabulary file; InputError naming the line for a malformed row."""
    axis, version, relation, entries, header_seen = "", "1", "same", [], False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            if key.strip() == "vocabulary":
                axis = value.strip()
            elif key.strip() == "version":
                version = value.strip()
            elif key.strip() == "relation":
                relation = value.strip()
                if relation not in RELATIONS:
                    raise InputError(path, f"line {number}", "relation must be same or narrower")
            continue
        fields = [part.strip() for part in line.split("\t")]
        if not header_seen and fields[:2] == ["canonical", "term"]:
            header_seen = True
            continue
        if len(fields) != 3 or not all(fields):
            raise InputError(path, f"line {number}", "expected canonical<TAB>term<TAB>source")
        if not axis:
            raise InputError(path, f"line {number}", "no '# vocabulary: AXIS' line before it")
        entries.append(Entry(axis, fields[0], fields[1], fields[2], f"{path}:{number}", relation))
    if not axis:
        raise InputError(path, None, "no '# vocabulary: AXIS' line")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return VocabFile(axis, version, path, tuple(entries), digest, relation)


def build(files: Iterable[VocabFile]) -> Vocabulary:
    """The vocabulary of `files`, refusing a duplicate term or a term with two meanings."""
    vocabulary = Vocabulary()
    files = list(files)
    for file in sorted(files, key=lambda f: f.relation == "narrower"):  # concepts first
        vocabulary.files.append(file)
        for entry in file.entries:
            (_add_narrower if entry.relation == "narrower" else _add)(vocabulary, entry)
    vocabulary.files.sort(key=files.index)
    return vocabulary


def _add_narrower(vocabulary: Vocabulary, entry: Entry) -> None:
    """A narrower term of a concept defined by a ``same`` file; not one of its own names."""
    path, _, line = entry.where.rpartition(":")
    meaning = (entry.axis, entry.canonical)
    term_key = normalize_answer(entry.term)
    held = vocabulary.by_key.get(normalize_answer(entry.canonical))
    if held is None or held[:2] != meaning:
        raise InputError(path, f"line {line}", f"{entry.canonical!r} is no concept of "
                         f"{entry.axis} (name it in {entry.axis}.tsv first)")  # fmt: skip
    known = vocabulary.narrower.setdefault(meaning, {})
    if term_key in known or term_key in vocabulary.forms_of(*meaning):
        raise InputError(
            path, f"line {line}", f"term {entry.term!r} is already a name of {entry.canonical!r}"
        )
    known[term_key] = entry


def _add(vocabulary: Vocabulary, entry: Entry) -> None:
    path, _, line = entry.where.rpartition(":")
    canonical_key, term_key = normalize_answer(entry.canonical), normalize_answer(entry.term)
    meaning = (entry.axis, entry.canonical)
    held = vocabulary.by_key.get(canonical_key)
    if held is not None and held[:2] != meaning:
        raise InputError(
            path, f"line {line}", f"canonical {entry.canonical!r} already means "
            f"{held[1]!r} on {held[0]} ({_origin(held)})",
        )  # fmt: skip
    if held is None:
        vocabulary.by_key[canonical_key] = (*meaning, None)
        vocabulary.forms[meaning] = [canonical_key]
    taken = vocabulary.by_key.get(term_key)
    if taken is not None:
        problem = (
            f"term {entry.term!r} is listed twice ({_origin(taken)})"
            if taken[:2] == meaning
            else f"term {entry.term!r} maps to {entry.canonical!r} and to {taken[1]!r} "
            f"on {taken[0]} ({_origin(taken)})"
        )
        raise InputError(path, f"line {line}", problem)
    vocabulary.by_key[term_key] = (*meaning, entry)
    vocabulary.forms[meaning].append(term_key)


def _origin(held: tuple[str, str, Entry | None]) -> str:
    entry = held[2]
    return entry.where if entry is not None else "its canonical value"


def builtin_files() -> list[VocabFile]:
    folder = resources.files("medlens") / "data" / "vocab"
    names = [f"{axis}.tsv" for axis in AXES] + [f"{axis}.narrower.tsv" for axis in NARROWER]
    return [parse_vocab_file((folder / name).read_text("utf-8"), name) for name in names]


def read_user_file(path: Path) -> VocabFile:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the vocabulary file ({exc})") from exc
    return parse_vocab_file(text, str(path))


@functools.lru_cache(maxsize=8)
def load_vocabulary(extra: tuple[str, ...] = ()) -> Vocabulary:
    """The built-in vocabularies plus the user's files `extra` (validated together)."""
    return build([*builtin_files(), *(read_user_file(Path(p)) for p in extra)])


_ACTIVE: list[tuple[str, ...]] = [()]


def use_vocabulary(extra: Sequence[str | Path]) -> Vocabulary:
    """Load and validate the user's files `extra` and read every later answer with them."""
    key = tuple(str(p) for p in extra)
    vocabulary = load_vocabulary(key)
    _ACTIVE[0] = key
    return vocabulary


def active_vocabulary() -> Vocabulary:
    """The vocabulary answers are read with: built-in, plus ``--vocab`` files when given."""
    return load_vocabulary(_ACTIVE[0])


def provenance(extra: Sequence[str | Path]) -> list[dict[str, object]]:
    """What ``run.json`` records of ``--vocab`` files: path, axis, version, entries, sha256."""
    files = [read_user_file(Path(p)) for p in extra]
    return [
        {"path": f.path, "axis": f.axis, "version": f.version, "entries": len(f.entries),
         "sha256": f.sha256, **({"relation": f.relation} if f.relation != "same" else {})}
        for f in files
    ]  # fmt: skip
