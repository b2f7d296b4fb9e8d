"""Twelve-lead ECG: read a DICOM waveform, print it on grid paper with Pillow, measure it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from medlens.builder.bundled import read_dicom
from medlens.builder.overlays import PixelBox

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image, ImageDraw

LEADS = ("I", "II", "III", "aVR", "aVL", "aVF", "V1", "V2", "V3", "V4", "V5", "V6")
LAYOUT = (("I", "aVR", "V1", "V4"), ("II", "aVL", "V2", "V5"), ("III", "aVF", "V3", "V6"))
"""The standard printout: four columns of 2.5 s, then a 10 s lead II rhythm strip below."""
LAYOUT_TEXT = (
    "The ECG is printed in the standard layout: rows I, aVR, V1, V4 / II, aVL, V2, V5 / "
    "III, aVF, V3, V6 (2.5 s each), then a lead II rhythm strip."
)
PX_PER_MM = 2
PAPER_SPEED_MM_S = 25
GAIN_MM_MV = 10
ROW_PX = 60
MARGIN_PX = 6

Polarity = Literal["positive", "negative", "mixed"]


@dataclass(frozen=True, eq=False)
class Ecg:
    """A resting ECG recording."""

    signals: npt.NDArray[np.float64] = field(repr=False)
    """Microvolts, one column per lead in :data:`LEADS` order, baseline removed."""
    rate: float
    """Samples per second."""


def read_ecg(name: str) -> Ecg:
    """The first (rhythm) waveform of a bundled DICOM ECG, leads in :data:`LEADS` order."""
    import numpy as np

    dataset = read_dicom(name)
    group = dataset.WaveformSequence[0]
    raw = np.asarray(dataset.waveform_array(0), dtype=np.float64)
    names = [c.ChannelSourceSequence[0].CodeMeaning for c in group.ChannelDefinitionSequence]
    order = [
        next(i for i, n in enumerate(names) if n.split(" (")[0] == f"Lead {lead}") for lead in LEADS
    ]
    signals = raw[:, order] - np.median(raw[:, order], axis=0)
    return Ecg(signals=signals, rate=float(group.SamplingFrequency))


def px_per_second() -> int:
    return PX_PER_MM * PAPER_SPEED_MM_S


def render_ecg(ecg: Ecg) -> tuple[Image.Image, dict[str, PixelBox]]:
    """The printout on 5 mm grid paper, and the box of each lead's panel."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    width = 2 * MARGIN_PX + 10 * px_per_second()
    height = 2 * MARGIN_PX + 4 * ROW_PX
    image = PILImage.new("RGB", (width, height), (255, 255, 255))
    pen = ImageDraw.Draw(image)
    step = 5 * PX_PER_MM
    for x in range(MARGIN_PX, width - MARGIN_PX + 1, step):
        pen.line([(x, MARGIN_PX), (x, height - MARGIN_PX)], fill=(245, 180, 180))
    for y in range(MARGIN_PX, height - MARGIN_PX + 1, step):
        pen.line([(MARGIN_PX, y), (width - MARGIN_PX, y)], fill=(245, 180, 180))
    panels: dict[str, PixelBox] = {}
    column_px = px_per_second() * 5 // 2
    for row, leads in enumerate(LAYOUT):
        for column, lead in enumerate(leads):
            left, top = MARGIN_PX + column * column_px, MARGIN_PX + row * ROW_PX
            # Inset so that boxes drawn on neighbouring panels do not share edges.
            panels[lead] = (left + 2, top + 2, left + column_px - 2, top + ROW_PX - 2)
            trace(pen, ecg, lead, (column * 2.5, column * 2.5 + 2.5), (left, top + ROW_PX // 2))
    trace(pen, ecg, "II", (0.0, 10.0), (MARGIN_PX, MARGIN_PX + 3 * ROW_PX + ROW_PX // 2))
    return image, panels


def trace(
    pen: ImageDraw.ImageDraw,
    ecg: Ecg,
    lead: str,
    seconds: tuple[float, float],
    origin: tuple[int, int],
) -> None:
    """Draw ``lead`` between two times, starting at ``origin`` (left end of its baseline)."""
    start, stop = (round(t * ecg.rate) for t in seconds)
    values = ecg.signals[start:stop, LEADS.index(lead)]
    x_scale = px_per_second() / ecg.rate
    y_scale = GAIN_MM_MV * PX_PER_MM / 1000.0
    points = [
        (origin[0] + index * x_scale, origin[1] - float(value) * y_scale)
        for index, value in enumerate(values)
    ]
    pen.line(points, fill=(0, 0, 0), width=1)


def r_peaks(ecg: Ecg) -> list[int]:
    """Sample indices of the R waves in lead II: the highest point of each tall beat."""
    import numpy as np

    lead = ecg.signals[:, LEADS.index("II")]
    tall = 0.5 * float(lead.max())
    refractory = int(0.3 * ecg.rate)
    middle = lead[1:-1]
    summits = np.nonzero((middle >= lead[:-2]) & (middle > lead[2:]) & (middle > tall))[0] + 1
    peaks: list[int] = []
    for index in summits.tolist():
        if peaks and index - peaks[-1] < refractory:
            if lead[index] > lead[peaks[-1]]:
                peaks[-1] = index
            continue
        peaks.append(index)
    return peaks


def heart_rate(ecg: Ecg) -> float:
    """Beats per minute from the mean R–R interval."""
    import numpy as np

    intervals = np.diff(r_peaks(ecg)) / ecg.rate
    return float(60.0 / intervals.mean())


def qrs_polarity(ecg: Ecg, lead: str, peaks: list[int], dominance: float = 1.5) -> Polarity:
    """Whether the QRS complexes (around ``peaks``) of ``lead`` point clearly up, down, or neither."""
    import numpy as np

    window = int(0.06 * ecg.rate)
    values = ecg.signals[:, LEADS.index(lead)]
    complexes = np.concatenate([values[max(0, p - window) : p + window] for p in peaks])
    up, down = float(complexes.max()), -float(complexes.min())
    if up > dominance * down:
        return "positive"
    if down > dominance * up:
        return "negative"
    return "mixed"
