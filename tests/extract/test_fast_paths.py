"""The extractor's fast paths give what its patterns give, on real and fuzzed text.

Four readers skip work where it cannot change the result: the answer-phrase rules try their
pattern only where its opening word occurs (``containers.rule_matches``), the cut-output check
looks up the output's last word (``non_answer.is_cut``), ``normalize_output`` returns ASCII text
without markup as it is, and the affirmation rule finds no mentions in ASCII text without a word
that affirms (``choice._from_affirmation``). Each is checked here against the pattern-by-pattern path on
the real data sets' questions, options, answers and explanations (MedMCQA's "Ans. a …",
PubMedQA's long answers, SLAKE's Chinese questions), on every output the extraction tests read,
and on fuzzed text built from the words, marks and look-alike characters the patterns turn on.
"""

from __future__ import annotations

import ast
import itertools
import json
import random
import string
from functools import cache

import pytest

from data_paths import REPO_ROOT, realdata_dir
from medlens.extract import Extraction, containers, extract
from medlens.extract.choice import AFFIRMING_WORDS, _from_affirmation, affirmed_by_mentions
from medlens.extract.containers import normalize_output, normalized_by_patterns, rule_matches
from medlens.extract.non_answer import _DANGLING_WORDS, dangles_by_patterns, is_cut, last_word

WORDS = (
    "answer", "Answer", "ANSWER", "ans", "Ans-a", "answers are", "option", "Options", "choice",
    "diagnosis", "response", "selection", "final answer", "Final Answer:", "is", "would be", "=",
    ":", "-", "I", "i", "I'd", "I would", "choose", "select", "pick", "go with", "opt for", "my",
    "My final choice is", "it's", "it is", "It must be", "say", "think", "believe", "most likely",
    "best", "likeliest", "correct", "underlying", "that leaves", "this leaves us with", "which",
    "which leaves only", "right", "true", "yes", ": yes", "is my answer", "is my choice", "would be my pick", "the", "a", "an", "of", "and", "or", "to", "in", "on", "at", "with",
    "by", "for", "from", "as", "are", "was", "were", "be", "that", "than", "but", "because",
    "since", "show", "shows", "showing", "demonstrate", "demonstrates", "reveal", "reveals",
    "indicate", "indicates", "suggest", "suggests", "consistent", "these", "its", "their",
    "A", "B", "(C)", "D.",
    "E", "x", "banswer", "_answer", "answer_", "3answer", "ſ", "K", "İ", "ı", "é", "答案是", "选",
    "**", "__", "`", "#", "<think>", "</think>", "\u200b", "Ａ", "：",
)  # fmt: skip
GLUE = (" ", " ", " ", "", "\n", ", ", ". ", "; ", "(", ")", "—", "–", "\t", "? ", ": ", "'")


def fuzzed(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(GLUE) for _ in range(rng.randint(1, 14)))


@cache
def real_texts() -> tuple[str, ...]:
    texts: list[str] = []
    with (realdata_dir("medmcqa") / "dev.json").open(encoding="utf-8") as lines:
        for line in itertools.islice(lines, 1500):
            row = json.loads(line)
            texts += [
                str(row[k]) for k in ("question", "exp", "opa", "opb", "opc", "opd") if row[k]
            ]
    pubmed = json.loads((realdata_dir("pubmedqa") / "ori_pqal.json").read_text(encoding="utf-8"))
    for row in itertools.islice(pubmed.values(), 400):
        texts += [row["LONG_ANSWER"], row["QUESTION"], *row["CONTEXTS"][:1]]
    slake = json.loads((realdata_dir("slake") / "test.json").read_text(encoding="utf-8"))
    texts += [str(row[k]) for row in slake for k in ("question", "answer")]
    return tuple(texts)


