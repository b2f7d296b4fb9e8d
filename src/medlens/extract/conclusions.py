"""The concluding statement of a reasoning output, and the question's own polarity.

- **Concluding sentence**: the last sentence that opens with a concluding phrase ("Therefore",
  "So", "In conclusion", "Based on the patient's symptoms and history,", "Given these
  findings,", "Overall", "所以" …). A sentence that ends on a colon is read with the line that
  follows ("…the strongest predisposing factor is:\\n\\nD) Maternal diabetes").
- **Hedged conclusion**: "Therefore, it is possible that the B pattern belongs to REM sleep."
  commits to nothing.
- **Echoed options**: "A: Defect in WASP gene B: Defect in ATM gene C: Adenosine deaminase
  deficiency …" lists the options (three or more labels in order), it chooses none of them.
- **Negative question** ("Which of the following is NOT true …", "All are causes … except"):
  an answer that names an option and says it is not so ("A) Alzheimer's disease is not a cause
  of subcortical dementia") restates the question, it does not reject the option.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlens.extract.containers import sentences

_OPENER = re.compile(
    r"^(?:(?:therefore|thus|hence|so|in\s+conclusion|in\s+summary|to\s+summari[sz]e|to\s+conclude|"
    r"overall|consequently|accordingly|ultimately|all\s+in\s+all|taken\s+together|"
    r"putting\s+(?:it\s+|this\s+|these\s+)?(?:all\s+)?together|"
    r"based\s+on\s+(?:this|these|the\s+above)[^,]*|所以|因此|综上所述|综上|故)\b[,，:]?"
    r"|(?:based\s+on|given|considering|in\s+light\s+of|in\s+view\s+of|taking)\b[^,:\n]{0,160}[,:])"
    r"\s*",
    re.I,
)
"""A concluding opener. "Based on …", "Given …", "Considering …" end at their comma."""
_HEDGE = re.compile(
    r"\b(?:it\s+is\s+possible|it\s+(?:may|might|could)\s+be|possibly|perhaps|maybe|"
    r"(?:may|might)\b|could\s+(?:be|also|possibly)|(?:is|are)\s+(?:difficult|hard|impossible)\s+to"
    r"|cannot\s+be\s+(?:determined|sure)|not\s+(?:sure|certain))",
    re.I,
)


def concluding_sentence(text: str) -> str | None:
    """What the last concluding sentence of `text` says after its opener (with the line after
    it when it ends on a colon); None when no sentence concludes."""
    parts = sentences(text)
    for index in range(len(parts) - 1, -1, -1):
        opener = _OPENER.match(parts[index])
        if opener is None:
            continue
        rest = parts[index][opener.end() :]
        if rest.rstrip().endswith((":", "：")) and index + 1 < len(parts):
            rest = f"{rest}\n{parts[index + 1]}"  # "…is:" + "D) Maternal diabetes" (a line)
        return rest
    return None


def hedged(sentence: str) -> bool:
    """A conclusion that only offers a possibility ("it is possible that B …")."""
    return _HEDGE.search(sentence) is not None


_NEGATIVE_QUESTION = re.compile(
    r"\b(?:not|except|false|untrue|incorrect|(?<!at\s)least|never|wrong)\b|n['’]t\b", re.I
)


def negative_question(question: str) -> bool:
    """A question that asks for the option that is *not* so ("Which … is NOT true?", "All are
    causes … except"), judged on its last question sentence (a vignette's "does not smoke" is
    no negative question)."""
    parts = sentences(question)
    asking = [part for part in parts if "?" in part or "？" in part] or parts[-1:]
    return bool(asking) and _NEGATIVE_QUESTION.search(asking[-1]) is not None


_LABEL = re.compile(r"(?:^|(?<=\s))([A-Z])[:)]\s")


def echoes_options(text: str, options: Mapping[str, str]) -> bool:
    """Three or more option labels in order on one line ("A: … B: … C: …", "B) … C) … D) …")."""
    order = {letter: place for place, letter in enumerate(options)}
    for line in text.splitlines():
        run, last = 0, -2
        for match in _LABEL.finditer(line):
            place = order.get(match.group(1), -2)
            run = run + 1 if place >= 0 and place == last + 1 else int(place >= 0)
            last = place
            if run >= 3:
                return True
    return False
