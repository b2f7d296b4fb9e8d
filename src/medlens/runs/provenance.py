"""What a run ran on: Python, platform, package versions, accelerators, weights, served models.

``run.json["environment"]`` is recorded when a run is created. It is deliberately *not* part of
the spec hash: resuming a run after upgrading numpy must not be refused. A resume on a different
environment appends that environment to ``run.json["resumed_environments"]`` and warns.
"""

from __future__ import annotations

import hashlib
import platform
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from medlens.core.specs import Spec
from medlens.core.version import __version__

RESULT_PACKAGES = ("numpy", "scipy", "pillow", "pydicom", "httpx", "scikit-learn", "sacrebleu")
"""Packages whose version can change a score, always recorded."""
BACKEND_PACKAGES = {"hf": ("torch", "transformers"), "vllm": ("torch", "transformers", "vllm")}
WEIGHT_BACKENDS = ("hf", "vllm")
_SNAPSHOT = re.compile(r"[/\\]snapshots[/\\]([0-9a-f]{40})(?:[/\\]|$)")


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_commit(source: Path | None = None) -> str | None:
    """The commit of the checkout medlens runs from (None when installed from a wheel)."""
    folder = source or Path(__file__).resolve().parent
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def accelerators() -> list[str]:
    """GPU names: from torch when it is already imported, else from nvidia-smi if present."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        except Exception:  # a broken CUDA install must not stop a run
            return []
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = subprocess.run(
            [smi, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


_FILE_HASHES: dict[tuple[str, int, int], str] = {}
"""(path, size, mtime) → sha256: a checkpoint is hashed once per process, although the run's
provenance and the response cache's key both ask for it."""


def weights_identity(path_text: str) -> dict[str, Any] | None:
    """sha256 of the safetensors files under a local checkpoint, and its hub revision if known.

    The content hash is sha256 over the sorted ``name:sha256`` lines of every ``*.safetensors``
    file, so a renamed shard or a changed tensor changes it; reading is streamed (1 MiB chunks).
    """
    folder = Path(path_text).expanduser()
    if not folder.is_dir():
        return None
    files = sorted(folder.rglob("*.safetensors"))
    per_file = {str(f.relative_to(folder)): _known_sha256(f) for f in files}
    combined = hashlib.sha256(
        "".join(f"{name}:{digest}\n" for name, digest in per_file.items()).encode("utf-8")
    ).hexdigest()
    match = _SNAPSHOT.search(str(folder.resolve()))
    return {
        "path": str(folder),
        "safetensors_sha256": combined if files else None,
        "files": per_file,
        "revision": match.group(1) if match else None,
    }


def weights_key(path_text: str) -> str:
    """One line naming a checkpoint by content (safetensors sha256) and hub revision; a path
    that is no local folder (a hub id) is named as written."""
    found = weights_identity(path_text)
    if found is None or not found["safetensors_sha256"]:  # nothing to hash: name the folder
        where = Path(path_text).expanduser()
        return f"weights=unhashed:{where.resolve() if where.exists() else path_text}"
    return f"weights={found['safetensors_sha256']};revision={found['revision'] or 'unknown'}"


def _known_sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_HASHES:
        _FILE_HASHES[key] = _file_sha256(path)
    return _FILE_HASHES[key]


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def environment(model_spec: Spec | None = None) -> dict[str, Any]:
    """The environment of this process, for a run of `model_spec`."""
    backend = model_spec.name if model_spec else ""
    argument = model_spec.argument if model_spec else ""
    names = list(RESULT_PACKAGES) + list(BACKEND_PACKAGES.get(backend, ()))
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "medlens": __version__,
        "medlens_commit": git_commit(),
        "packages": {name: package_version(name) for name in names},
        "accelerators": accelerators(),
    }
    if backend in WEIGHT_BACKENDS and argument:
        env["weights"] = weights_identity(argument)
    return env


def comparable(env: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that matter when two environments are compared (not the per-file hashes)."""
    weights = env.get("weights") or {}
    return {
        "python": env.get("python"),
        "platform": env.get("platform"),
        "medlens": env.get("medlens"),
        "medlens_commit": env.get("medlens_commit"),
        **{f"packages.{k}": v for k, v in sorted((env.get("packages") or {}).items())},
        "accelerators": ", ".join(env.get("accelerators") or []) or None,
        "weights": weights.get("safetensors_sha256"),
        "weights_revision": weights.get("revision"),
    }


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``name: old → new`` for every comparable field that differs."""
    a, b = comparable(old), comparable(new)
    return [f"{key}: {a.get(key)} → {b.get(key)}" for key in a | b if a.get(key) != b.get(key)]


def record_environment(run: dict[str, Any], model_spec: Spec, created: bool) -> list[str]:
    """Put this process's environment into `run` (a run.json mapping); warnings to print."""
    current = environment(model_spec)
    if created or "environment" not in run:
        run["environment"] = current
        return []
    changes = differences(run["environment"], current)
    if not changes:
        return []
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run.setdefault("resumed_environments", []).append({"resumed": stamp, **current})
    return [f"warning: resuming in a different environment ({'; '.join(changes)})"]


def served_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts of the `served_model` and `system_fingerprint` values the server reported."""
    models: Counter[str] = Counter()
    fingerprints: Counter[str] = Counter()
    for record in records:
        if record.get("served_model"):
            models[str(record["served_model"])] += 1
        if record.get("system_fingerprint"):
            fingerprints[str(record["system_fingerprint"])] += 1
    return {"served_model": dict(models), "system_fingerprint": dict(fingerprints)}


def records_served_summary(run_dir: Path) -> dict[str, dict[str, int]]:
    """:func:`served_summary` of a run's records, read as two columns (the run view's fast
    path where it reads as the store does, no record built)."""
    from medlens.runs.columns import STR
    from medlens.runs.view import RunView

    names = ("served_model", "system_fingerprint")
    columns = RunView(run_dir).record_columns(dict.fromkeys(names, STR))
    summary: dict[str, dict[str, int]] = {}
    for name in names:
        summary[name] = dict(Counter(value for value in columns.strings[name] if value))
    return summary


def run_differences(run_a: Mapping[str, Any], run_b: Mapping[str, Any]) -> list[str]:
    """Environment differences between two runs (empty when either lacks one)."""
    env_a, env_b = run_a.get("environment"), run_b.get("environment")
    if not isinstance(env_a, Mapping) or not isinstance(env_b, Mapping):
        return []
    return differences(env_a, env_b)


def summary_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Served model / fingerprint sets that differ between two served summaries."""
    out = []
    for key in ("served_model", "system_fingerprint"):
        if a.get(key) and b.get(key) and set(a[key]) != set(b[key]):
            out.append(f"{key}: {', '.join(sorted(a[key]))} → {', '.join(sorted(b[key]))}")
    return out


