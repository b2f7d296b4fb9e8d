"""LLM-as-judge: protocols as data, found by name like models; the judge stage over a run, its
store, verdicts and agreement; panels of judges, order swaps, judge fingerprints, and judged
scores calibrated on human labels (prediction-powered inference). Imports ``execution`` and
below."""

from __future__ import annotations

from medlens.core.registry import Registry
from medlens.judges.protocol import JudgeProtocol, ParsedReply, last_json_object, parse_reply

JUDGE_PROTOCOLS: Registry[JudgeProtocol] = Registry("judge protocol")
JUDGE_PROTOCOLS.add(
    "equivalence",
    "medlens.judges.protocols:EQUIVALENCE",
    "equivalence",
    "strict biomedical equivalence of answer and gold (negation, laterality, severity …), JSON reply",
)
JUDGE_PROTOCOLS.add(
    "mmbu",
    "medlens.judges.mmbu:MMBU",
    "mmbu",
    "MMBU's open-answer judge (open_per_dataset_v3, reconstructed): label set, two gates, [RESULT] 0|1",
)
JUDGE_PROTOCOLS.add(
    "rubric",
    "medlens.judges.protocols:RUBRIC",
    "rubric",
    "Med-CMR: consistency, coherence, visual_accuracy, ground_truth_correctness 0-10, weights 1/1/4/4",
)
JUDGE_PROTOCOLS.add(
    "choice",
    "medlens.judges.protocols:CHOICE",
    "choice",
    "VLMEvalKit-style LLM choice extraction for answers the rules left unparsed",
)

__all__ = ["JUDGE_PROTOCOLS", "JudgeProtocol", "ParsedReply", "last_json_object", "parse_reply"]
