"""The version of medlens's reading rules, recorded by every run that reads answers with them.

Bump :data:`READER_RULES_VERSION` in the commit that changes what ``extract`` reads from a given
output (a new rule, a rule that reads differently, a changed status), with the reading corpus's
per-file agreement before and after (``bench/reading_corpus.py``). Peer modes read as their
tools do and keep their own name; the version says which medlens rules stood beside them.
"""

from __future__ import annotations

READER_RULES_VERSION = 4
"""1: the rules as of the reading corpus guard (issue 42), the first recorded version.
2: issue 42's reading rules: cut outputs read by what they committed to, final conclusions over
weighed options, older models' answer shapes, yes/no statements and open answers read against the
question, a letter with another option's text (or labelling the model's own questions) no
answer, reviews and repetition loops.
3: the finding vocabulary (another name of a gold finding answers an open question and names the
finding a yes/no question asks about).
4: "Is the heart enlarged?" asks of cardiomegaly (and liver, spleen), "both" counts two, and a
short choice answer in one option's words without its letter reads that option."""


def reader_component(mode: str) -> dict[str, object]:
    """What a run records of its reader: the extraction mode and the rules' version."""
    return {"mode": mode, "rules": READER_RULES_VERSION}
