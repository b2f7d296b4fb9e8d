"""Exports that drop medlens results into existing pipelines.

- ``every-eval-ever``: the Every Eval Ever schema (:mod:`medlens.report.eee`; runs and boards).
- ``gmai-submission``: the GMAI-MMBench TEST submission, an xlsx with the benchmark's own
  columns (no images) plus ``prediction``.
- ``vlmeval``: a VLMEvalKit-style result set: the per-item table (``index, prediction, answer,
  hit, log``, then the benchmark's columns) and one accuracy CSV per GMAI breakdown with
  ``split, Overall, <values>`` as fractions, computed the way VLMEvalKit does it (see
  VLMEVAL_COMPAT.md): ``hit`` is the exact-matching score, a breakdown value's accuracy is the
  mean of its hits, values are sorted, ``split`` is ``none``, every field is quoted. Files are
  named as VLMEvalKit names them for model ``{run}`` on dataset ``GMAI-MMBench_VAL`` /
  ``GMAI-MMBench_TEST`` (a custom TSV: its file stem): ``{run}_{dataset}_acc.csv`` and
  ``{run}_{dataset}_{group}_acc.csv`` (``RATING_FORMAT`` and ``GMAIMMBenchDataset.evaluate``'s
  ``get_intermediate_file_path(eval_file, f'_{group}_acc', 'csv')``).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import MedlensError
from medlens.report.export_file import ExportFile

if TYPE_CHECKING:
    import pandas as pd

    from medlens.analysis.score_source import ScoreSource
    from medlens.core.items import Item
    from medlens.core.records import Record

EXPORT_FORMATS = ("gmai-submission", "vlmeval", "every-eval-ever")
BREAKDOWNS = ("clinical vqa task", "department", "perceptual granularity")
"""VLMEvalKit's GMAI-MMBench breakdown columns (its column names are lower-cased)."""
DERIVED_KEYS = frozenset({"task", "granularity", "image_id", "split"})
"""Metadata keys medlens adds to GMAI items; every other key is a native TSV column."""
NO_ANSWER_KEY = (
    "this split has no gold answers: scores need the official answer key; "
    "export the submission with `medlens export RUN --format gmai-submission`"
)


SUBMISSION_KINDS = ("choice", "multi_choice")


def export_run(run_dir: Path, fmt: str, source: ScoreSource | None = None) -> list[ExportFile]:
    """The files of export `fmt` for the run at `run_dir`; `source` (``--score``) sets the
    ``hit`` of a VLMEvalKit result set (a GMAI submission holds predictions, no scores)."""
    from medlens.runs.view import RunView

    if fmt not in EXPORT_FORMATS:
        raise MedlensError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")
    if fmt == "every-eval-ever":
        from medlens.report.eee import EeeSettings, export_eee

        return export_eee([run_dir], EeeSettings(score=source))
    if source is not None and source.judged and fmt == "gmai-submission":
        raise MedlensError(
            f"--score {source.label}: a gmai-submission holds predictions, not scores "
            "(use --format vlmeval for judged hits)"
        )
    store = RunView(run_dir)
    items, records = store.items(), store.records()
    # file names without spaces (or other blanks): shells, URLs and VLMEvalKit's globs split them
    stem = re.sub(r"\s+", "_", Path(run_dir).resolve().name.strip())
    if fmt == "gmai-submission":
        probe = store.run["spec"].get("probe")
        if probe:
            raise MedlensError(
                f"{run_dir}: a --probe {probe} run answered altered items; "
                "its predictions are no submission (export the run without the probe)"
            )
        not_mcq = [item for item in items if item.kind not in SUBMISSION_KINDS]
        if not_mcq:
            bench_spec = store.run["spec"]["benchmark"].get("spec", "this benchmark")
            raise MedlensError(
                f"{run_dir}: --format gmai-submission is for GMAI-MMBench's multiple-choice "
                f"items; {len(not_mcq)} of {len(items)} items of {bench_spec} are not (e.g. "
                f"item {not_mcq[0].id!r}: {not_mcq[0].kind})"
            )
        return [ExportFile(f"{stem}_submission.xlsx", submission_xlsx(items, records))]
    if not store.run["spec"]["benchmark"].get("has_answers", True):
        raise MedlensError(f"{run_dir}: {NO_ANSWER_KEY}")
    dataset = vlmeval_dataset(store.run)
    stem = f"{stem}_{dataset}" if dataset else stem
    if source is not None and source.judged:
        from medlens.analysis.score_source import sourced_run

        run = sourced_run(store.path, items, records, source)
        return vlmeval_result_set(run.items, run.records, stem, source.label)
    return vlmeval_result_set(items, records, stem)


