"""OmniMedVQA (Hu et al. 2024): ``QA_information/{Open,Restricted}-access/<dataset>.json``.

Each file is a JSON list of records with ``question_id``, ``question``, ``option_A`` …
``option_D`` (2–4 present), ``gt_answer`` (the option *text*, mapped here to its letter),
``image_path`` (relative to the OmniMedVQA root), ``dataset`` (→ ``source``),
``modality_type`` (→ ``modality``) and ``question_type`` (→ ``task``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
ACCESS_FOLDERS = {
    "open": ("Open-access",),
    "restricted": ("Restricted-access",),
    "all": ("Open-access", "Restricted-access"),
}
OPTION_FIELDS = ("option_A", "option_B", "option_C", "option_D", "option_E")


def load_omnimedvqa(spec: Spec) -> Benchmark:
    """``omnimedvqa:DIR[?access=open|restricted|all&dataset=NAME]`` (DIR holds QA_information/)."""
    root = native.open_spec(spec, {"access", "dataset"})
    access = native.choose_option(spec, "access", tuple(ACCESS_FOLDERS), "all")
    qa_root = native.first_existing([root / "QA_information"], "QA_information folder", root)
    wanted = spec.option("dataset")
    files = [
        path
        for folder in ACCESS_FOLDERS[access]
        for path in sorted((qa_root / folder).glob("*.json"))
        if not wanted or path.stem == wanted
    ]
    if not files:
        raise InputError(
            qa_root,
            None,
            f"no QA JSON files for access={access}" + (f", dataset={wanted}" if wanted else ""),
        )

    def iter_items() -> Iterator[Item]:
        for path in files:
            for where, record in native.read_json_list(path):
                yield _item(record, path, where, root, path.parent.name)

    return native.make_benchmark(
        spec, "test", iter_items, description=f"OmniMedVQA ({access} access, {len(files)} files)"
    )


def _item(record: native.Record, path: Path, where: str, root: Path, access: str) -> Item:
    options = native.options_from(record, path, where)
    if len(options) < 2:
        raise InputError(path, f"{where}, field 'option_A'", "fewer than two options")
    answer = native.letter_of(options, native.text(record, "gt_answer", path, where), path, where)
    image_path = native.text(record, "image_path", path, where)
    meta = native.native_meta(record, skip=("question", "gt_answer", *OPTION_FIELDS))
    meta.update(
        source=meta.get("dataset", path.stem),
        modality=meta.get("modality_type", ""),
        task=meta.get("question_type", ""),
        access=access,
        lang="en",
        split="test",
        image_id=image_path,
    )
    return Item(
        id=str(record.get("question_id") or f"{path.stem}-{where.removeprefix('record ')}"),
        question=native.text(record, "question", path, where),
        kind="choice",
        options=options,
        answer=answer,
        images=(native.file_image(root, image_path, path, where),),
        meta=meta,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "per source dataset: open-access part redistributed by the authors, restricted-access part needs each original dataset's own licence",
    "access": "mixed",
    "homepage": "https://huggingface.co/datasets/foreverbeliever/OmniMedVQA",
    "access_note": "OmniMedVQA restricted-access items point into the original datasets: obtain each one under its own licence (the authors ask users to adhere to every source dataset's licence)",
    "citation": """@inproceedings{hu2024omnimedvqa,
  title = {OmniMedVQA: A New Large-Scale Comprehensive Evaluation Benchmark for Medical LVLM},
  author = {Hu, Yutao and Li, Tianbin and Lu, Quanfeng and Shao, Wenqi and He, Junjun and Qiao, Yu and Luo, Ping},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year = {2024}
}""",
}
