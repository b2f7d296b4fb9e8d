"""Build a GMAI-MMBench-format TSV from the real VQA-RAD images (deterministic, streamed to disk).

Used by tests and by ``bench/ingest.py``::

    rows = write_gmai_tsv(tmp_path / "gmai.tsv", n_rows=40)

Questions are real labels turned into multiple choice: "which body region" from VQA-RAD's
``image_organ`` and modality from its MODALITY answers. Rows cycle through the four GMAI
granularities (box, mask and contour overlays drawn with Pillow), some rows reuse an earlier
row's image by index (the VLMEvalKit reference convention), some have two correct answers
(written ``AC`` or ``A,C``), some images are stored as greyscale, RGBA or palette PNGs.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
IMAGE_FOLDER = "VQA_RAD Image Folder"
REGIONS = {"HEAD": "Head", "CHEST": "Chest", "ABD": "Abdomen"}
DEPARTMENTS = {"HEAD": "Neurosurgery", "CHEST": "Pulmonary Medicine", "ABD": "Gastroenterology"}
EXTRA_REGIONS = ("Pelvis", "Upper limb")
GRANULARITY_CYCLE = ("Image Level", "Box Level", "Mask Level", "Contour Level")
WHERE = {
    "Image Level": "this image",
    "Box Level": "the region inside the red box",
    "Mask Level": "the highlighted mask",
    "Contour Level": "the outlined contour",
}
MODE_CYCLE = ("RGB", "L", "RGB", "RGBA", "RGB", "P")
HEADER = (
    "index", "question", "hint", "A", "B", "C", "D", "E", "answer", "category", "l2-category",
    "image", "clinical VQA task", "department", "perceptual granularity", "modality", "source",
)  # fmt: skip


@dataclass(frozen=True)
class FixtureRow:
    """What one written row holds, for tests to check the loader against."""

    index: str
    owner: str
    """Index of the row whose image this row uses (itself unless it is a reference)."""
    answer: str
    """Gold as the loader should return it (sorted letters)."""
    kind: str
    granularity: str
    """Canonical: image / box / mask / contour."""
    png_sha256: str
    """sha256 of the PNG bytes stored in the row's (owner's) image cell."""
    pixels_sha256: str
    """sha256 of ``tobytes()`` of the source image after VLMEvalKit's mode conversion."""
    mode: str
    """Mode after that conversion (``L`` stays ``L``; RGBA/P become RGB)."""
    size: tuple[int, int]


@dataclass(frozen=True)
class _Source:
    name: str
    organ: str
    modality: str


def write_gmai_tsv(
    path: Path,
    *,
    n_rows: int,
    with_answers: bool = True,
    vqa_rad_dir: Path | None = None,
    max_side: int = 256,
    min_bytes: int = 0,
    compress_level: int = 6,
    reference_every: int = 5,
    multi_every: int = 6,
    crlf: bool = False,
) -> list[FixtureRow]:
    """Write ``n_rows`` rows (more while the file is under ``min_bytes``); return what they hold.

    ``max_side`` shrinks images (0 keeps VQA-RAD's full size); every ``reference_every``-th row
    reuses the previous row's image; every ``multi_every``-th row has two correct answers.
    """
    if reference_every < 2:
        raise ValueError(
            "reference_every must be at least 2 (a reference needs an owner before it)"
        )
    folder = vqa_rad_dir or REALDATA / "vqa_rad"
    sources = _sources(folder)
    header = HEADER if with_answers else tuple(h for h in HEADER if h != "answer")
    newline = b"\r\n" if crlf else b"\n"
    rows: list[FixtureRow] = []
    written = 0
    with open(path, "wb") as handle:
        handle.write("\t".join(header).encode() + newline)
        number = 0
        while number < n_rows or written < min_bytes:
            # a reference row asks about the previous row's image (which owns one)
            is_reference = number % reference_every == reference_every - 1 and bool(rows)
            owner_row = rows[-1] if is_reference else None
            source = sources[(number - 1 if is_reference else number) % len(sources)]
            multi = number % multi_every == multi_every - 1
            cells, row, png = _row(number, folder, source, owner_row, multi, max_side,
                                   compress_level)  # fmt: skip
            cells["image"] = base64.b64encode(png).decode("ascii") if png else row.owner
            line = "\t".join(cells[h] for h in header).encode("utf-8") + newline
            handle.write(line)
            written += len(line)
            rows.append(row)
            number += 1
    return rows


def _sources(folder: Path) -> list[_Source]:
    """VQA-RAD images with their organ and (where a MODALITY question answers it) modality."""
    records = json.loads((folder / "VQA_RAD Dataset Public.json").read_text(encoding="utf-8"))
    organ: dict[str, str] = {}
    modality: dict[str, str] = {}
    for record in records:
        organ.setdefault(record["image_name"], record["image_organ"].strip())
        answer = str(record["answer"]).lower()
        if record["question_type"] == "MODALITY":
            for key, value in (("ct", "CT"), ("mr", "MR"), ("x", "X-Ray"), ("ultrasound", "US")):
                if answer.startswith(key):
                    modality.setdefault(record["image_name"], value)
                    break
    names = sorted(n for n in organ if (folder / IMAGE_FOLDER / n).is_file())
    return [_Source(n, organ[n], modality.get(n, "Radiography")) for n in names]


