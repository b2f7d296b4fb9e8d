"""``hfds:REPO_OR_DIR``: a Hugging Face dataset from the local Hub cache or a local folder.

``hfds:flaviagiammarino/vqa-rad?split=test`` reads the cached snapshot of a dataset repo
(:mod:`medlens.sources.hfds_hub`; nothing is downloaded unless ``?download=1``), a cloned
dataset repo or a ``datasets.save_to_disk`` folder (:mod:`medlens.sources.hfds_layout`), one
batch of rows at a time with images left in their files (:mod:`medlens.sources.hfds_table`).
Column roles and kinds: :mod:`medlens.sources.hfds_roles`; seed-benchmark presets:
:mod:`medlens.sources.hfds_presets`. The benchmark's ``provenance`` (repo, revision, commit, files
and sizes) goes into the run's run.json.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec, check_options
from medlens.sources import hfds_table, native
from medlens.sources.hfds_hub import Location, locate
from medlens.sources.hfds_layout import Layout, choose, read_layout
from medlens.sources.hfds_presets import Preset, preset_for
from medlens.sources.hfds_roles import ROLES, Roles, find_roles, generic_item

NATIVE_OPTIONS = {
    "lang",
    "access",
    "dataset",
    "template",
    "mode",
    "file",
    "subjects",
    "images",
    "slices",
    "pick",
    "plane",
    "window",
    "order",
}
"""Options only native presets use (each passes its own on to its loader)."""
OPTIONS = {"split", "config", "revision", "preset", "download", *ROLES, *NATIVE_OPTIONS}
SPLITS = ("test", "validation", "train")


def load_hfds(spec: Spec) -> Benchmark:
    """``hfds:REPO_OR_DIR[?split=&config=&revision=&preset=&download=1&question=&answer=&image=&options=&id=]``."""
    check_options(spec, OPTIONS)
    download = (spec.option("download") or "0").lower() in ("1", "true", "yes")
    location = locate(spec.argument, spec.option("revision"), download)
    preset = preset_for(location.repo, spec.option("preset"))
    if preset is not None and preset.native is not None:
        return _native_preset(spec, location, preset)
    return _table_benchmark(spec, location, preset)


def _table_benchmark(spec: Spec, location: Location, preset: Preset | None) -> Benchmark:
    root = location.root
    unused = sorted(NATIVE_OPTIONS & set(spec.options))
    if unused:
        raise SpecError(f"hfds:{spec.argument}: option(s) {', '.join(unused)} are for native "
                        "presets; this dataset is read as a table (split, config, question, "
                        "answer, image, options, id)")  # fmt: skip
    layout = read_layout(root)
    config, split, files = choose(layout, root, spec.option("config"), spec.option("split"))
    if not files:
        raise InputError(root, None, f"split {split!r} of config {config!r} lists no files")
    where = f"hfds:{location.repo or root} ({config}/{split})"
    schema = hfds_table.schema_of(files[0])
    columns = list(schema.names)
    overrides = {role: spec.options[role] for role in ROLES if role in spec.options}
    defaults = {"id": preset.id_column} if preset else {}
    roles = find_roles(columns, overrides, defaults, where)
    kind = hfds_table.image_kind(schema, roles.image)
    wanted = [c for c in columns if c != roles.image]
    axes = {**(preset.axes if preset else {}), "split": split}

    def iter_items() -> Iterator[Item]:
        for number, row in enumerate(hfds_table.rows(files, wanted, roles.image, kind)):
            yield _row_item(row, number, roles, kind, axes, root, preset)

    return Benchmark(
        name=spec.name, spec=spec.canonical(), source=spec, split=split,
        has_answers=roles.answer is not None, iter_items=iter_items,
        description=_description(location, preset, config, split, layout),
        provenance=_provenance(location, preset, layout, config, split, files),
    )  # fmt: skip


def _row_item(
    row: hfds_table.Row, number: int, roles: Roles, kind: str, axes: dict[str, str], root: Path,
    preset: Preset | None,
) -> Item:  # fmt: skip
    where = f"row {row.row}"
    record = row.record
    image = _image(row, roles, kind, root, number, axes["split"])
    images = (image,) if image is not None else ()
    row_axes = dict(axes)
    if image is not None and image.name and not image.name.startswith("row "):
        row_axes["image_id"] = image.name
    if preset is not None and preset.image_field and image is not None:
        record = {**record, preset.image_field: image.name}
    item_id = (
        str(record[roles.id]) if roles.id and record.get(roles.id) is not None else str(number)
    )
    if preset is not None and image is not None and "answer_type" in record and roles.answer:
        named = _native_names(record, roles)
        return native.vqa_record_item(
            named, row.path, where, item_id=item_id, image=image, axes=row_axes
        )
    return generic_item(record, roles, item_id, images, row_axes, row.path, where)


def _native_names(record: dict[str, Any], roles: Roles) -> dict[str, Any]:
    """The row under the native field names ``question``/``answer`` the VQA record shape reads."""
    out = {k: v for k, v in record.items() if k not in (roles.question, roles.answer)}
    out["question"], out["answer"] = record.get(roles.question), record.get(roles.answer or "")
    return out


def _image(row: hfds_table.Row, roles: Roles, kind: str, root: Path, number: int,
           split: str) -> ImageRef | None:  # fmt: skip
    if roles.image is None:
        return None
    if kind == "text":
        value = (row.image_path or "").strip()
        if not value:
            raise InputError(row.path, f"row {row.row}, field {roles.image!r}", "empty image path")
        return native.file_image(root, value, row.path, f"row {row.row}")
    source = "parquet" if row.path.suffix == ".parquet" else "arrow"
    name = (row.image_path or "").replace("\\", "/") or f"row {split}/{number}"
    return hfds_table.image_ref(row, source, roles.image, name)


def _native_preset(spec: Spec, location: Location, preset: Preset) -> Benchmark:
    from medlens.sources import SOURCES

    assert preset.native is not None
    options = {k: v for k, v in spec.options.items() if k in preset.native_options}
    argument = _native_argument(location.root, preset, spec.option("split"))
    inner = Spec(preset.native, str(argument), options)
    consumed = {"preset", "revision", "download"} | (
        {"split"} if preset.native == "gmai" else set()
    )
    unknown = set(spec.options) - set(preset.native_options) - consumed
    if unknown:
        raise SpecError(f"hfds preset {preset.name}: option(s) {', '.join(sorted(unknown))} not "
                        f"used (it takes {', '.join(preset.native_options) or 'none'})")  # fmt: skip
    benchmark: Benchmark = SOURCES.get(preset.native)(inner)
    if benchmark.source is not None:  # options the native loader filled in (M3D-VQA's slicing)
        filled = {k: v for k, v in benchmark.source.options.items() if k in preset.native_options}
        spec = Spec(spec.name, spec.argument, {**spec.options, **filled}, spec.text)
    files = sorted({p for pattern in preset.question_files for p in location.root.glob(pattern)
                    if p.is_file()})  # fmt: skip
    return Benchmark(
        name=spec.name, spec=spec.canonical(), source=spec, split=benchmark.split,
        has_answers=benchmark.has_answers, iter_items=benchmark.iter_items,
        description=f"{benchmark.description} — hfds preset {preset.name}, {_origin(location)}",
        provenance={**location.provenance(), "preset": preset.name, "layout": "native",
                    "files": _sizes(location.root, files)},
    )  # fmt: skip


def _native_argument(root: Path, preset: Preset, split: str | None) -> Path:
    """The folder (or, for GMAI-MMBench, the TSV) the native loader is given."""
    if preset.native != "gmai":
        return root
    wanted = (split or "val").upper()
    found = sorted(p for p in root.rglob("*.tsv") if wanted in p.name.upper())
    if not found:
        tsvs = ", ".join(p.name for p in sorted(root.rglob("*.tsv"))) or "none"
        raise InputError(root, None, f"no GMAI-MMBench {wanted} TSV (TSV files: {tsvs})")
    return found[0] if len(found) == 1 else found[0].parent


def _description(location: Location, preset: Preset | None, config: str, split: str,
                 layout: Layout) -> str:  # fmt: skip
    label = f"preset {preset.name}, " if preset else ""
    return f"Hugging Face dataset ({label}{config}/{split}, {layout.kind}) — {_origin(location)}"


def _origin(location: Location) -> str:
    if location.repo:
        return f"{location.repo}@{(location.commit or '')[:12]}"
    return str(location.root)


def _provenance(location: Location, preset: Preset | None, layout: Layout, config: str,
                split: str, files: list[Path]) -> dict[str, Any]:  # fmt: skip
    return {**location.provenance(), "preset": preset.name if preset else None,
            "layout": layout.kind, "config": config, "split": split,
            "files": _sizes(location.root, files)}  # fmt: skip


def _sizes(root: Path, files: list[Path]) -> list[dict[str, Any]]:
    return [{"path": p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p),
             "bytes": p.stat().st_size} for p in files]  # fmt: skip


CARD = {
    "licence": "user data: each Hugging Face dataset carries its own licence (see its card)",
    "access": "mixed",
    "homepage": "https://huggingface.co/datasets",
    "citation": "",
}
