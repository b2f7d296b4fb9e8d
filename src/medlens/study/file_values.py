"""One study file's text and TOML values, with the line of each key, and the typed readers of
its values (owns how a study file is read and how a problem in it is located: every one an
:class:`InputError` naming the file, the line and the key; ``file`` reads the sections).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from medlens.analysis.cost import Price, parse_price
from medlens.core.errors import InputError, MedlensError
from medlens.core.tomlfile import tomllib
from medlens.execution.options import MAX_CONCURRENCY
from medlens.study.tomlkeys import KeyLines, KeyPath, dotted


class StudyFile:
    """One study file's text, values and key lines; `fail` raises the located InputError."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(path, None, f"cannot read the study file ({exc.strerror})") from None
        self.sha256 = hashlib.sha256(data).hexdigest()
        try:
            self.text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
        self.keys = KeyLines(self.text)
        self.values = self._parse()

    def _parse(self) -> dict[str, Any]:
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            raise self._decode_error(str(exc)) from None

    def _decode_error(self, message: str) -> InputError:
        """tomllib's message, with the line (and, for a key given twice, the key) up front."""
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", message) or "not valid TOML"
        if found is None:
            return InputError(self.path, None, f"not valid TOML ({problem})")
        line = int(found.group(1))
        lines = self.text.splitlines()
        key = self.keys.key_at(line, lines[line - 1]) if line <= len(lines) else None
        where = f"line {line}" + (f", key {key}" if key else "")
        if "overwrite" in problem or "twice" in problem:
            problem = "given twice (each label and key must be unique in its table)"
        return InputError(self.path, where, f"not valid TOML: {problem}")

    def fail(self, key: KeyPath, problem: str) -> NoReturn:
        where = f"line {self.keys.line_of(key)}, key {dotted(key)}" if key else None
        raise InputError(self.path, where, problem)

    def line(self, key: KeyPath) -> int:
        return self.keys.line_of(key)

    def check_keys(self, key: KeyPath, table: Mapping[str, Any], known: tuple[str, ...]) -> None:
        for name in table:
            if name not in known:
                self.fail((*key, name), f"unknown key (known: {', '.join(known)})")

    def parsed(self, key: KeyPath, parse: Callable[[str], Any], text: str) -> Any:
        """`parse(text)`, its SpecError located at `key`."""
        try:
            return parse(text)
        except MedlensError as exc:
            self.fail(key, str(exc))


def str_value(study: StudyFile, key: KeyPath, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        study.fail(key, f"expected a non-empty string, got {value!r}")
    return value.strip()


def comma_list(study: StudyFile, key: KeyPath, value: Any) -> tuple[str, ...]:
    """A list of strings, or one comma-separated string."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        study.fail(key, "expected a list of strings (or one comma-separated string)")
    return tuple(v.strip() for v in value)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def int_value(study: StudyFile, key: KeyPath, value: Any, minimum: int | None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        study.fail(key, f"expected a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        study.fail(key, f"{value}: expected at least {minimum}")
    return value


def optional_int(study: StudyFile, key: KeyPath, value: Any, minimum: int) -> int | None:
    return None if value is None else int_value(study, key, value, minimum)


def concurrency_value(study: StudyFile, key: KeyPath, value: Any) -> int | None:
    if value is None:
        return None
    number = int_value(study, key, value, 1)
    if number > MAX_CONCURRENCY:
        study.fail(key, f"{number}: at most {MAX_CONCURRENCY} requests in flight")
    return number


def bool_value(study: StudyFile, key: KeyPath, value: Any) -> bool:
    if not isinstance(value, bool):
        study.fail(key, f"expected true or false, got {value!r}")
    return value


def budget_value(study: StudyFile, value: Any) -> float:
    if not is_number(value) or value < 0:
        study.fail(("budget",), f"{value!r}: expected a non-negative number of USD")
    return float(value)


def price_value(study: StudyFile, key: KeyPath, value: Any) -> Price | None:
    """``"input=2.5,output=10"`` or ``{ input = 2.5, output = 10 }`` (USD per 1M tokens)."""
    if value is None:
        return None
    if isinstance(value, dict):
        study.check_keys(key, value, ("input", "output"))
        if not all(is_number(value.get(k)) and value[k] >= 0 for k in ("input", "output")):
            study.fail(key, "expected { input = USD_PER_1M, output = USD_PER_1M }, both >= 0")
        return Price(float(value["input"]), float(value["output"]))
    price: Price = study.parsed(key, parse_price, str_value(study, key, value))
    return price
