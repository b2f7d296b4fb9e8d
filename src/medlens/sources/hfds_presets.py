"""Presets for the seed benchmarks' Hugging Face layouts, chosen by repo id or ``?preset=``.

Two kinds:

- **native** presets: the Hub repo holds the release's own files (SLAKE's JSONs, MedXpertQA's
  JSONL, OmniMedVQA's QA_information, MMBU's release, GMAI-MMBench's TSVs). The native loader
  reads the snapshot folder, so items, ids and content hash are the native loader's own.
- **table** presets: the Hub copy is a parquet table (VQA-RAD, PathVQA). Rows become items
  through the native VQA record shape with the native loader's axes; ids and hash equal the
  native loader's when the table carries the native fields (``qid``/``source_row``,
  ``answer_type``, the image's file name as the Image struct's path), and :attr:`Preset.parity`
  says what differs when it does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from medlens.core.errors import SpecError

MMMU_MEDICAL = (
    "Basic_Medical_Science",
    "Clinical_Medicine",
    "Diagnostics_and_Laboratory_Medicine",
    "Pharmacy",
    "Public_Health",
)
"""MMMU's Health & Medicine subjects (also :data:`medlens.sources.mmmu.MEDICAL_SUBJECTS`)."""


@dataclass(frozen=True)
class Preset:
    name: str
    repos: tuple[str, ...]
    """Repo ids (case-insensitive) that choose this preset without ``?preset=``."""
    summary: str
    parity: str
    """What ``medlens benchmarks`` says about equality with the native loader."""
    native: str | None = None
    """Native loader that reads the snapshot folder (native presets)."""
    native_options: tuple[str, ...] = ()
    """Spec options passed on to that loader."""
    question_files: tuple[str, ...] = ()
    """Globs of the files a native preset reads (recorded in provenance with their sizes)."""
    axes: Mapping[str, str] = field(default_factory=dict)
    """Canonical axes a table preset adds to every item (``split``/``image_id`` come per row)."""
    id_column: str = ""
    """Native id column of a table preset (row numbers when the table lacks it)."""
    image_field: str = ""
    """Native field holding the image's relative path (set from the Image struct's path)."""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "vqa-rad",
            ("flaviagiammarino/vqa-rad",),
            "VQA-RAD parquet (image, question, answer; splits train 1,793 / test 451)",
            "same items, ids and content hash as vqa-rad:DIR (MEVF) when the table carries "
            "qid, answer_type and the image file name as the image path; flaviagiammarino/vqa-rad "
            "has none of these, so its ids are row numbers, its answer_type is derived from "
            "yes/no (either/or CLOSED answers count as open) and its hash differs",
            axes={"source": "vqa-rad", "lang": "en"},
            id_column="qid",
        ),
        Preset(
            "pathvqa",
            ("flaviagiammarino/path-vqa",),
            "PathVQA parquet (image, question, answer; train 19,654 / validation 6,259 / test 6,719)",
            "same items, ids and content hash as pathvqa:DIR when the table carries source_row, "
            "answer_type, question_type and the image path (images/test/…); "
            "flaviagiammarino/path-vqa has only image, question and answer, so its ids are row "
            "numbers and its hash differs (the native set is the 5,564-row aligned subset)",
            axes={"modality": "pathology", "source": "pathvqa", "lang": "en", "convert_rgb": "1"},
            id_column="source_row",
            image_field="image",
        ),
        Preset(
            "slake",
            ("BoKelvin/SLAKE",),
            "SLAKE release files (train/validate/test.json, imgs/ or the Hub's imgs.zip); ?lang=en|zh|all",
            "same items, ids and content hash as slake:DIR (the repo holds the release files)",
            native="slake",
            native_options=("split", "lang"),
            question_files=("*.json", "imgs.zip"),
        ),
        Preset(
            "pmc-vqa",
            ("xmcmic/PMC-VQA",),
            "PMC-VQA release (test_clean.csv …, images.zip or images/); ?file=",
            "same items, ids and content hash as pmc-vqa:DIR (the repo holds the release files)",
            native="pmc-vqa",
            native_options=("file",),
            question_files=("*.csv",),
        ),
        Preset(
            "omnimedvqa",
            ("foreverbeliever/OmniMedVQA",),
            "OmniMedVQA release (QA_information/, Images/ unpacked); ?access=&dataset=",
            "same items, ids and content hash as omnimedvqa:DIR (the repo holds the release files)",
            native="omnimedvqa",
            native_options=("access", "dataset"),
            question_files=("QA_information/*/*.json",),
        ),
        Preset(
            "medxpertqa",
            ("TsinghuaC3I/MedXpertQA",),
            "MedXpertQA release (MM/ and Text/ JSONL, images/ unpacked); ?config=mm|text",
            "same items, ids and content hash as medxpertqa:DIR (the repo holds the release files)",
            native="medxpertqa",
            native_options=("config", "split"),
            question_files=("*/*.jsonl", "*.jsonl"),
        ),
        Preset(
            "mmbu",
            (),
            "MMBU public split (?preset=mmbu); its options are the judge's label set, never sent",
            "same items, ids and content hash as mmbu:DIR (the native loader reads the folder)",
            native="mmbu",
            native_options=("template", "mode"),
            question_files=("*.jsonl", "*.tsv", "*/*.jsonl", "*/*.tsv"),
        ),
        Preset(
            "mmmu",
            ("MMMU/MMMU",),
            "MMMU per-subject parquet (<Subject>/{dev,validation,test}-*.parquet, image_1..image_7); "
            "?subjects= (default the five medical ones)&split=",
            "same items, ids and content hash as mmmu:DIR (the repo is the release)",
            native="mmmu",
            native_options=("split", "subjects"),
            question_files=tuple(f"{s}/*.parquet" for s in MMMU_MEDICAL),
        ),
        Preset(
            "medframeqa",
            ("SuhaoYu1020/MedFrameQA",),
            "MedFrameQA parquet (data/test-*.parquet, frames in image_1..image_5), or the release "
            "MedFrameQA.json of earlier revisions",
            "same items, ids and content hash as medframeqa:DIR (the same loader)",
            native="medframeqa",
            native_options=("images",),
            question_files=("data/*.parquet", "*.json", "data/*.json"),
        ),
        Preset(
            "rexvqa",
            ("rajpurkarlab/ReXVQA",),
            "ReXVQA release (metadata/{test,valid,train}_vqa_data.json); ?images= the folder "
            "holding ReXGradient-160K's deid_png/",
            "same items, ids and content hash as rexvqa:DIR (the repo holds the release files)",
            native="rexvqa",
            native_options=("split", "images"),
            question_files=("metadata/*.json",),
        ),
        Preset(
            "m3d-vqa",
            ("GoodBaiBai88/M3D-VQA",),
            "M3D-VQA CSVs (M3D_VQA_{test5k,test,val,train}.csv); ?images= the M3D-Cap volumes; "
            "slicing options slices, pick, plane, window, order",
            "same items, ids and content hash as m3d-vqa:DIR (the repo holds the release files)",
            native="m3d-vqa",
            native_options=(
                "split",
                "mode",
                "images",
                "slices",
                "pick",
                "plane",
                "window",
                "order",
            ),
            question_files=("*.csv",),
        ),
        Preset(
            "gmai",
            ("OpenGVLab/GMAI-MMBench",),
            "GMAI-MMBench TSVs in its Hub repo (?split=val|test); streaming reader, MD5 recognition",
            "same items, ids and content hash as gmai:FILE.tsv (the same TSV reader)",
            native="gmai",
            native_options=(),
            question_files=("**/*.tsv",),
        ),
    )
}


def preset_for(repo: str | None, asked: str | None) -> Preset | None:
    """The preset named by ``?preset=`` (``none``: no preset), else the one of this repo id."""
    if asked is not None:
        if asked == "none":
            return None
        if asked not in PRESETS:
            raise SpecError(f"hfds: preset={asked!r} is not one of {', '.join(PRESETS)}, none")
        return PRESETS[asked]
    if repo is None:
        return None
    folded = repo.lower()
    return next((p for p in PRESETS.values() if folded in (r.lower() for r in p.repos)), None)
