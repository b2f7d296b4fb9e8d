"""M3D-VQA (Bai et al., 2024): 3D CT VQA, each question on a volume shown as chosen slices.

The release (``GoodBaiBai88/M3D-VQA``) is four CSV files, ``M3D_VQA_{train,val,test,test5k}.csv``,
with the columns ``Image Path`` (the volume, relative to the M3D-Cap data folder), ``Text`` (the
report the question was generated from — never shown), ``Question Type`` (the five topics:
plane, phase, organ, abnormality, location), ``Question``, ``Choice A`` … ``Choice D``,
``Answer`` (the answer's text) and ``Answer Choice`` (its letter). The volumes are M3D-Cap's
prepared ``.npy`` arrays (``1×32×256×256``, scaled to [0, 1]); a path ending ``.nii``/``.nii.gz``
is read as NIfTI (``pip install 'medlens[nifti]'``).

``m3d-vqa:DIR[?split=test5k&mode=closed&images=DIR&slices=&pick=&plane=&window=&order=]``: DIR
holds the CSVs, ``?images=`` the volumes (default DIR). ``mode=closed`` (default) asks the
four-option question; ``open`` asks the question alone with the answer text as gold; ``all``
both (ids ``<split>-<row>:closed`` / ``:open``). How a volume becomes images is the slicing spec
of :mod:`medlens.sources.volume_slicing`, recorded in the spec and in every item's meta. The
card: 510K questions in all; 13,729 of 13,814 test questions passed review; test5k is 5,000.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.volume_slicing import OPTIONS, Slicing, parse_slicing, volume_slices

SPLITS = ("test5k", "test", "val", "train")
MODES = ("closed", "open", "all")
CHOICES = ("A", "B", "C", "D")
PUBLISHED = {"test5k": 5000, "test_reviewed": 13729, "test_generated": 13814, "all": "510K"}
_SKIP = ("Question", "Answer", "Answer Choice", *(f"Choice {c}" for c in CHOICES))


def load_m3dvqa(spec: Spec) -> Benchmark:
    """``m3d-vqa:DIR[?split=test5k|test|val|train&mode=closed|open|all&images=DIR&…slicing]``."""
    root = native.open_spec(spec, {"split", "mode", "images", *OPTIONS})
    split = native.choose_option(spec, "split", SPLITS, "test5k")
    mode = native.choose_option(spec, "mode", MODES, "closed")
    slicing = parse_slicing(spec)
    csv = native.first_existing([root / f"M3D_VQA_{split}.csv"], f"M3D-VQA {split} CSV", root)
    volumes = Path(spec.option("images") or root).expanduser().resolve()

    def iter_items() -> Iterator[Item]:
        seen: dict[str, tuple[tuple[ImageRef, ...], list[int]]] = {}
        for row, (where, record) in enumerate(native.read_table(csv, ",")):
            relative = native.text(record, "Image Path", csv, where)
            if relative not in seen:
                volume = _volume(volumes, relative, csv, where)
                seen[relative] = volume_slices(
                    volume, relative, slicing, csv, f"{where}, field 'Image Path'"
                )
            refs, indices = seen[relative]
            yield from _items(record, (where, f"{split}-{row}"), csv, split, mode, refs,
                              slicing.meta(indices), relative)  # fmt: skip

    # the slicing is part of the spec, defaults included, so the run records what was shown
    filled = Spec(spec.name, spec.argument, {**spec.options, **slicing.options()}, spec.text)
    return native.make_benchmark(
        filled, split, iter_items, description=f"M3D-VQA {split} ({mode}), {_sliced(slicing)}"
    )


def _sliced(slicing: Slicing) -> str:
    how = slicing.pick if slicing.pick in ("uniform", "middle") else f"slices {slicing.pick}"
    return (f"{slicing.count} {how} {slicing.rendering.plane} slices, window "
            f"{slicing.rendering.window}, {slicing.order}")  # fmt: skip


def _volume(volumes: Path, relative: str, csv: Path, where: str) -> Path:
    ref = native.file_image(volumes, relative, csv, f"{where}, field 'Image Path'")
    return Path(ref.path)


def _items(record: dict[str, str], located: tuple[str, str], csv: Path, split: str, mode: str,
           refs: tuple[ImageRef, ...], slicing: dict[str, str], relative: str) -> Iterator[Item]:  # fmt: skip
    """The row's closed and/or open item; ids ``<split>-<row>`` count data rows from 0, as
    M3D's own evaluation indexes the CSV."""
    where, base = located
    meta = native.native_meta(record, skip=_SKIP)
    meta.update(slicing, source="m3d-vqa", split=split, lang="en", image_id=relative,
                volume=relative, n_images=str(len(refs)))  # fmt: skip
    if meta.get("Question Type"):
        meta["task"] = meta["Question Type"]
    question = native.text(record, "Question", csv, where)
    if mode in ("closed", "all"):
        options = {c: native.text(record, f"Choice {c}", csv, where) for c in CHOICES}
        answer = native.text(record, "Answer Choice", csv, where).upper()
        if answer not in options:
            raise InputError(
                csv, f"{where}, field 'Answer Choice'", f"{answer!r} is not A, B, C or D"
            )
        yield Item(base if mode == "closed" else f"{base}:closed", question, "choice",
                   options=options, answer=answer, images=refs,
                   meta={**meta, "answer_type": "closed"})  # fmt: skip
    if mode in ("open", "all"):
        answer = native.text(record, "Answer", csv, where)
        yield native.vqa_item(base if mode == "open" else f"{base}:open", question, answer,
                              refs, {**meta, "answer_type": "open"})  # fmt: skip


CARD = {
    "licence": "Apache 2.0 (GoodBaiBai88/M3D-VQA dataset card); volumes from M3D-Cap, "
    "collected from Radiopaedia under its terms",
    "access": "open",
    "homepage": "https://github.com/BAAI-DCAI/M3D",
    "citation": """@article{bai2024m3d,
  title = {M3D: Advancing 3D Medical Image Analysis with Multi-Modal Large Language Models},
  author = {Bai, Fan and Du, Yuxin and Huang, Tiejun and Meng, Max Q.-H. and Zhao, Bo},
  journal = {arXiv preprint arXiv:2404.00578},
  year = {2024}
}""",
}
