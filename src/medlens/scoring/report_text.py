"""The text report metrics compare: the prediction and every reference normalised alike.

Report generation is scored on the report as the model wrote it (its final full stop kept),
with the one normalisation applied to both sides: invisible characters and reasoning blocks
dropped (``extract.containers.without_reasoning``) and whitespace squeezed; case, punctuation,
markdown and MIMIC's de-identification marks ("___") stay, on both sides. So a model that
writes the reference scores BLEU-4 = ROUGE-L = 1.0, and corpus BLEU-4 is
``sacrebleu.corpus_bleu`` of the same strings. (Before issue 23 the reader
dropped the final full stop of the prediction only: `oracle` scored BLEU-4 0.89–0.94.)
"""

from __future__ import annotations

from medlens.extract.containers import without_reasoning


def report_text(text: str) -> str:
    """`text` as every report metric compares it (idempotent)."""
    return " ".join(without_reasoning(text).split())