def _row(
    number: int,
    folder: Path,
    source: _Source,
    owner_row: FixtureRow | None,
    multi: bool,
    max_side: int,
    compress_level: int,
) -> tuple[dict[str, str], FixtureRow, bytes | None]:
    """Cells (no image), the FixtureRow, and the PNG (None when reusing ``owner_row``'s)."""
    chooser = random.Random(number)
    index = str(1000 + number)
    granularity = GRANULARITY_CYCLE[number % 4] if owner_row is None else _native(owner_row)
    question, options, answer = _question(chooser, source.organ, granularity, multi)
    cells = _cells(index, question, options, number, source, granularity, multi, answer)
    canonical = granularity.split()[0].lower()
    if owner_row is not None:
        row = FixtureRow(index, owner_row.owner, _sorted(answer), _kind(answer), canonical,
                         owner_row.png_sha256, owner_row.pixels_sha256, owner_row.mode,
                         owner_row.size)  # fmt: skip
        return cells, row, None
    image = _render(folder, source, canonical, MODE_CYCLE[number % len(MODE_CYCLE)], max_side)
    png = _png(image, compress_level)
    shown = image.convert("RGB") if image.mode in ("RGBA", "P", "LA") else image
    row = FixtureRow(index, index, _sorted(answer), _kind(answer), canonical,
                     hashlib.sha256(png).hexdigest(), hashlib.sha256(shown.tobytes()).hexdigest(),
                     shown.mode, shown.size)  # fmt: skip
    return cells, row, png


def _native(row: FixtureRow) -> str:
    return f"{row.granularity.title()} Level"


def _question(
    chooser: random.Random, organ: str, granularity: str, multi: bool
) -> tuple[str, list[str], str]:
    """Question text, option texts (A, B, …) and the gold written as in GMAI's TSV."""
    region = REGIONS.get(organ, organ.title())
    others = [r for r in (*REGIONS.values(), *EXTRA_REGIONS) if r != region]
    where = WHERE[granularity]
    if not multi:
        n_options = 4 + chooser.randrange(2)
        options = [region, *chooser.sample(others, n_options - 1)]
        chooser.shuffle(options)
        return f"Which body region is shown in {where}?", options, "ABCDE"[options.index(region)]
    true = [f"It shows the {region.lower()}", "It is a radiology image"]
    false = [f"It shows the {chooser.choice(others).lower()}", "It is a photograph of a plant"]
    options = true + false
    chooser.shuffle(options)
    letters = sorted("ABCD"[options.index(t)] for t in true)
    gold = ",".join(letters) if chooser.random() < 0.5 else "".join(letters)
    return f"Which statements about {where} are true?", options, gold


def _cells(
    index: str,
    question: str,
    options: list[str],
    number: int,
    source: _Source,
    granularity: str,
    multi: bool,
    answer: str,
) -> dict[str, str]:
    letters = dict(zip("ABCDE", [*options, "", "", ""], strict=False))
    return {
        "index": index,
        "question": question,
        "hint": "Look at the whole image." if number % 7 == 3 else "",
        **letters,
        "answer": answer,
        "category": "Multiple findings" if multi else "Anatomy",
        "l2-category": "Statements" if multi else "Body region",
        "clinical VQA task": "Anatomical Structure Identification",
        "department": DEPARTMENTS.get(source.organ, "Radiology"),
        "perceptual granularity": granularity,
        "modality": source.modality,
        "source": "VQA-RAD",
    }


def _render(
    folder: Path, source: _Source, granularity: str, mode: str, max_side: int
) -> Image.Image:
    """The source JPEG, shrunk, with the overlay of its granularity, in the given mode."""
    with Image.open(folder / IMAGE_FOLDER / source.name) as opened:
        image = opened.convert("RGB")
    if max_side > 0:
        image.thumbnail((max_side, max_side))
    width, height = image.size
    box = (width // 4, height // 4, 3 * width // 4, 3 * height // 4)
    if granularity == "box":
        ImageDraw.Draw(image).rectangle(box, outline=(255, 0, 0), width=max(2, width // 128))
    elif granularity == "mask":
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        ImageDraw.Draw(layer).ellipse(box, fill=(0, 255, 0, 90))
        image = Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB")
    elif granularity == "contour":
        points = [(box[0], box[3]), ((box[0] + box[2]) // 2, box[1]), (box[2], box[3])]
        ImageDraw.Draw(image).polygon(points, outline=(255, 255, 0), width=max(2, width // 128))
    if mode == "RGBA":
        image = image.convert("RGBA")
        image.putalpha(200)
        return image
    return image if mode == "RGB" else image.convert(mode)


def _png(image: Image.Image, compress_level: int) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()


def _sorted(answer: str) -> str:
    return "".join(sorted(answer.replace(",", "")))


def _kind(answer: str) -> str:
    return "multi_choice" if len(_sorted(answer)) > 1 else "choice"