def vlmeval_dataset(run: dict[str, Any]) -> str | None:
    """The dataset name VLMEvalKit gives the run's TSV (GMAI's official names, else the TSV's
    stem: ``sources.gmai_files``); None for benchmarks VLMEvalKit does not read."""
    from medlens.runs.recorded import stored_spec
    from medlens.sources.gmai_files import dataset_name

    bench = run["spec"]["benchmark"]
    spec = stored_spec(str(bench.get("spec", "")))
    path = Path(spec.argument).expanduser()
    if spec.name == "gmai":
        return dataset_name(path, str(bench.get("split", "")))
    return path.stem if spec.name == "vlmeval" else None


def incomplete_warning(run_dir: Path) -> str | None:
    """One line when the export leaves items out (never run) or empty (errored), else None."""
    from medlens.analysis.artifacts import fresh_results

    counts = fresh_results(Path(run_dir))["counts"]
    pending, errored = counts["pending"], counts["errors"]
    if not pending and not errored:
        return None
    parts = (
        [f"{pending} of {counts['items']} items have no record and are left out"] if pending else []
    )
    if errored:
        parts.append(f"{errored} errored items have an empty prediction")
    return f"warning: {'; '.join(parts)}; rerun the same `medlens run` to complete the run"


def write_export(files: Sequence[ExportFile], output: Path) -> list[Path]:
    """Write one file to `output`, or several into the directory `output`."""
    if len(files) == 1 and output.suffix:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(files[0].content)
        return [output]
    if output.exists() and not output.is_dir():
        raise MedlensError(
            f"--output {output}: is a file; this export writes {len(files)} files, give a folder"
        )
    if output.suffix.lower() in (".xlsx", ".csv", ".tsv") and not output.is_dir():
        raise MedlensError(f"{output}: this export writes {len(files)} files; give a directory")
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for file in files:
        path = output / file.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file.content)
        written.append(path)
    return written


# -- tables ------------------------------------------------------------------------------------
def native_columns(items: Sequence[Item]) -> list[str]:
    """The benchmark's own metadata columns, in file order."""
    seen: dict[str, None] = {}
    for item in items:
        for key in item.meta:
            if key not in DERIVED_KEYS:
                seen.setdefault(key, None)
    return list(seen)


def option_letters(items: Sequence[Item]) -> list[str]:
    return sorted({letter for item in items for letter in item.options})


def benchmark_rows(items: Sequence[Item], records: dict[str, Record]) -> list[dict[str, Any]]:
    """One row per item with a record: index, question, hint, options, answer, native columns."""
    letters, natives = option_letters(items), native_columns(items)
    rows = []
    for item in items:
        record = records.get(item.id)
        if record is None:
            continue
        row: dict[str, Any] = {"index": _index(item.id), "question": item.question}
        row["hint"] = item.context or ""
        row.update({letter: item.options.get(letter, "") for letter in letters})
        if item.answer is not None:
            row["answer"] = str(item.answer)
        row.update({key: item.meta.get(key, "") for key in natives})
        if str(row["index"]) != item.id:  # a native per-task index (MMBU): the item's id is unique
            row["index"] = _index(item.id)
        row["prediction"] = record.get("output") or ""
        rows.append(row)
    return rows


def _index(item_id: str) -> int | str:
    """GMAI indices are integers; keep them integers so spreadsheets sort them as numbers."""
    return int(item_id) if item_id.isdigit() else item_id


