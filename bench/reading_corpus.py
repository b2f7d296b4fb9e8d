"""Benchmark: medlens's reading against a careful reader's verdicts on real model outputs.

    .venv/bin/python bench/reading_corpus.py                     # per file, groups, pooled
    .venv/bin/python bench/reading_corpus.py --before main       # before (a git ref) / after
    .venv/bin/python bench/reading_corpus.py --before old.json   # before (a saved run) / after
    .venv/bin/python bench/reading_corpus.py --save now.json     # keep this run for --before
    .venv/bin/python bench/reading_corpus.py --write-figures     # commit tests/reading_corpus/figures.json

Replays every corpus file (``tests/reading_corpus/<dataset>/*.jsonl``, format in its README)
through ``read_and_score(item, output, "medlens", finish_reason)`` and prints, per file, n,
agreement with the reader, Cohen's κ (sklearn), medlens's score and the reader's; the same for
the issue's groups (open/yes-no VQA, MCQ, PubMedQA) and pooled; then the disagreements by
medlens rule (``extraction.method``) and by ``reader.class``, with examples. ``--before REF``
replays the same corpus with the medlens of a git ref (its ``src/`` extracted to a temporary
folder, read in a child process) and prints both side by side, with the lines that changed.
``--write-figures`` refuses to lower a file's committed agreement by more than half a point
unless ``--allow-drop`` is given (a verdict corrected by the corpus's reader, say why).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "reading_corpus"


def _harness(by_path: bool) -> tuple[ModuleType, ModuleType]:
    """(reading_corpus, reader_agreement): imported, or in a ``--before`` child loaded from this
    tree's files while the rest of medlens is the older one on PYTHONPATH."""
    if not by_path:
        from medlens.scoring import reader_agreement, reading_corpus

        return reading_corpus, reader_agreement
    import importlib.util

    loaded = []
    for name in ("reading_corpus", "reader_agreement"):
        spec = importlib.util.spec_from_file_location(
            f"medlens.scoring.{name}", ROOT / "src" / "medlens" / "scoring" / f"{name}.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        loaded.append(module)
    return loaded[0], loaded[1]


def replay_corpus(corpus: Path, by_path: bool = False) -> dict[str, Any]:
    """Every line's verdict and the figures per file, per group and pooled."""
    reading_corpus, agreement = _harness(by_path)
    files = reading_corpus.load_corpus(corpus)
    started = time.perf_counter()
    pairs = [(line, agreement.replay(line)) for f in files for line in f.lines]
    seconds = time.perf_counter() - started
    per_file = {}
    for f in files:
        verdicts = [v for line, v in pairs if line.file == f.name]
        per_file[f.name] = agreement.figures(f.lines, verdicts).to_json()
    groups = {
        name: agreement.figures(lines, verdicts).to_json()
        for name, (lines, verdicts) in agreement.grouped(pairs).items()
    }
    lines, verdicts = [p[0] for p in pairs], [p[1] for p in pairs]
    return {
        "files": per_file,
        "groups": groups,
        "pooled": agreement.figures(lines, verdicts).to_json() if lines else None,
        "verdicts": [v.to_json() for v in verdicts],
        "seconds": seconds,
        "_pairs": pairs,
    }


def replay_at(ref: str, corpus: Path) -> dict[str, Any]:
    """The same corpus read by the medlens of git `ref` (a child process on its ``src/``)."""
    with tempfile.TemporaryDirectory(prefix="medlens-before-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=False
        )
        if archive.returncode != 0:
            sys.exit(f"--before {ref}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        out = Path(folder) / "before.json"
        env = {**os.environ, "PYTHONPATH": str(Path(folder) / "src")}
        command = [sys.executable, __file__, "--corpus", str(corpus), "--child", str(out)]
        subprocess.run(command, env=env, check=True)
        data: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return data


def _fmt(value: float | None, width: int = 6) -> str:
    return f"{'–':>{width}}" if value is None else f"{value:{width}.3f}"


def print_table(now: dict[str, Any], before: dict[str, Any] | None) -> None:
    rows = [*now["files"].items()]
    rows += [(f"[{name}]", figures) for name, figures in now["groups"].items()]
    if now["pooled"]:
        rows.append(("[pooled]", now["pooled"]))
    width = max([len(name) for name, _ in rows] + [4])
    was_rows = _rows(before) if before else {}
    head = f"{'file':<{width}} {'n':>5} {'agree':>6} {'κ':>6} {'medlens':>7} {'reader':>6}"
    print(head + ("   agree before→after (Δ)   κ before→after" if before else ""))
    for name, f in rows:
        line = (f"{name:<{width}} {f['n']:>5} {_fmt(f['agreement'])} {_fmt(f['kappa'])} "
                f"{_fmt(f['medlens_score'], 7)} {_fmt(f['reader_score'])}")  # fmt: skip
        was = was_rows.get(name)
        if before is not None and was is not None:
            delta = (f["agreement"] - was["agreement"]) * 100
            line += (f"   {was['agreement']:.3f}→{f['agreement']:.3f} ({delta:+5.1f} pt)"
                     f"   {_fmt(was['kappa'], 5)}→{_fmt(f['kappa'], 5).strip()}")  # fmt: skip
        elif before is not None:
            line += "   (new)"
        print(line)


def _rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = dict(result["files"])
    rows.update({f"[{name}]": figures for name, figures in result["groups"].items()})
    if result.get("pooled"):
        rows["[pooled]"] = result["pooled"]
    return rows


def _example(line: Any, verdict: Any) -> str:
    said = " ".join(str(line.output or "").split())
    said = said if len(said) <= 160 else said[:100] + " … " + said[-55:]
    reader = line.reader_credited if line.kind == "open" else line.reader_answer
    ours = verdict.score == 1.0 if line.kind == "open" else verdict.answer
    cut = ", cut" if line.finish_reason == "length" else ""
    return (f"    {line.file}:{line.line} ({line.kind}{cut}) gold {line.gold!r}  reader "
            f"{reader!r}  medlens {ours!r} [{verdict.method}]\n      {said!r}")  # fmt: skip


def print_disagreements(pairs: list[tuple[Any, Any]], examples: int, agreement: Any) -> None:
    wrong = [(line, v) for line, v in pairs if not v.agrees]
    print(f"\n{len(wrong)} disagreements")
    for title, key in (("medlens rule", lambda p: agreement.rule_of(p[1])),
                       ("reader.class", lambda p: p[0].reader_class)):  # fmt: skip
        by: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
        for pair in wrong:
            by[key(pair)].append(pair)
        print(f"\nby {title}:")
        for name, found in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {name}: {len(found)}")
            if title == "medlens rule":
                for line, verdict in found[:examples]:
                    print(_example(line, verdict))


def print_changes(now: dict[str, Any], before: dict[str, Any], examples: int) -> None:
    """Lines whose agreement changed between the two readings."""
    was = {(v["file"], v["line"]): v for v in before["verdicts"]}
    fixed, broken = [], []
    for line, verdict in now["_pairs"]:
        old = was.get((line.file, line.line))
        if old is not None and old["agrees"] != verdict.agrees:
            (fixed if verdict.agrees else broken).append((line, verdict, old))
    print(f"\nchanged against before: {len(fixed)} now agree, {len(broken)} no longer agree")
    for title, found in (("no longer agree", broken), ("now agree", fixed)):
        for line, verdict, old in found[: examples * 5]:
            print(f"  {title}: was [{old['method']}] {old['answer']!r}")
            print(_example(line, verdict))


def write_figures(now: dict[str, Any], path: Path, allow_drop: bool, agreement: Any) -> None:
    committed = json.loads(path.read_text("utf-8")) if path.exists() else {"files": {}}
    drops = [
        (name, why)
        for name, why in agreement.figure_drops(
            {n: agreement.Figures(**f) for n, f in now["files"].items()}, committed
        )
        if why.startswith("agreement")
    ]
    if drops and not allow_drop:
        for name, why in drops:
            print(f"{name}: {why}", file=sys.stderr)
        sys.exit("refused: agreement would drop (fix the reading, or --allow-drop and say why)")
    keep = ("n", "agreement", "kappa")
    data = {
        "about": "per-file agreement of medlens's reading with the reader's verdicts; written "
        "by bench/reading_corpus.py --write-figures, checked by tests/extract/"
        "test_reading_corpus.py (no file may fall more than 0.5 point below its figure)",
        "files": {n: {k: _rounded(f[k]) for k in keep} for n, f in sorted(now["files"].items())},
        "groups": {n: {k: _rounded(f[k]) for k in keep} for n, f in now["groups"].items()},
        "pooled": {k: _rounded(now["pooled"][k]) for k in keep} if now["pooled"] else None,
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {path} ({len(data['files'])} files)")


def _rounded(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def _saved(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if not key.startswith("_")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus folder")
    parser.add_argument("--before", help="git ref, or a JSON saved with --save")
    parser.add_argument("--save", type=Path, help="save this run (for a later --before)")
    parser.add_argument("--write-figures", action="store_true", help="write CORPUS/figures.json")
    parser.add_argument("--allow-drop", action="store_true", help="with --write-figures")
    parser.add_argument("--examples", type=int, default=3, help="examples per rule")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.child.write_text(json.dumps(_saved(replay_corpus(args.corpus, True))), "utf-8")
        return
    _, agreement = _harness(False)
    now = replay_corpus(args.corpus)
    before = None
    if args.before:
        saved = Path(args.before)
        before = json.loads(saved.read_text("utf-8")) if saved.is_file() else replay_at(
            args.before, args.corpus
        )  # fmt: skip
    print(f"{len(now['verdicts'])} outputs in {len(now['files'])} files, "
          f"read in {now['seconds']:.2f} s\n")  # fmt: skip
    print_table(now, before)
    print_disagreements(now["_pairs"], args.examples, agreement)
    if before is not None:
        print_changes(now, before, args.examples)
    if args.save:
        args.save.write_text(json.dumps(_saved(now)), "utf-8")
    if args.write_figures:
        write_figures(now, args.corpus / "figures.json", args.allow_drop, agreement)


if __name__ == "__main__":
    main()
