"""Parsing of ``name:argument?key=value&key=value`` specs for benchmarks, models and judges.

A spec is parsed once, where its text enters medlens: by the command line and the Python API for
what a user typed, and by :func:`medlens.runs.recorded.stored_spec` for text read back from a
run's files. Everything below those takes the parsed :class:`Spec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from medlens.core.errors import SpecError


@dataclass(frozen=True)
class Spec:
    """A parsed spec such as ``slake:data/slake?split=test&lang=en``."""

    name: str
    argument: str = ""
    options: dict[str, str] = field(default_factory=dict)
    text: str = field(default="", compare=False, repr=False)
    """The text it was parsed from ('' when built in code): what a message quotes back."""

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def __str__(self) -> str:
        return self.text or self.canonical()

    def canonical(self) -> str:
        """The spec written back in a stable form (options sorted)."""
        text = self.name + (f":{self.argument}" if self.argument else "")
        if self.options:
            text += "?" + "&".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return text


def parse_spec(text: str) -> Spec:
    """Split ``name[:argument][?options]``; options use URL query syntax."""
    text = text.strip()
    if not text:
        raise SpecError("empty spec")
    head, sep, query = text.partition("?")
    name, _, argument = head.partition(":")
    if not name:
        raise SpecError(f"spec {text!r} has no name before ':'")
    options: dict[str, str] = {}
    if sep:
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise SpecError(f"spec {text!r}: cannot read options {query!r} ({exc})") from None
        repeated = sorted({key for key, _ in pairs if sum(k == key for k, _ in pairs) > 1})
        if repeated:
            raise SpecError(
                f"spec {text!r}: option {', '.join(repeated)} given more than once (give it once)"
            )
        options = dict(pairs)
    return Spec(name=name, argument=argument, options=options, text=text)


def check_options(spec: Spec, allowed: set[str]) -> None:
    """Reject options a loader or backend does not know, naming the known ones."""
    unknown = sorted(set(spec.options) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise SpecError(f"{spec.name}: unknown option(s) {', '.join(unknown)} (known: {known})")


NUMBER_KINDS: dict[type, str] = {int: "whole number", float: "number"}
"""How an option error names the kind of number it wanted (not ``int``/``float``)."""


def int_option(spec: Spec, key: str, default: int) -> int:
    """An integer option, or SpecError naming it."""
    return int(_number_option(spec, key, default, int))


def float_option(spec: Spec, key: str, default: float) -> float:
    """A number option, or SpecError naming it."""
    return float(_number_option(spec, key, default, float))


def _number_option(spec: Spec, key: str, default: float, kind: type) -> float:
    raw = spec.options.get(key)
    if raw is None or raw == "":
        return default
    try:
        value: float = kind(raw)
    except ValueError:
        raise SpecError(
            f"{spec.name}: option {key}={raw!r} is not a {NUMBER_KINDS[kind]}"
        ) from None
    return value