@cache
def extraction_test_outputs() -> tuple[str, ...]:
    """Every string the extraction tests read (outputs in the styles of real models)."""
    found: list[str] = []
    for path in sorted((REPO_ROOT / "tests" / "extract").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    return tuple(found)


def corpus(seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = [*real_texts(), *extraction_test_outputs(), *(fuzzed(rng) for _ in range(3000))]
    # real text with the patterns' words spliced in, and cut at random places
    texts += [t[: rng.randint(0, len(t))] + rng.choice(WORDS) + " B." for t in real_texts()[:2000]]
    return texts


def test_phrase_rules_find_what_a_scan_of_every_position_finds() -> None:
    checked = 0
    for text in corpus(0):
        lowered = text.lower()
        for method, pattern, _ in containers._PHRASE_RULES:
            starts = containers._PHRASE_STARTS.get(method)
            fast = [m.span() for m in rule_matches(text, lowered, pattern, starts)]
            assert fast == [m.span() for m in pattern.finditer(text)], (method, text)
            checked += bool(fast)
    assert checked > 2000  # the rules do match: the comparison is not between empty lists


def test_the_cut_check_reads_the_last_word_as_its_patterns_do() -> None:
    rng = random.Random(1)
    cut = 0
    for text in corpus(1):
        for tail in ("", rng.choice(GLUE), " " + rng.choice(WORDS), rng.choice(WORDS)):
            end = " " + (text + tail).rstrip()[-24:]
            for lettered in (False, True):
                expected = dangles_by_patterns(end, lettered)
                assert is_cut(text + tail, lettered=lettered) == expected, (text + tail, lettered)
                cut += expected
    assert cut > 1000


def test_every_dangling_word_is_one_the_pattern_knows() -> None:
    for word in _DANGLING_WORDS:
        for spelled in (word, word.upper(), word.title()):
            assert dangles_by_patterns(" it " + spelled, lettered=False), spelled
    assert last_word(" x the_3") == "the_3" and last_word("end.") == ""


def test_normalised_output_is_the_patterns_own() -> None:
    for text in corpus(2):
        assert normalize_output(text) == normalized_by_patterns(text), text


@cache
def real_options() -> tuple[dict[str, str], ...]:
    """MedMCQA's option sets, and GMAI-like ones with words the affirmation rule looks for."""
    found = []
    with (realdata_dir("medmcqa") / "dev.json").open(encoding="utf-8") as lines:
        for line in itertools.islice(lines, 300):
            row = json.loads(line)
            found.append({letter: str(row[f"op{letter.lower()}"]) for letter in "ABCD"})
    found += [
        {"A": "Drusen", "B": "Glaucoma", "C": "Most likely normal", "D": "None is correct"},
        {"A": "True", "B": "False", "C": "Right lung", "D": "My answer"},
    ]
    return tuple(found)


def test_the_affirmation_rule_skips_only_text_that_affirms_nothing() -> None:
    rng = random.Random(3)
    affirmed = 0
    for text in corpus(3)[::3]:
        options = rng.choice(real_options())
        if rng.random() < 0.3:  # an option named with an affirming word after it, or without one
            letter = rng.choice(list(options))
            text += (
                f" {rng.choice([letter, options[letter]])} {rng.choice(WORDS)} {rng.choice(WORDS)}"
            )
        cleaned = normalize_output(text)
        for multi in (False, True):
            expected = affirmed_by_mentions(cleaned, options, multi)
            assert _from_affirmation(cleaned, options, multi) == expected, (text, options)
            affirmed += expected is not None
    assert affirmed > 100
    assert all(word in " ".join(WORDS).lower() for word in AFFIRMING_WORDS)


def test_a_bare_letter_is_read_as_the_full_rules_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import medlens.extract as extraction
    from medlens.core.items import Item

    full: list[Extraction] = []
    for kind in ("choice", "multi_choice", "yes_no", "classify", "open"):
        for options in ({}, {"A": "Drusen", "B": "Glaucoma"}, {"a": "x", "I": "y", "E": "z"}):
            answer = None if kind == "open" else "A"
            item = Item(id="1", question="Which?", kind=kind, options=options, answer=answer)
            for text in [*string.ascii_letters, "AB", "1", " B", "B "]:
                for finish in (None, "stop", "length"):
                    fast = extract(item, text, "medlens", finish)
                    monkeypatch.setattr(extraction, "_LETTERS", frozenset())
                    full.append(extract(item, text, "medlens", finish))
                    monkeypatch.undo()
                    assert fast == full[-1], (kind, options, text, finish)
    assert sum(found.method == "bare_letter" for found in full) >= 30
