"""The judge store: ``runs/<run>/judges/<name>/judge.json`` and append-only ``judgements.jsonl``
(the file handling of the ``judges`` stage; what a verdict means is theirs).

judge.json is written first; a judge stage with a different spec under the same name is
refused before anything is written. After each stage judge.json is rewritten (atomically) with
what only the replies can tell: the served models and system fingerprints of its fingerprint,
and whether the judge turned out to be the evaluated model; the fields compared on resume never
change. judgements.jsonl holds one line per
(item, repeat); a torn last line (a kill mid-write) is dropped, and errored lines are retried on
resume, so after a resume every (item, repeat) is judged exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import InputError, MedlensError, RunMismatchError
from medlens.runs.files import JsonLines, write_atomic
from medlens.runs.layout import (
    JUDGE_FILE,
    JUDGEMENTS_FILE,
    MEMBERS_DIR,
    agreement_file,
    is_judge_stage,
    judge_file,
    judgements_file,
    judges_dir,
    members_dir,
)
from medlens.runs.reading import describe_difference

if TYPE_CHECKING:  # numpy: only where columns are read
    from medlens.runs.columns import Columns, Kind

JUDGE_SCHEMA = 1
Judgement = dict[str, Any]
Key = tuple[str, int]

_COMPARED = ("schema", "name", "judge", "protocol", "scope", "repeats", "swap", "panel")
"""judge.json fields that must match to resume (`created` differs by design)."""


_SNAPSHOTS: dict[Path, tuple[tuple[int, int] | None, dict[Key, Judgement]]] = {}


def _file_state(folder: Path) -> tuple[int, int] | None:
    try:
        stat = judgements_file(folder).stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def judge_names(run_dir: Path | str) -> list[str]:
    """Names of the judge stages of a run that have a judge.json."""
    folder = judges_dir(run_dir)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if is_judge_stage(p))


def judge_dir(run_dir: Path | str, name: str) -> Path:
    """The folder of judge stage `name` of a run (``panel/members/m`` names a panel's member);
    a name that climbs out of the run's judges is refused."""
    parts = Path(name).parts
    if not name or Path(name).is_absolute() or ".." in parts or "\\" in name:
        raise MedlensError(f"{name!r} is not a judge name")
    return judges_dir(run_dir) / name


def stage_names(run_dir: Path | str) -> list[str]:
    """Every judge stage of a run, panel members included (``panel/members/m``)."""
    root = judges_dir(run_dir)
    if not root.is_dir():
        return []
    return sorted(str(p.parent.relative_to(root)) for p in root.rglob(JUDGE_FILE))


def read_judge(run_dir: Path | str, name: str) -> dict[str, Any]:
    """The judge's ``judge.json``; a missing judge names the judges the run has."""
    path = judge_file(judge_dir(run_dir, name))
    if not path.is_file():
        have = stage_names(run_dir)
        known = f" (this run has: {', '.join(have)})" if have else " (this run has no judges)"
        raise MedlensError(f"{run_dir}: no judge named {name!r}{known}")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"unreadable ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("protocol"), dict):
        raise InputError(path, "field 'protocol'", "not a judge file (no protocol object)")
    return meta


def member_folder(panel_folder: Path, member: str) -> Path:
    """The stage folder of a panel's member."""
    return members_dir(panel_folder) / member


def read_judge_json(folder: Path) -> dict[str, Any]:
    file = judge_file(folder)
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MedlensError(f"{file}: unreadable ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("protocol"), dict):
        raise MedlensError(f"{file}: not a medlens judge file (no protocol object)")
    return value


def check_resumable(folder: Path, spec: Mapping[str, Any]) -> None:
    """Refuse (changing nothing) when `folder` holds a judge stage with another spec."""
    if not is_judge_stage(folder):
        return
    old = read_judge_json(folder)
    before = {k: old.get(k) for k in _COMPARED}
    after = {k: spec.get(k) for k in _COMPARED}
    if before != after:
        raise RunMismatchError(
            f"{folder} holds a judge stage with a different spec "
            f"({describe_difference(before, after)}); use another --name or delete the folder"
        )


TRANSIENT_FAILURES = ("error",)
"""Failures a rerun of the stage asks again by default: the server's (a transport error or an
error text), not the judge's own reply (empty, cut, unparseable, out of scale: the same request
would get the same reply; ``judge --retry-errors`` asks those again)."""


class JudgeStore:
    """One judge stage of one run. Lines are appended and flushed one judgement at a time."""

    def __init__(self, folder: Path, spec: dict[str, Any]) -> None:
        self.folder = folder
        self.spec = spec
        self._lines: dict[Key, Judgement] = {}
        self._log = JsonLines(judgements_file(folder))

    @classmethod
    def open(cls, folder: Path) -> JudgeStore:
        """Open an existing stage read-only (reports)."""
        store = cls(folder, read_judge_json(folder))
        snapshot = _SNAPSHOTS.get(folder)
        if snapshot is not None and snapshot[0] == _file_state(folder):
            store._lines = snapshot[1]  # the judge stage just closed this very file
        else:
            store._load(compact=False)
        return store

    @classmethod
    def open_or_create(cls, folder: Path, spec: dict[str, Any]) -> JudgeStore:
        """Resume the stage at `folder` if its spec matches, else create it."""
        check_resumable(folder, spec)
        if is_judge_stage(folder):
            store = cls(folder, read_judge_json(folder))
            store._load(compact=True)
            return store
        folder.mkdir(parents=True, exist_ok=True)
        write_judge_json(folder, spec)
        return cls(folder, spec)

    def _load(self, compact: bool) -> None:
        """Read judgements.jsonl, keeping the latest line per (item, repeat), a success over an
        error; with `compact`, rewrite it without torn, errored or repeated lines."""
        content = self._log.read()
        dirty = content.tail is not None
        latest: dict[Key, Judgement] = {}
        for line in [*content.lines, *([content.tail] if content.tail else [])]:
            try:
                value = line.value
                key = (str(value["id"]), int(value["repeat"]))
            except (KeyError, TypeError, ValueError):
                dirty = True  # a torn line left by a kill mid-write
                continue
            previous = latest.get(key)
            dirty = dirty or previous is not None or value.get("status") == "error"
            if (
                previous is None
                or value.get("status") != "error"
                or previous.get("status") == "error"
            ):
                latest[key] = value
        if compact:
            latest = {k: v for k, v in latest.items() if v.get("status") != "error"}
            if dirty:
                self._log.rewrite(latest.values())
        self._lines = latest

    def update_spec(self, changes: Mapping[str, Any]) -> None:
        """Rewrite judge.json with `changes` merged in (never a compared field)."""
        assert not set(changes) & set(_COMPARED), "compared fields never change"
        self.spec = {**self.spec, **changes}
        write_judge_json(self.folder, self.spec)

    def lines(self) -> dict[Key, Judgement]:
        return self._lines

    def done(self, retry_failures: bool = False) -> set[Key]:
        """(item, repeat) pairs judged for good: ok, or a reply the judge gave but that holds
        no verdict (empty, cut, unparseable, out of scale) after its retry. Server errors are
        asked again on every rerun; with `retry_failures`
        (``judge --retry-errors``) every line without a verdict is."""
        return {
            key
            for key, line in self._lines.items()
            if line.get("status") == "ok"
            or (not retry_failures and line.get("status") != "error"
                and line.get("failure") not in TRANSIENT_FAILURES)
        }  # fmt: skip

    def append(self, judgement: Judgement) -> None:
        self._log.append(judgement)
        self._lines[(judgement["id"], judgement["repeat"])] = judgement

    def close(self) -> None:
        self._log.close()

    def remember(self) -> None:
        """Keep the lines for the next read-only :meth:`open` in this process (results right
        after judging), as long as the file has not changed since."""
        self.close()
        _SNAPSHOTS.clear()
        _SNAPSHOTS[self.folder] = (_file_state(self.folder), self._lines)

    def by_item(self) -> Iterator[tuple[str, list[Judgement]]]:
        """Each item's lines, in repeat order."""
        grouped: dict[str, list[Judgement]] = {}
        for (item_id, _), line in sorted(self._lines.items(), key=lambda kv: kv[0][1]):
            grouped.setdefault(item_id, []).append(line)
        return iter(grouped.items())


def write_judge_json(folder: Path, spec: Mapping[str, Any]) -> None:
    """Write a stage's judge.json (atomically), making its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(judge_file(folder), json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


def write_agreement(folder: Path, value: Mapping[str, Any]) -> Path:
    """Write a stage's agreement.json (atomically); its path."""
    path = agreement_file(folder)
    write_atomic(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    return path


def read_agreement(folder: Path) -> dict[str, Any] | None:
    """A stage's agreement.json, None when it has none; OSError or ValueError when it cannot be
    read as a JSON object."""
    path = agreement_file(folder)
    if not path.is_file():
        return None
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path}: not a JSON object")
    return value


def rewrite_judgements(folder: Path, lines: list[dict[str, Any]]) -> None:
    """Replace a stage's judgements.jsonl with `lines` (a panel's, made from its members')."""
    JsonLines(judgements_file(folder)).rewrite(lines)


def judgement_columns(folder: Path, fields: Mapping[str, Kind]) -> Columns | None:
    """The stage's lines as columns (``runs.columns``), keyed by item, when pyarrow may read
    them: one line per item, every line whole and with its repeat; None otherwise (the store
    reads the stage then, and its rules decide)."""
    from medlens.runs.columns import fast_columns

    try:
        whole = judgements_file(folder).read_bytes()
    except OSError:
        return None
    columns = fast_columns(whole, "id", {**fields, "repeat": "float"})
    if columns is None or not columns.floats["repeat"].present.all():
        return None
    return columns


def stored_replies(source: Path) -> dict[tuple[str, int], str]:
    """(item id, repeat) → raw reply of every judged line of a judge folder or its
    judgements.jsonl (the ``replay:`` judge's source): a damaged line is an error naming it,
    a torn last line is dropped."""
    file = judgements_file(source) if source.is_dir() else source
    if not file.is_file():
        raise InputError(source, None, "not a judge folder or judgements.jsonl")
    replies: dict[tuple[str, int], str] = {}
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
                key = (str(value["id"]), int(value["repeat"]))
            except (ValueError, KeyError, TypeError) as exc:
                if not line.endswith("\n"):
                    break  # a torn last line
                raise InputError(file, f"line {number}", f"not a judgement ({exc})") from None
            if isinstance(value.get("output"), str):
                replies[key] = value["output"]
    return replies


def call_lines(run_dir: Path | str) -> dict[str, list[dict[str, Any]]]:
    """Every line (not only each item's latest) of every stage's judgements.jsonl: the calls it
    paid for. A panel is read through its members (named ``<panel>/<member>``), not its own
    combined lines, which cost nothing; damaged lines are skipped, a whole torn one is kept."""
    root = judges_dir(run_dir)
    folders = [p for p in root.glob("*") if not members_dir(p).is_dir()]
    folders += list(root.glob(f"*/{MEMBERS_DIR}/*"))
    out: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted((f for f in folders if judgements_file(f).is_file()), key=judgements_file):
        name = folder.relative_to(root).as_posix().replace(f"/{MEMBERS_DIR}/", "/")
        content = JsonLines(judgements_file(folder)).read()
        lines = [*content.lines, *([content.tail] if content.tail else [])]
        out[name] = [line.value for line in lines if isinstance(line.value, dict)]
    return out


def stage_specs(run_dir: Path | str) -> list[tuple[str, dict[str, Any] | None]]:
    """(name, judge.json) of every stage of a run, in the order of their judge.json paths;
    None for a judge.json that is not a readable JSON object."""
    root = judges_dir(run_dir)
    out: list[tuple[str, dict[str, Any] | None]] = []
    for path in sorted(root.glob(f"*/{JUDGE_FILE}")):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            value = None
        out.append((path.parent.name, value if isinstance(value, dict) else None))
    return out


def item_lines(run_dir: Path | str, item_id: str) -> dict[str, list[dict[str, Any]]]:
    """Stage name → every line it holds for one item (its repeats and retries, in file order;
    damaged lines skipped), for the stages that judged it."""
    found: dict[str, list[dict[str, Any]]] = {}
    for file in sorted(judges_dir(run_dir).glob(f"*/{JUDGEMENTS_FILE}")):
        content = JsonLines(file).read()
        lines = [*content.lines, *([content.tail] if content.tail else [])]
        mine = [
            line.value
            for line in lines
            if isinstance(line.value, dict) and line.value.get("id") == item_id
        ]
        if mine:
            found[file.parent.name] = mine
    return found
