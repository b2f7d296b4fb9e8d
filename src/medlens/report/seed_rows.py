"""Report rows of the seed protocols' figures: MMBU's headline closed − open gap beside the
per-slice Δ rows, and the answers a person entered (``run --manual``) in the run summary."""

from __future__ import annotations

from typing import Any

from medlens.report.diff_text import fmt_diff_ci


def task_mean_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """MMBU's headline gap (then its four-task and all-task means), or the mean over the run's
    tasks for another benchmark."""
    from medlens.analysis.task_mean import FOUR_TASKS, HEADLINE

    gap = results.get("mmbu_gap")
    missing = ", ".join((gap or {}).get("missing") or [])
    head = f"{HEADLINE} (no {missing}: not the paper's definition)" if missing else HEADLINE
    named = [(head, (gap or {}).get("headline")),
             (FOUR_TASKS, (gap or {}).get("four_tasks")),
             ("all tasks of the run", (gap or {}).get("all"))]  # fmt: skip
    if not gap:
        across = results.get("closed_open_task_mean")
        named = (
            [(f"mean over {across['tasks']} tasks (each weighs the same)", across)]
            if across
            else []
        )
    return [
        (label, "–", "–", f"{100 * cell['delta']:+.1f} [{fmt_diff_ci(cell['ci'], 100)}]")
        for label, cell in named
        if cell
    ]


def manual_rows(results: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The answers a person entered (``run --manual``), when the run has any."""
    if not results.get("manual"):
        return ()
    from medlens.execution.manual import manual_text

    text = manual_text(results["manual"], results["counts"]["records"])
    return (("entered by hand", text.split(": ", 1)[1]),)
