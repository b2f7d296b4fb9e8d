"""`medlens chexpert`: CheXpert-label F1s of a report-generation run (Med-PaLM M's figures)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, console, write_json


@command("chexpert", short_help="CheXpert label F1s of RUN's chest-radiograph reports.")
def chexpert(
    run: Annotated[Path, typer.Argument(help="Run directory of a report-generation benchmark")],
    uncertain: Annotated[
        str,
        typer.Option(
            help="Uncertain labels count as negative (U-zeros), positive (U-ones) or "
            "are left out of the pair's comparison: negative|positive|ignore"
        ),
    ] = "negative",
    labeler: Annotated[
        Path | None,
        typer.Option(
            help="A local learned labeller folder (CheXbert-shaped checkpoint + BERT "
            "config and tokenizer); default: medlens's rule-based labeller"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Macro-F1 over the 14 CheXpert labels and micro/macro-F1 over the 5 major findings of
    RUN's chest-radiograph reports, with n and cluster-bootstrap CIs, and the per-finding F1s."""
    from medlens.analysis.label_f1 import label_f1_lines, label_f1_result
    from medlens.core.errors import SpecError
    from medlens.scoring.label_f1 import check_policy

    try:
        check_policy(uncertain)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    labeller = None
    if labeler is not None:
        from medlens.models.chexbert import LearnedLabeler

        labeller = LearnedLabeler(str(labeler))
    result = label_f1_result(run, uncertain, labeller)
    if as_json:
        write_json(result)
        return
    for line in label_f1_lines(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
