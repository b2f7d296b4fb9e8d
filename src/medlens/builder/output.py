"""Writing a benchmark file atomically: native jsonl (+ image files) or a VLMEvalKit/GMAI TSV.

- ``OUT.jsonl``: one ``Item.to_json()`` per line; images are files in ``OUT_images/`` beside it
  (for ``unpack``: ``DIR/items.jsonl`` + ``DIR/images/``), referenced by relative path, so
  ``jsonl:OUT.jsonl`` loads it.
- ``OUT.tsv``: VLMEvalKit's MCQ layout, ``index, question, A…, answer, image, <meta…>``; the image
  cell is base64 of the image bytes, or the ``index`` of an earlier row showing the same picture
  (VLMEvalKit's own reference form). Only ``choice``/``multi_choice`` items with one image fit.

Everything is written under a hidden staging name in the output's folder and renamed into place
at the end; an error on the way (a bad row met late) removes the staging files, so a refused
command leaves nothing behind.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from medlens.core.errors import InputError, SpecError
from medlens.core.items import ImageRef, Item
from medlens.sources.sidecar import SIDECAR

TSV_KINDS = ("choice", "multi_choice")
NO_COLUMN_META = ("split", "image_id")
"""Meta keys the TSV loader derives itself (from its options and from the image cell)."""


@dataclass(frozen=True)
class Picture:
    """One image file of an item: its stable file name and a way to get its bytes."""

    name: str
    data: Callable[[], bytes]


Entry = tuple[Item, tuple[Picture, ...]]


def output_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".tsv"):
        raise SpecError(f"--output {path}: expected a .jsonl or .tsv file name")
    return suffix[1:]


def claim_output(output: Path, force: bool) -> str | None:
    """Refuse to replace an existing output unless `force`; the note to print when its folder
    is new and lies outside the working folder (made, but never silently)."""
    if output.exists() and not force:
        raise SpecError(f"--output {output}: exists; give --force to replace it")
    parent = output.parent
    if parent.exists():
        return None
    try:
        parent.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return f"created the folder {parent} (outside the working folder {Path.cwd()})"
    return None


def images_folder(output: Path) -> Path:
    """Where a jsonl output keeps its image files."""
    return output.with_name(f"{output.stem}_images")


@contextlib.contextmanager
def staged_folder(parent: Path) -> Iterator[Path]:
    """A hidden folder in ``parent`` removed on exit (its contents moved out before, or not)."""
    created = not parent.exists()
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".medlens-staging-", dir=parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)


def replace_path(staged: Path, final: Path) -> None:
    """Move ``staged`` onto ``final`` (a folder replaces the old folder of that name)."""
    if staged.is_dir() and final.exists():
        trash = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.rename(final, trash)
        os.rename(staged, final)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staged, final)


def write_jsonl(entries: Iterable[Entry], jsonl: Path, images: Path) -> int:
    """Items to ``jsonl`` with image files under ``images`` (paths relative to the jsonl)."""
    images.mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    count = 0
    prefix = os.path.relpath(images, jsonl.parent).replace(os.sep, "/")
    with open(jsonl, "w", encoding="utf-8", newline="\n") as lines:
        for item, pictures in entries:
            refs = []
            for picture in pictures:
                if picture.name not in written:
                    (images / picture.name).write_bytes(picture.data())
                    written.add(picture.name)
                refs.append(ImageRef("file", f"{prefix}/{picture.name}", name=picture.name))
            data = replace(item, images=tuple(refs)).to_json()
            lines.write(json.dumps(data, ensure_ascii=False) + "\n")
            count += 1
    return count


def tsv_columns(meta_keys: Iterable[str]) -> list[str]:
    """The metadata columns of a TSV output, in first-seen order."""
    return [k for k in dict.fromkeys(meta_keys) if k not in NO_COLUMN_META]


def write_tsv(
    entries: Iterable[Entry], path: Path, meta_columns: Sequence[str], letters: str
) -> int:
    """Multiple-choice items as a VLMEvalKit TSV; a repeated picture becomes a row reference."""
    header = ["index", "question", *letters, "answer", "image", *meta_columns]
    owner_of: dict[str, str] = {}
    count = 0
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write("\t".join(tsv_cell(name) for name in header) + "\n")
        for item, pictures in entries:
            check_tsv_item(item, pictures, letters)
            picture = pictures[0]
            image = owner_of.get(picture.name)
            if image is None:
                owner_of[picture.name] = item.id
            _write_row(out, item, letters, meta_columns, image, picture)
            count += 1
    return count


def _write_row(
    out: IO[str],
    item: Item,
    letters: str,
    meta_columns: Sequence[str],
    reference: str | None,
    picture: Picture,
) -> None:
    answer = item.answer if isinstance(item.answer, str) else ""
    cells = [item.id, item.question, *(item.options.get(letter, "") for letter in letters), answer]
    out.write("\t".join(tsv_cell(cell) for cell in cells) + "\t")
    if reference is None:
        out.write(base64.b64encode(picture.data()).decode("ascii"))
    else:
        out.write(tsv_cell(reference))
    for key in meta_columns:
        out.write("\t" + tsv_cell(item.meta.get(key, "")))
    out.write("\n")


def check_tsv_item(item: Item, pictures: Sequence[Picture], letters: str) -> None:
    if item.kind not in TSV_KINDS:
        raise SpecError(
            f"item {item.id!r} is a {item.kind} item: a TSV holds multiple-choice items only "
            "(write .jsonl for open, classify and detect items)"
        )
    if len(pictures) != 1:
        raise SpecError(
            f"item {item.id!r} has {len(pictures)} images: a TSV row holds exactly one "
            "(write .jsonl)"
        )
    if any(letter not in letters for letter in item.options):
        raise AssertionError(f"options of {item.id!r} outside the columns {letters}")


def tsv_cell(value: str) -> str:
    """A TSV cell as pandas/VLMEvalKit read it: quoted when it holds a tab, newline or quote."""
    if any(c in value for c in '\t\n\r"'):
        return '"' + value.replace('"', '""') + '"'
    return value


def letters_for(items: Iterable[Item]) -> str:
    """Option columns A… up to the last letter any item uses."""
    used = {letter for item in items for letter in item.options}
    if not used:
        return "AB"
    return "".join(chr(c) for c in range(ord("A"), ord(max(used)) + 1))


def check_unique_ids(path: Path, ids: Iterable[tuple[str, str]]) -> None:
    """Refuse a duplicate item id, naming where it came from."""
    seen: set[str] = set()
    for where, item_id in ids:
        if item_id in seen:
            raise InputError(path, f"{where}, field 'id'", f"duplicate id {item_id!r}")
        seen.add(item_id)


def write_benchmark(
    output: Path,
    write: Callable[[Path, Path], int],
    sidecar: Callable[[Path], dict[str, object]] | None = None,
) -> int:
    """Stage, then move into place: the images folder, the benchmark file, ``subset.json``.

    ``write(staged_file, staged_images)`` writes the benchmark (and, for jsonl, its images) and
    returns the item count; ``sidecar(staged_file)`` returns the sidecar's content.
    """
    fmt = output_format(output)
    images = images_folder(output)
    with staged_folder(output.parent) as staging:
        staged, staged_images = staging / output.name, staging / images.name
        count = write(staged, staged_images)
        content = sidecar(staged) if sidecar else None
        if content is not None:
            text = json.dumps(content, indent=2, ensure_ascii=False) + "\n"
            (staging / SIDECAR).write_text(text, encoding="utf-8")
        # a text benchmark's jsonl has no images: no empty folder beside it (one left by an
        # earlier output is still replaced)
        has_images = staged_images.exists() and any(staged_images.iterdir())
        if fmt == "jsonl" and staged_images.exists() and (has_images or images.exists()):
            replace_path(staged_images, images)
        replace_path(staged, output)
        if content is not None:
            replace_path(staging / SIDECAR, output.parent / SIDECAR)
    return count
