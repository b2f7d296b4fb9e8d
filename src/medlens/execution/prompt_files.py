"""A user's prompt template in a file: ``run --prompt file:PATH``.

Two layouts:

- a text file (any name but ``.toml``): one template for every item kind;
- a TOML file: ``[prompts]`` with one template per item kind (``choice``, ``open``, ``yes_no``,
  ``multi_choice``, ``classify``, ``detect``, ``report``) and ``default`` for the kinds without
  one, plus an optional ``version`` (the user's own label, recorded) and ``description``.

A template is the text sent after the images, with these placeholders (``{{`` and ``}}`` are
literal braces): :data:`PLACEHOLDERS`. Read with ``string.Formatter`` (the standard library's
own parser of this syntax). Checked before anything is written, one line naming the file, its
line and the problem: an unknown placeholder, a placeholder with a format spec or index, an
unbalanced brace, a template without ``{question}``, a template for lettered items without
``{options}`` / ``{options_inline}`` (checked against the benchmark's item kinds), a TOML key
that is no item kind. The run records the template's texts, its version and the file's sha256
in its spec (``prompt_template``), so ``report``, ``show`` and the protocol check read what was
sent, and a changed file refuses to resume the run.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Item
from medlens.core.tomlfile import tomllib

PREFIX = "file:"
PLACEHOLDERS = {
    "question": "the item's question",
    "options": "its options, one 'A. text' per line (empty without options)",
    "options_inline": "its options on one line, 'A. text B. text'",
    "letters": "its option letters, 'A, B, C'",
    "context": "its context or hint (empty without one)",
}
KINDS = ("choice", "multi_choice", "yes_no", "open", "classify", "detect", "report")
LETTERED = ("choice", "multi_choice")


@dataclass(frozen=True)
class PromptTemplate:
    """The templates of one file, by item kind (``default`` for the others)."""

    name: str
    """The file's name (the path is not recorded: the run stays the same run where it moves)."""
    sha256: str
    version: str | None
    templates: Mapping[str, str]

    def text_for(self, kind: str) -> str | None:
        return self.templates.get(kind, self.templates.get("default"))

    def render(self, item: Item) -> str:
        template = self.text_for(item.kind)
        if template is None:  # refused when the run was prepared; a hand-edited run.json
            raise InputError(self.name, None, f"no template for {item.kind} items")
        options = item.options or {}
        return template.format(
            question=item.question,
            options="\n".join(f"{k}. {v}" for k, v in options.items()),
            options_inline=" ".join(f"{k}. {v}" for k, v in options.items()),
            letters=", ".join(options),
            context=item.context or "",
        )

    def to_spec(self) -> dict[str, Any]:
        """What the run's spec records."""
        return {"file": self.name, "sha256": self.sha256, "version": self.version,
                "templates": dict(self.templates)}  # fmt: skip


def is_prompt_file(prompt: str) -> bool:
    return prompt.startswith(PREFIX)


def load_template(prompt: str) -> PromptTemplate:
    """The template of ``file:PATH``, checked (one-line errors naming file and line)."""
    path = Path(prompt[len(PREFIX) :]).expanduser()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read the prompt template ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None
    version = None
    if path.suffix.lower() == ".toml":
        templates, version = _toml_templates(path, text)
    else:
        templates = {"default": text}
    for key, template in templates.items():
        _check(path, text, key, template)
    return PromptTemplate(path.name, hashlib.sha256(raw).hexdigest(), version, templates)


def template_of_spec(recorded: Mapping[str, Any]) -> PromptTemplate:
    """The template a run recorded (``spec["prompt_template"]``)."""
    return PromptTemplate(
        str(recorded.get("file", "")), str(recorded.get("sha256", "")),
        recorded.get("version"), dict(recorded.get("templates") or {}),
    )  # fmt: skip


def _toml_templates(path: Path, text: str) -> tuple[dict[str, str], str | None]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"prompts", "version", "description"})
    if unknown:
        raise InputError(path, _line(text, unknown[0]), f"unknown key {unknown[0]!r} (keys: "
                         "prompts, version, description)")  # fmt: skip
    prompts = data.get("prompts")
    if not isinstance(prompts, dict) or not prompts:
        raise InputError(path, None, "no [prompts] table (one template per item kind, or default)")
    templates: dict[str, str] = {}
    for key, value in prompts.items():
        if key not in (*KINDS, "default"):
            raise InputError(path, _line(text, key), f"[prompts] key {key!r} is no item kind "
                             f"({', '.join(KINDS)} or default)")  # fmt: skip
        if not isinstance(value, str):
            raise InputError(path, _line(text, key), f"[prompts] {key} must be a string")
        templates[key] = value
    version = data.get("version")
    return templates, None if version is None else str(version)


def _check(path: Path, text: str, key: str, template: str) -> None:
    """Placeholders known and plain, braces balanced, the question sent, options for lettered
    kinds."""
    where = f"template {key!r}" if key != "default" or path.suffix.lower() == ".toml" else None
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InputError(path, where, f"{exc} (write a literal brace as {{{{ or }}}})") from None
    fields = []
    for _, name, spec, conversion in parsed:
        if name is not None:
            _plain(path, text, name, spec, conversion)
            fields.append(name)
    for name in fields:
        if name not in PLACEHOLDERS:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise InputError(
                path, _line(text, "{" + name), f"unknown placeholder {{{name}}} (known: {known})"
            )
    if "question" not in fields:
        raise InputError(path, where, "the template never sends {question}")
    if key in LETTERED and not {"options", "options_inline"} & set(fields):
        raise InputError(
            path, where, f"a {key} template must send {{options}} or {{options_inline}}"
        )


def _plain(path: Path, text: str, name: str, spec: str | None, conversion: str | None) -> None:
    if spec or conversion or not name.isidentifier():
        raise InputError(path, _line(text, "{" + name), f"placeholder {{{name}}} must be a bare "
                         "name (no index, conversion or format spec)")  # fmt: skip


def prompt_template(prompt: str, items: Iterable[Item]) -> PromptTemplate | None:
    """The user's template of ``--prompt file:PATH``, checked against the items' kinds (None
    for a built-in style)."""
    if not is_prompt_file(prompt):
        return None
    template = load_template(prompt)
    check_kinds(template, (item.kind for item in items), prompt)
    return template


def check_kinds(template: PromptTemplate, kinds: Iterable[str], prompt: str) -> None:
    """Every item kind of the benchmark has a template; lettered ones send their options."""
    for kind in sorted(set(kinds)):
        chosen = template.text_for(kind)
        if chosen is None:
            raise InputError(
                prompt[len(PREFIX) :], None, f"no template for the benchmark's {kind} items "
                f"(add [prompts] {kind} or default)",
            )  # fmt: skip
        fields = {f for _, f, _, _ in string.Formatter().parse(chosen) if f}
        if kind in LETTERED and not {"options", "options_inline"} & fields:
            raise InputError(
                prompt[len(PREFIX) :], None, f"the template used for {kind} items never sends "
                "their options ({options} or {options_inline})",
            )  # fmt: skip


def _line(text: str, needle: str) -> str | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return f"line {number}"
    return None
