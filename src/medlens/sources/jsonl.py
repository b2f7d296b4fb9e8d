"""medlens native benchmarks: one ``Item.to_json()`` per line, image paths relative to the file.

An image entry is an ``ImageRef.to_json()`` object or, for short, a plain path string (a
``file`` image). Paths are resolved against the folder holding the ``.jsonl`` file and must stay
inside it: a benchmark file cannot make medlens read ``../../etc/passwd`` and send it to a model.
The file is checked line by line when it is opened (so a bad line fails before a run starts) and
streamed again for every ``items()`` call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import KINDS, Benchmark, Item
from medlens.core.specs import Spec, check_options
from medlens.sources.answerable import BadItems, answerable_problems
from medlens.sources.image_paths import resolve_inside

_PATH_SOURCES = ("file", "dicom", "tsv")


def load_jsonl(spec: Spec, *, lenient: bool = False) -> Benchmark:
    """Open a medlens jsonl benchmark (``jsonl:PATH.jsonl[?split=NAME]``).

    Items are validated as the GMAI loader validates rows (letter option keys, gold among the
    options, yes/no vocabulary, image files present inside the folder). `lenient`
    (``medlens check``) keeps items whose gold is not among the options, so the check lists them.
    """
    check_options(spec, {"split"})
    path = os.path.abspath(os.path.expanduser(spec.argument))
    if not spec.argument or not os.path.isfile(path):
        raise InputError(spec.argument or "(no path)", None, "no such jsonl file")
    has_answers, splits = False, set()
    for item in iter_jsonl_items(path, lenient):
        has_answers = has_answers or item.answer is not None
        splits.add(item.meta.get("split", ""))
    split = spec.option("split") or _common_split(splits, has_answers)
    return Benchmark(
        name=spec.name,
        spec=spec.canonical(),
        source=spec,
        split=split,
        has_answers=has_answers,
        iter_items=lambda: iter_jsonl_items(path, lenient),
        description=f"medlens jsonl {os.path.basename(path)} ({split})",
    )


def _common_split(splits: set[str], has_answers: bool) -> str:
    """The split every item names in its meta, else ``val``/``test`` by whether gold is present."""
    if len(splits) == 1 and (only := next(iter(splits))):
        return only
    return "val" if has_answers else "test"


def iter_jsonl_items(path: str, lenient: bool = False) -> Iterator[Item]:
    """Stream and check the items of a jsonl file; InputError names the line and field."""
    root = os.path.realpath(os.path.dirname(path))
    seen: set[str] = set()
    bad = BadItems(path, f"; `medlens check jsonl:{path}` lists every such item")
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            item = _parse_line(path, number, raw, root)
            for where, problem in check_item(path, f"line {number}", item, lenient)[:1]:
                bad.add(number, item.id, where, problem)
            if item.id in seen:
                raise InputError(path, f"line {number}, field 'id'", f"duplicate id {item.id!r}")
            seen.add(item.id)
            yield item
    bad.refuse()  # every item read: the refusal names them all
    if not seen:
        raise InputError(path, None, "empty file: no items")


def _parse_line(path: str, number: int, raw: bytes, root: str) -> Item:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        problem = f"bytes that are not UTF-8 at column {exc.start + 1}"
        raise InputError(path, f"line {number}", problem) from None
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at column {exc.colno}; truncated line?)"
        raise InputError(path, f"line {number}", problem) from None
    if not isinstance(data, dict):
        raise InputError(path, f"line {number}", "expected a JSON object (one item per line)")
    _check_fields(path, number, data)
    images = data.get("images") or []
    if not isinstance(images, list):
        raise InputError(path, f"line {number}, field 'images'", "expected a list of images")
    data["images"] = [_image(path, number, i, entry, root) for i, entry in enumerate(images)]
    if "reasoning" in data:  # a chain-of-thought exemplar's worked reasoning
        if not isinstance(data["reasoning"], str):
            raise InputError(path, f"line {number}, field 'reasoning'", "expected a string")
        data["meta"] = {**(data.get("meta") or {}), "reasoning": data["reasoning"]}
    try:
        return Item.from_json(data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(path, f"line {number}", f"not an item ({exc})") from None


def check_item(path: str, where: str, item: Item, lenient: bool = False) -> list[tuple[str, str]]:
    """The GMAI loader's checks: letter keys, yes/no words, image files (raised at once); and
    (unless `lenient`, as `medlens check` reads) the problems `check` lists the item for: gold
    not among its options and those of ``sources.answerable``, returned as (where, problem)."""
    problems = [] if lenient else [
        (f"{where}, field {name!r}", problem) for name, problem in answerable_problems(item)
    ]  # fmt: skip
    if item.kind in ("choice", "multi_choice"):
        if not item.options:
            raise InputError(path, f"{where}, field 'options'", f"a {item.kind} item needs options")
        bad = [key for key in item.options if not (len(key) == 1 and "A" <= key <= "Z")]
        if bad:
            problem = f"option keys must be letters A-Z, got {', '.join(map(repr, bad))}"
            raise InputError(path, f"{where}, field 'options'", problem)
        gold = _gold_not_an_option(item)
        if gold and not lenient:
            problems.append((f"{where}, field 'answer'", gold))
    if item.kind == "yes_no" and item.answer is not None:
        allowed = (
            ("yes", "no", "maybe")
            if item.meta.get("answer_set") == "yes/no/maybe"
            else ("yes", "no")
        )
        if item.answer not in allowed:
            problem = f"a yes_no answer is one of {', '.join(allowed)}, got {item.answer!r}"
            raise InputError(path, f"{where}, field 'answer'", problem)
    for position, image in enumerate(item.images):
        if image.source in _PATH_SOURCES and not os.path.isfile(image.path):
            problem = f"no such image file {image.name or image.path!r}"
            raise InputError(path, f"{where}, field 'images[{position}]'", problem)
    return problems


def _gold_not_an_option(item: Item) -> str | None:
    answer = item.answer
    if answer is None:
        return None
    text = str(answer)
    letters = [c for c in text if c not in ", "] if item.kind == "multi_choice" else [text]
    if letters and all(letter in item.options for letter in letters):
        return None
    return f"gold {answer!r} is not among the options ({', '.join(item.options)})"


def _check_fields(path: str, number: int, data: Mapping[str, Any]) -> None:
    for name in ("id", "question", "kind"):
        if name not in data:
            raise InputError(path, f"line {number}, field {name!r}", "missing")
    if data["kind"] not in KINDS:
        problem = f"unknown kind {data['kind']!r} (known: {', '.join(KINDS)})"
        raise InputError(path, f"line {number}, field 'kind'", problem)
    if not isinstance(data["question"], str):
        raise InputError(path, f"line {number}, field 'question'", "expected a string")
    for name in ("options", "meta"):
        if data.get(name) is not None and not isinstance(data[name], dict):
            raise InputError(path, f"line {number}, field {name!r}", "expected an object")


def _image(path: str, number: int, position: int, entry: Any, root: str) -> dict[str, Any]:
    """The image entry as ``ImageRef.to_json()`` with its path made absolute and checked."""
    where = f"line {number}, field 'images[{position}]'"
    if isinstance(entry, str):
        entry = {"source": "file", "path": entry}
    if not isinstance(entry, dict) or entry.get("source") not in (*_PATH_SOURCES, "bytes"):
        raise InputError(
            path, where, "expected a path or an object with source file|dicom|tsv|bytes"
        )
    if entry["source"] == "bytes":
        return entry
    relative = entry.get("path")
    if not isinstance(relative, str) or not relative:
        raise InputError(path, where, "image has no path")
    resolved = resolve_inside(root, relative, path, where)
    return {**entry, "path": str(resolved), "name": entry.get("name") or relative}


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "user data: the licence of the files you supply applies; medlens adds none",
    "access": "mixed",
    "homepage": "",
    "citation": "",
}