def summary_lines(run: Mapping[str, Any], records: Iterable[Mapping[str, Any]]) -> list[str]:
    """A few human lines: interpreter, key packages, accelerators, weights, served models."""
    env = run.get("environment")
    if not isinstance(env, Mapping):
        return ["not recorded (the run was made before medlens recorded it)"]
    packages = ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
    commit = env.get("medlens_commit")
    lines = [
        f"medlens {env.get('medlens')}"
        + (f" (commit {commit[:12]})" if commit else "")
        + f", Python {env.get('python')} on {env.get('platform')}",
        f"packages: {packages}",
        f"accelerators: {', '.join(env.get('accelerators') or []) or 'none'}",
    ]
    weights = env.get("weights")
    if isinstance(weights, Mapping):
        lines.append(
            f"weights: safetensors sha256 {weights.get('safetensors_sha256') or 'none found'}"
            f", revision {weights.get('revision') or 'unknown'}"
        )
    served = served_summary(records)
    for key, label in (
        ("served_model", "served model"),
        ("system_fingerprint", "system fingerprint"),
    ):
        if served[key]:
            lines.append(f"{label}: " + ", ".join(f"{v} ({n})" for v, n in served[key].items()))
    resumed = run.get("resumed_environments") or []
    if resumed:
        lines.append(f"resumed {len(resumed)} time(s) in a different environment (see run.json)")
    return lines


def record_benchmark_source(run: dict[str, Any], source: Mapping[str, Any], created: bool) -> None:
    """Put where the benchmark's files came from into run.json: on creation, and on a resume
    from other files (another revision, folder or loader) appended to
    ``resumed_benchmark_sources`` so the first stays."""
    if not source:
        return
    if created or "benchmark_source" not in run:
        run["benchmark_source"] = dict(source)
    elif run["benchmark_source"] != source:
        run.setdefault("resumed_benchmark_sources", []).append(dict(source))


def stamp_run(store: Any, model_spec: Spec, created: bool) -> None:
    """Record the environment in the run's run.json; warn about a changed one, and print a
    non-open source's access note once (when the run is created)."""
    from medlens.runs.recorded import run_card
    from medlens.sources.cards import access_note

    warnings = record_environment(store.run, model_spec, created)
    store.save_run()
    card = run_card(store.run) if created else None
    note = access_note(card) if card else None
    for line in [*warnings, *([note] if note else [])]:
        print(line, file=sys.stderr)


ServedOf = Callable[[Path], "Mapping[str, Any] | None"]
"""A run's served-model summary from a derived file, or None when there is none fresh."""


def environment_notes(
    run_dirs: Sequence[Path | str], served_of: ServedOf | None = None
) -> list[str]:
    """One line per run whose environment or served model differs from the first run's
    (for `compare` and `board`; empty when they agree or were recorded before medlens did).

    `served_of` gives a run's served-model summary without reading its records (the analysis
    layer's derived score file); a run it has none for is read, one run at a time.
    """
    from medlens.runs.view import RunView

    if len(run_dirs) < 2:
        return []

    def served(path: Path) -> Mapping[str, Any]:
        known = served_of(path) if served_of is not None else None
        if known is not None:
            return known
        return records_served_summary(path)

    paths = [Path(p) for p in run_dirs]
    first, first_run, first_served = paths[0], RunView(paths[0]).run, served(paths[0])
    notes = []
    for other in paths[1:]:
        changes = run_differences(first_run, RunView(other).run)
        changes += summary_differences(first_served, served(other))
        if changes:
            notes.append(
                f"{first.name} and {other.name} ran in different environments "
                f"({'; '.join(changes)})"
            )
    return notes


def run_notes(
    run_dirs: Sequence[Path | str], served_of: ServedOf | None = None
) -> tuple[list[str], list[str]]:
    """(:func:`environment_notes`, :func:`shared_cache_notes`) of the runs; whole records are
    read only when some run holds cached answers."""
    paths = [Path(p) for p in run_dirs]
    if len(paths) < 2:
        return [], []
    from medlens.runs.shared_cache import cache_sharing_notes

    return environment_notes(paths, served_of), cache_sharing_notes(paths)