def submission_xlsx(items: Sequence[Item], records: dict[str, Record]) -> bytes:
    """The TEST submission: benchmark columns without images, plus ``prediction``."""
    import pandas as pd

    rows = benchmark_rows(items, records)
    if not rows:
        raise MedlensError("the run has no records yet: nothing to submit")
    return _xlsx(pd.DataFrame(rows))


def _xlsx(frame: pd.DataFrame) -> bytes:
    from medlens.core.spreadsheet import frame_xlsx

    return frame_xlsx(frame)


def result_table(
    items: Sequence[Item], records: dict[str, Record], source: str = "rules"
) -> pd.DataFrame:
    """VLMEvalKit's per-item table: ``index, prediction, answer, hit, log`` then the rest.

    ``hit`` is the VLMEvalKit exact-matching score; an errored item (no output) is a miss, as
    VLMEvalKit scores its failed-API predictions. Under a judged `source` (``judge:NAME``,
    ``combined:NAME``) ``hit`` is the sourced score in [0, 1], empty without a verdict.
    """
    import pandas as pd

    rows = benchmark_rows(items, records)
    for row in rows:
        record = records[str(row["index"])]
        compat = record.get("vlmeval") or {}
        if source == "rules":
            row["hit"] = int(compat.get("score") or 0)
            row["log"] = _log(record, compat)
        else:
            row["hit"] = record.get("score")
            row["log"] = f"{source}: " + ("no verdict" if row["hit"] is None else f"{row['hit']:g}")
    frame = pd.DataFrame(rows)
    # VLMEvalKit lower-cases every column except the option letters.
    frame.columns = [c if len(c) == 1 and c.isupper() else c.lower() for c in frame.columns]
    first = ["index", "prediction", "answer", "hit", "log"]
    return frame[first + [c for c in frame.columns if c not in first]]


def _log(record: Record, compat: dict[str, Any]) -> str:
    if record.get("error") is not None:
        return f"no prediction: {record['error'].get('type')}: {record['error'].get('message')}"
    answer = compat.get("answer")
    method = compat.get("method", "")
    return f"exact matching: {answer if answer is not None else 'no answer'} ({method})"


def accuracy_by(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """One row per split: ``split``, ``Overall`` and the mean hit of each value of `column`."""
    import pandas as pd

    splits = sorted(set(frame["split"])) if "split" in frame else ["none"]
    split_of = frame["split"] if "split" in frame else pd.Series(["none"] * len(frame))
    table: dict[str, list[Any]] = {"split": splits}
    table["Overall"] = [frame["hit"][split_of.to_numpy() == s].mean() for s in splits]
    for value in sorted(set(frame[column].astype(str))):
        chosen = frame[column].astype(str).to_numpy() == value
        table[value] = [frame["hit"][chosen & (split_of.to_numpy() == s)].mean() for s in splits]
    return pd.DataFrame(table)


def accuracy_csv(frame: pd.DataFrame) -> bytes:
    """CSV as VLMEvalKit dumps it: no index, every field quoted, floats in shortest repr."""
    return frame.to_csv(index=False, quoting=csv.QUOTE_ALL).encode("utf-8")


def vlmeval_result_set(
    items: Sequence[Item], records: dict[str, Record], stem: str, source: str = "rules"
) -> list[ExportFile]:
    """Per-item result xlsx plus one ``_acc.csv`` per breakdown the benchmark has."""
    frame = result_table(items, records, source)
    if frame.empty:
        raise MedlensError("the run has no records yet: nothing to export")
    files = [ExportFile(f"{stem}_exact_matching_result.xlsx", _xlsx(frame))]
    overall = accuracy_by(frame.assign(_all="Overall"), "_all")[["split", "Overall"]]
    files.append(ExportFile(f"{stem}_acc.csv", accuracy_csv(overall)))
    for column in BREAKDOWNS:
        if column in frame:
            table = accuracy_by(frame, column)
            files.append(ExportFile(f"{stem}_{column}_acc.csv", accuracy_csv(table)))
    return files
