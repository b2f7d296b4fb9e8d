"""What the native loaders share: JSON/JSONL/CSV readers with locations, answer forms, images.

Every reader yields ``(where, record)`` pairs, where ``where`` is the human location of the
record ("line 12", "record 3", "row 7") used in :class:`~medlens.core.errors.InputError` messages.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec, check_options

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# SLAKE's Chinese closed answers, plus the usual English forms.
_YES = {"yes", "y", "true", "是", "是的", "有", "包含", "可以", "正常", "对", "存在", "能"}
_NO = {
    "no",
    "n",
    "false",
    "不是",
    "否",
    "没有",
    "无",
    "不包含",
    "不可以",
    "不正常",
    "不对",
    "不存在",
    "不能",
}
_TRAILING_PUNCT = re.compile(r"[\s.。!！]+$")

Record = dict[str, Any]


def open_spec(spec: Spec, allowed: set[str], *, want: str = "dir") -> Path:
    """Check the spec's options, then return its argument as an existing path.

    ``want`` is ``dir``, ``file`` or ``any``.
    """
    check_options(spec, allowed)
    if not spec.argument:
        raise SpecError(f"{spec.name}: give a path, e.g. {spec.name}:PATH")
    path = Path(spec.argument).expanduser().resolve()
    if not path.exists():
        raise InputError(path, None, "does not exist")
    if want == "dir" and not path.is_dir():
        raise InputError(path, None, f"{spec.name} expects a directory")
    if want == "file" and not path.is_file():
        raise InputError(path, None, f"{spec.name} expects a file")
    return path


def choose_option(spec: Spec, key: str, allowed: Sequence[str], default: str) -> str:
    """The value of option ``key``, checked against the allowed values."""
    value = spec.option(key, default) or default
    if value not in allowed:
        raise SpecError(f"{spec.name}: {key}={value!r} is not one of {', '.join(allowed)}")
    return value


def first_existing(paths: Sequence[Path], what: str, root: Path) -> Path:
    """The first path that exists, or an InputError listing where medlens looked."""
    for path in paths:
        if path.exists():
            return path
    tried = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in paths)
    raise InputError(root, None, f"no {what} found (looked for {tried})")


def read_json(path: Path) -> Any:
    """Parse a whole JSON file, naming the line of a syntax error."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read ({exc})") from None


def read_jsonl(path: Path) -> Iterator[tuple[str, Record]]:
    """Stream a JSON Lines file; blank lines are skipped."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"line {number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(path, where, f"not valid JSON ({exc.msg})") from None
                if not isinstance(record, dict):
                    raise InputError(path, where, "expected a JSON object")
                yield where, record
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read ({exc})") from None


def read_json_list(path: Path) -> Iterator[tuple[str, Record]]:
    """The records of a file holding one JSON list of objects."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(
            path, None, f"expected a JSON list of records, found {type(data).__name__}"
        )
    for index, record in enumerate(data):
        where = f"record {index}"
        if not isinstance(record, dict):
            raise InputError(path, where, "expected a JSON object")
        yield where, record


def read_records(path: Path) -> Iterator[tuple[str, Record]]:
    """Records of a JSON list or a JSON Lines file, whatever the extension says."""
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        return read_json_list(path)
    return read_jsonl(path)


