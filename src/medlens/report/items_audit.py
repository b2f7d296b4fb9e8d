"""The item audit (``medlens items audit --format md|html``) as markdown or a standalone page.

Model answers and item text are untrusted: markdown cells go through ``md_text``, HTML through
``esc``. The HTML shows the top items with their images (thumbnails as data URLs) and each run's
answer, and links every id to the item's page in ``medlens view RUN…``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

from medlens.core.errors import ItemError
from medlens.core.items import Item
from medlens.report.html_assets import STYLE
from medlens.report.html_format import esc
from medlens.report.md_format import md_text, table
from medlens.report.viewer.links import VIEWER_URL, item_url

TOP = 30
THUMBNAIL = 240


def summary_lines(audit: Mapping[str, Any]) -> list[str]:
    summary = audit["summary"]
    counts = ", ".join(f"{name} {n}" for name, n in summary["flag_counts"].items())
    lines = [
        f"{summary['n_items']} items, {len(audit['runs'])} runs; {summary['n_flagged']} flagged "
        f"(key, ambiguous, solved without image or misfit). Flags: {counts}.",
        f"Saturated share: {summary['saturated_share']:.1%}. Board signal-to-noise: "
        f"{summary['signal_to_noise']} ({summary['signal_to_noise_note']}).",
    ]
    if summary.get("power_note"):
        lines.append(str(summary["power_note"]))
    for modality, cell in (summary.get("solved_without_image_share") or {}).items():
        share = f"{cell['share']:.1%} of {cell['n']} items"
        if modality == NO_MODALITY:  # the benchmark records no modality (VQA-RAD)
            lines.append(f"Solved without the image: {share} (items without a modality).")
        else:
            lines.append(f"Solved without the image, {modality}: {share}.")
    return lines


def flags_text(row: Mapping[str, Any]) -> str:
    """An item's flags, each defect flag with its q value ("key q 0.012, at_chance")."""
    found = row.get("q") or {}
    return ", ".join(f"{f} q {found[f]:.2g}" if f in found else f for f in row["flags"])


NO_MODALITY = "(none)"
"""The key ``items audit`` gives items without a ``modality`` in ``solved_without_image_share``."""


def _evidence_text(evidence: Mapping[str, Mapping[str, Any]]) -> str:
    return "; ".join(
        f"{option}: {e['share']:.0%} of runs (weighted {e['weighted_share']:.0%}, mean ability "
        f"{e['mean_ability']:+.2f})"
        for option, e in evidence.items()
    )


def audit_markdown(audit: Mapping[str, Any], top: int = TOP) -> str:
    """Summary, flag definitions and the `top` most suspicious items as markdown."""
    bench = audit["benchmark"]
    out = [f"# Item audit: {md_text(bench.get('spec'))}", ""]
    out += [md_text(line) for line in summary_lines(audit)] + ["", "## Flags", ""]
    out += [f"- `{name}`: {md_text(text)}" for name, text in audit["flags"].items()]
    out += ["", f"## Top {top} items by suspicion", ""]
    rows = [
        [
            md_text(row["id"]),
            f"{row['suspicion']:.2f}",
            md_text(flags_text(row)),
            md_text(row["key"]),
            md_text(row["suggested_answer"] or ""),
            "–" if row["p_correct"] is None else f"{row['p_correct']:.0%}",
            md_text(_evidence_text(row["evidence"])),
        ]
        for row in audit["items"][:top]
    ]
    out.append(table(("id", "suspicion", "flags", "key", "suggested", "right", "evidence"), rows))
    return "\n".join(out) + "\n"


def _thumbnails(item: Item | None) -> str:
    if item is None:
        return ""
    from medlens.models.images import rgb_image

    tags = []
    for ref in item.images[:3]:
        try:
            image = rgb_image(ref.read_bytes())
        except (ItemError, OSError, ValueError):  # an unreadable picture must not sink the page
            tags.append('<span class="note">(image unreadable)</span>')
            continue
        image.thumbnail((THUMBNAIL, THUMBNAIL))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = base64.b64encode(buffer.getvalue()).decode("ascii")
        tags.append(f'<img alt="item image" src="data:image/png;base64,{data}">')
    return "".join(tags)


def _item_html(row: Mapping[str, Any], item: Item | None) -> str:
    options = "".join(
        f"<li><b>{esc(k)}</b>. {esc(v)}</li>" for k, v in (item.options.items() if item else ())
    )
    answers = "".join(
        f"<tr><td>{esc(run)}</td><td>{esc(answer or '–')}</td></tr>"
        for run, answer in row["answers"].items()
    )
    return (
        f'<section class="item"><h3><a href="{esc(item_url(row["id"]))}">{esc(row["id"])}</a> '
        f"— suspicion {row['suspicion']:.2f}; {esc(flags_text(row) or 'no flags')}</h3>"
        f"<p>{esc(item.question if item else '')}</p><ol>{options}</ol>{_thumbnails(item)}"
        f"<p>key <b>{esc(row['key'])}</b>; suggested <b>{esc(row['suggested_answer'] or '–')}</b>; "
        f"evidence: {esc(_evidence_text(row['evidence']))}</p>"
        f"<table><tr><th>run</th><th>answer</th></tr>{answers}</table></section>"
    )


def audit_html(
    audit: Mapping[str, Any], items: Sequence[Item], runs: Sequence[str], top: int = TOP
) -> str:
    """A standalone page: summary, flags, and the top items with images and each run's answer."""
    by_id = {item.id: item for item in items}
    summary = "".join(f"<p>{esc(line)}</p>" for line in summary_lines(audit))
    flags = "".join(f"<li><code>{esc(k)}</code>: {esc(v)}</li>" for k, v in audit["flags"].items())
    body = "".join(_item_html(row, by_id.get(row["id"])) for row in audit["items"][:top])
    view = " ".join(esc(r) for r in runs)
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>Item audit: {esc(audit['benchmark'].get('spec'))}</title><style>{STYLE}</style></head><body>"
        f"<h1>Item audit: {esc(audit['benchmark'].get('spec'))}</h1>{summary}<h2>Flags</h2><ul>{flags}</ul>"
        f'<p class="note">Each id opens the item with every run side by side in <code>medlens view '
        f"{view}</code> (start it first; it serves {esc(VIEWER_URL)}).</p>"
        f"<h2>Top {top} items by suspicion</h2>{body}</body></html>\n"
    )
