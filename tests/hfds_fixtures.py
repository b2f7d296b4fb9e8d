"""Hugging Face dataset layouts built from the real data sets with pyarrow, for ``hfds:`` tests.

The tables hold what the Hub copies hold (an ``image`` column of the ``datasets`` Image struct
``{bytes, path}``, ``question``, ``answer``) and, with ``native_fields``, the release's own fields
as well, so a preset can be checked against the native loader item for item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def vqarad_table(root: Path, *, native_fields: bool = True, split: str = "test") -> pa.Table:
    """VQA-RAD's MEVF split as a table (image bytes from the image folder)."""
    records = json.loads((root / "data_RAD" / f"{split}set.json").read_text(encoding="utf-8"))
    images = root / "VQA_RAD Image Folder"
    rows: dict[str, list[Any]] = {"image": [], "question": [], "answer": []}
    extra = ("qid", "image_name", "image_organ", "answer_type", "question_type", "phrase_type")
    for key in extra if native_fields else ():
        rows[key] = []
    for record in records:
        name = record["image_name"]
        rows["image"].append(
            {"bytes": (images / name).read_bytes(), "path": name if native_fields else None}
        )
        rows["question"].append(record["question"])
        rows["answer"].append(str(record["answer"]))
        for key in extra if native_fields else ():
            rows[key].append(record[key])
    return _table(rows)


def pathvqa_table(root: Path, *, native_fields: bool = True, limit: int | None = None) -> pa.Table:
    """PathVQA's aligned test subset as a table (the image path is the native relative path)."""
    records = json.loads((root / "test_aligned_subset.json").read_text(encoding="utf-8"))[:limit]
    rows: dict[str, list[Any]] = {"image": [], "question": [], "answer": []}
    extra = ("source_row", "original_image_path", "answer_type", "question_type")
    for key in extra if native_fields else ():
        rows[key] = []
    cache: dict[str, bytes] = {}
    for record in records:
        name = record["image"]
        data = cache.setdefault(name, (root / name).read_bytes())
        rows["image"].append({"bytes": data, "path": name if native_fields else None})
        rows["question"].append(record["question"])
        rows["answer"].append(record["answer"])
        for key in extra if native_fields else ():
            rows[key].append(record[key])
    return _table(rows)


def _table(rows: Mapping[str, list[Any]]) -> pa.Table:
    arrays = {
        k: pa.array(v, type=IMAGE_TYPE) if k == "image" else pa.array(v) for k, v in rows.items()
    }
    return pa.table(arrays)


def write_repo(folder: Path, tables: Mapping[str, pa.Table], *, row_group_size: int = 100,
               card: bool = True, config: str = "default") -> Path:  # fmt: skip
    """A cloned dataset repo: ``data/<split>-00000-of-00001.parquet`` and a card with configs:."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    lines = ["---", "configs:", f"- config_name: {config}", "  data_files:"]
    for split, table in tables.items():
        name = f"data/{split}-00000-of-00001.parquet"
        pq.write_table(table, folder / name, row_group_size=row_group_size)
        lines += [f"  - split: {split}", f"    path: {name}"]
    if card:
        (folder / "README.md").write_text(
            "\n".join([*lines, "---", "# a dataset", ""]), encoding="utf-8"
        )
    return folder


def write_snapshot(cache: Path, repo: str, commit: str, tables: Mapping[str, pa.Table],
                   *, branch: str | None = "main", **kwargs: Any) -> Path:  # fmt: skip
    """A Hub-cache snapshot of a dataset repo at `commit` (``refs/<branch>`` points at it)."""
    folder = cache / ("datasets--" + repo.replace("/", "--"))
    snapshot = write_repo(folder / "snapshots" / commit, tables, **kwargs)
    if branch:
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / branch).write_text(commit, encoding="utf-8")
    return snapshot


def snapshot_folder(cache: Path, repo: str, commit: str, folder: Path) -> Path:
    """A Hub-cache snapshot of a dataset repo whose files are those of `folder` (copied), with
    ``refs/main`` pointing at `commit`."""
    import shutil

    repo_folder = cache / ("datasets--" + repo.replace("/", "--"))
    snapshot = repo_folder / "snapshots" / commit
    shutil.copytree(folder, snapshot)
    (repo_folder / "refs").mkdir(parents=True, exist_ok=True)
    (repo_folder / "refs" / "main").write_text(commit, encoding="utf-8")
    return snapshot


def write_saved(folder: Path, tables: Mapping[str, pa.Table], *, batch_rows: int = 100) -> Path:
    """A ``datasets.save_to_disk`` DatasetDict: ``dataset_dict.json`` + one Arrow stream per split."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataset_dict.json").write_text(
        json.dumps({"splits": list(tables)}), encoding="utf-8"
    )
    for split, table in tables.items():
        part = folder / split
        part.mkdir()
        name = "data-00000-of-00001.arrow"
        with (
            pa.OSFile(str(part / name), "wb") as sink,
            pa.ipc.new_stream(sink, table.schema) as writer,
        ):
            for batch in table.to_batches(max_chunksize=batch_rows):
                writer.write_batch(batch)
        state = {"_data_files": [{"filename": name}], "_split": split, "_fingerprint": "0"}
        (part / "state.json").write_text(json.dumps(state), encoding="utf-8")
        (part / "dataset_info.json").write_text(json.dumps({"features": {}}), encoding="utf-8")
    return folder