def read_csv(
    path: Path, *, header: bool = True, delimiter: str = ","
) -> Iterator[tuple[str, list[str]]]:
    """Rows of a CSV/TSV file with their line numbers (quoted newlines counted correctly)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            start = reader.line_num
            for row in reader:
                where = f"line {start + 1}"
                start = reader.line_num
                if (header and reader.line_num == 1) or not any(cell.strip() for cell in row):
                    continue
                yield where, row
    except csv.Error as exc:
        raise InputError(path, None, f"not valid CSV ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read ({exc})") from None


def read_table(path: Path, delimiter: str) -> Iterator[tuple[str, Record]]:
    """Rows of a CSV/TSV file with a header, as column → value records."""
    columns: list[str] | None = None
    for where, row in read_csv(path, header=False, delimiter=delimiter):
        if columns is None:
            columns = [cell.strip() for cell in row]
            continue
        if len(row) != len(columns):
            raise InputError(path, where, f"{len(row)} fields where the header has {len(columns)}")
        yield where, dict(zip(columns, row, strict=True))


def text(record: Mapping[str, Any], key: str, path: Path, where: str) -> str:
    """A required field as a stripped string (numbers are cast, as VQA-RAD needs)."""
    value = record.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(path, f"{where}, field {key!r}", "missing or empty")
    if isinstance(value, (dict, list)):
        raise InputError(path, f"{where}, field {key!r}", "expected text, found a structure")
    return str(value).strip()


def optional_text(record: Mapping[str, Any], key: str) -> str | None:
    """A field as a stripped string, or None when absent or empty."""
    value = record.get(key)
    if value is None or isinstance(value, (dict, list)) or not str(value).strip():
        return None
    return str(value).strip()


def native_meta(record: Mapping[str, Any], skip: Sequence[str] = ()) -> dict[str, str]:
    """Every native field except ``skip`` as a string (structures as compact JSON)."""
    meta: dict[str, str] = {}
    for key, value in record.items():
        if key in skip or value is None:
            continue
        if isinstance(value, (dict, list)):
            meta[key] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        else:
            meta[key] = str(value).strip()
    return meta


def yes_no(answer: str) -> str | None:
    """``"yes"``/``"no"`` for an English or Chinese yes/no answer, else None."""
    folded = _TRAILING_PUNCT.sub("", answer.strip().lower())
    if folded in _YES:
        return "yes"
    if folded in _NO:
        return "no"
    return None


def answer_type(value: str, path: Path, where: str) -> str:
    """``closed``/``open`` from CLOSED/OPEN written with any case or stray spaces."""
    folded = value.strip().lower()
    if folded not in ("closed", "open"):
        raise InputError(path, f"{where}, field 'answer_type'", f"{value!r} is not CLOSED or OPEN")
    return folded


def vqa_item(
    item_id: str,
    question: str,
    answer: str | None,
    images: tuple[ImageRef, ...],
    meta: dict[str, str],
) -> Item:
    """A VQA question: yes/no answers become ``yes_no`` items, anything else ``open`` text.

    A folded yes/no answer keeps the dataset's own spelling as ``meta["raw_answer"]`` ("Yes",
    "是的"): peer reading modes branch on it (MedEvalKit's and MultiMedEval's ``== "yes"``).
    A missing answer (SLAKE train has one) keeps the item with ``answer=None``, which
    ``medlens check`` then reports, rather than making the whole split unloadable.
    """
    binary = yes_no(answer) if answer is not None else None
    if binary is not None:
        return Item(
            item_id,
            question,
            "yes_no",
            answer=binary,
            images=images,
            meta={**meta, "answer_set": "yes/no", "raw_answer": answer or ""},
        )
    return Item(item_id, question, "open", answer=answer, images=images, meta=meta)


def vqa_record_item(
    record: Record,
    path: Path,
    where: str,
    *,
    item_id: str,
    image: ImageRef,
    axes: Mapping[str, str],
) -> Item:
    """The common shape of VQA-RAD, SLAKE and PathVQA records: question, answer, answer_type.

    Native fields are kept (question and answer aside); ``axes`` adds the canonical ones.
    """
    meta = native_meta(record, skip=("question", "answer"))
    kind = answer_type(text(record, "answer_type", path, where), path, where)
    meta.update(answer_type=kind, **axes)
    question = text(record, "question", path, where)
    return vqa_item(item_id, question, optional_text(record, "answer"), (image,), meta)


def file_image(root: Path, relative: str, path: Path, where: str) -> ImageRef:
    """An image file under ``root`` (existence checked now, bytes read later)."""
    from medlens.sources.image_paths import resolve_inside

    relative = relative.replace("\\", "/").strip()
    full = resolve_inside(root, relative, path, where)
    if not full.is_file():
        raise InputError(path, where, f"image {relative!r} not found under {root}")
    return image_ref(full, relative)


def image_ref(full: Path, name: str) -> ImageRef:
    """A lazy reference to an image file; DICOM files by their extension."""
    if full.suffix.lower() in (".dcm", ".dicom"):
        return ImageRef(source="dicom", path=str(full), name=name)
    return ImageRef(source="file", path=str(full), name=name)


def letter_options(texts: Sequence[str]) -> dict[str, str]:
    """Options A, B, C … for the given texts in order."""
    return {LETTERS[index]: option for index, option in enumerate(texts)}


def letter_of(options: Mapping[str, str], answer: str, path: Path, where: str) -> str:
    """The letter whose option text equals ``answer`` (a letter itself is accepted too)."""
    wanted = answer.strip()
    if wanted in options:
        return wanted
    for letter, option in options.items():
        if option.strip() == wanted:
            return letter
    folded = wanted.casefold()
    matches = [letter for letter, option in options.items() if option.strip().casefold() == folded]
    if len(matches) == 1:
        return matches[0]
    raise InputError(path, f"{where}, field 'answer'", f"{answer!r} is none of the options")


def make_benchmark(
    spec: Spec,
    split: str,
    iter_items: Callable[[], Iterator[Item]],
    *,
    has_answers: bool = True,
    description: str = "",
) -> Benchmark:
    """A Benchmark for a native loader (options were checked by :func:`open_spec`)."""
    return Benchmark(
        name=spec.name,
        spec=spec.canonical(),
        source=spec,
        split=split,
        has_answers=has_answers,
        iter_items=iter_items,
        description=description,
    )


def read_any(path: Path) -> Iterator[tuple[str, Record]]:
    """Records of a JSON list, JSON Lines, TSV or CSV file, chosen by extension."""
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return read_table(path, "\t")
    if suffix == ".csv":
        return read_table(path, ",")
    if suffix in (".json", ".jsonl"):
        return read_records(path)
    raise InputError(path, None, "unsupported file type; expected .json, .jsonl, .tsv or .csv")


def options_from(record: Mapping[str, Any], path: Path, where: str) -> dict[str, str]:
    """Options from an ``options`` object or list, or from ``A``…/``option_A``… columns.

    Empty cells end nothing: every non-empty letter column is kept, in letter order.
    """
    value = record.get("options")
    if isinstance(value, dict):
        return {str(k).strip(): str(v).strip() for k, v in value.items() if str(v).strip()}
    if isinstance(value, list):
        return letter_options([str(v).strip() for v in value])
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        parsed = parse_json_cell(value, path, f"{where}, field 'options'")
        return options_from({"options": parsed}, path, where)
    options: dict[str, str] = {}
    for letter in LETTERS[:10]:
        cell = record.get(letter, record.get(f"option_{letter}"))
        if cell is not None and str(cell).strip() and str(cell).strip().lower() != "nan":
            options[letter] = str(cell).strip()
    return options


def parse_json_cell(value: str, path: Path, where: str) -> Any:
    """A JSON value written inside one TSV/CSV cell."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise InputError(path, where, "not valid JSON") from None


def pick(record: Mapping[str, Any], aliases: Sequence[str]) -> tuple[str, Any]:
    """The first alias present with a non-empty value, as ``(field name, value)``."""
    for alias in aliases:
        value = record.get(alias)
        if value is not None and not (isinstance(value, str) and not value.strip()):
            return alias, value
    return aliases[0], None


def data_files(root: Path, suffixes: Sequence[str]) -> list[Path]:
    """A file itself, or the data files directly inside a folder (sorted)."""
    if root.is_file():
        return [root]
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    if not files:
        raise InputError(root, None, f"no data files ({', '.join(suffixes)}) in this folder")
    return files
