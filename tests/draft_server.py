"""Drafting replies for the loopback server: questions drafted from a label, and distractor
candidates from three "models" (the ``model`` a request names), each with its own habits.

It reads the label data the way a careful model would: the JSON string between the
``<<<BEGIN NAME digest>>>`` markers (``judge_server.read_block``). Labels and model names pick
the replies a test needs: a prose reply without JSON for ``Spleen`` (identify), a wrong option
that is another label of the image for ``Left Kidney`` (identify), the gold answer among
``llm-c``'s candidates, and nothing usable from ``llm-bad``.
"""

from __future__ import annotations

import json

from judge_server import read_block
from loopback_server import ChatRequest

ORGANS = ("Liver", "Spleen", "Left Kidney", "Right Kidney", "Heart", "Left Lung", "Right Lung",
          "Bladder", "Colon", "Stomach", "Pancreas", "Gallbladder", "Esophagus",
          "Trachea")  # fmt: skip
OFFSET = {"llm-a": 0, "llm-b": 2, "llm-c": 4}
"""Where each model starts in the organ list: their candidates overlap in part."""


def draft_reply(request: ChatRequest) -> str:
    text = request.text
    if '{"distractors"' in text:
        return candidates_reply(request)
    label = read_block(text, "LABEL") or ""
    others = [o for o in (read_block(text, "OTHER") or "").split("; ") if o]
    identify = "exactly the label" in text
    if identify and label == "Spleen":
        return "Sure! Here is a good question: which organ is on the left of the image?"
    wrong = [o for o in ORGANS if o != label and o not in others][:3]
    if identify and label == "Left Kidney" and others:
        wrong = [others[0], *wrong[:2]]
    if identify:
        draft = {"question": "Which organ is marked as the main finding in this image?",
                 "options": [wrong[0], label, *wrong[1:]], "answer": label}  # fmt: skip
    else:
        draft = {"question": f"On which side of the image does the {label.lower()} lie?",
                 "options": ["left", "right", "midline", "not visible"],
                 "answer": "left"}  # fmt: skip
    return "```json\n" + json.dumps(draft) + "\n```"


def candidates_reply(request: ChatRequest) -> str:
    model = str(request.body.get("model"))
    if model == "llm-bad":
        return "I would rather not."
    gold = read_block(request.text, "ANSWER") or ""
    pool = [o for o in ORGANS if o != gold]
    start = OFFSET[model]
    picks = pool[start : start + 4]
    if model == "llm-c":
        picks = [gold.upper(), *picks[:3]]  # proposes the gold answer: dropped
    return json.dumps({"distractors": picks})
