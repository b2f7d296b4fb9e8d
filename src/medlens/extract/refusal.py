"""Refusal detection: the model declined to answer (as opposed to answering unreadably).

A refusal phrase only decides the status when no answer could be read: "As an AI I cannot give
medical advice, but the answer is B" is an answer.
"""

from __future__ import annotations

import re

_REFUSAL = re.compile(
    r"\b(?:I|we)\s*(?:am|'m|are)?\s*(?:cannot|can\s*not|can't|can’t|could\s*not|couldn't|"
    r"am\s+unable\s+to|'m\s+unable\s+to|unable\s+to|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|"
    r"won't|will\s+not)\s+(?:\w+\s+){0,3}?"
    r"(?:provide|give|offer|make|help|assist|answer|diagnose|interpret|analy[sz]e|view|see|"
    r"access|process|determine|identify|evaluate|assess|read|comment|tell|classify|grade|label|"
    r"confirm|say|have\s+access)"
    # "I don't see any fracture" answers no; only "I don't have access/the ability" declines.
    r"|\bI\s*(?:do\s+not|don't|don’t)\s+have\s+(?:the\s+)?(?:ability|access|capability|means)"
    r"|\bas\s+an?\s+(?:AI|artificial\s+intelligence|language\s+model|large\s+language\s+model)\b"
    r"|\bI\s*(?:am|'m)\s+(?:just\s+)?an?\s+(?:AI|language\s+model)\b"
    r"|\bI\s*(?:am|'m)\s+not\s+(?:a|your)\s+(?:doctor|physician|medical\s+professional)\b"
    r"|\b(?:please\s+)?(?:consult|see|contact|speak\s+(?:to|with))\s+(?:with\s+)?(?:a|an|your)\s+"
    r"(?:\w+\s+)?(?:doctor|physician|radiologist|pathologist|specialist|clinician|"
    r"ophthalmologist|dermatologist|healthcare|health\s+care|medical)"
    r"|\bseek\s+(?:professional\s+)?medical\s+(?:advice|attention|help)"
    r"|\bnot\s+(?:able|qualified|in\s+a\s+position)\s+to\s+(?:provide|give|make|offer)\b"
    r"|\b(?:sorry|apologi[sz]e)\b[^.\n]{0,40}\b(?:can't|cannot|unable|not\s+able)\b"
    r"|\bwithout\s+(?:the|an|seeing\s+the|access\s+to\s+the)\s+(?:actual\s+)?image\b"
    r"|\bno\s+image\s+(?:was|is|has\s+been)\s+(?:provided|attached|uploaded|shared)"
    r"|\bcannot\s+determine\s+the\s+answer\b"
    r"|我(?:无法|不能|没法)|无法(?:提供|判断|确定|回答|诊断|查看|识别)|作为(?:一个)?(?:AI|人工智能|语言模型)"
    r"|请(?:咨询|就医|联系)|建议(?:咨询|就医)|抱歉",
    re.I,
)


def is_refusal(text: str) -> bool:
    """True when `text` contains a refusal or a deferral to a professional."""
    return _REFUSAL.search(text) is not None
