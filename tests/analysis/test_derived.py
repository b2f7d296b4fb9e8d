"""Derived results (results.json and the score file) are reused while fresh and rebuilt when the
records, the judges, medlens's version, the extraction mode or the score source change; what
they give equals a from-scratch build byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.analysis.artifacts import fresh_results, fresh_score_table, public
from medlens.analysis.results import build_results_and_table
from medlens.cli import app
from medlens.runs.artifacts import STAMP, Variant, basis_of, file_sha256
from medlens.runs.store import RunStore
from medlens.runs.view import RunView

runner = CliRunner()


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl_benchmark(tmp_path_factory.mktemp("bench"), n_items=120, seed=7)


def vlmeval_run(bench: Path, folder: Path, *extra: str) -> Path:
    """A run scored with VLMEvalKit's rules: its results re-read every answer the medlens way
    (the extraction sensitivity), so building them calls the extractor once per answer."""
    return named_run(f"jsonl:{bench}", "random?seed=3", folder, "v", "--extract", "vlmeval", *extra)


class Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import medlens.analysis.results as results
        import medlens.extract as extract

        self.extractions = 0
        self.builds = 0
        real_extract, real_build = extract.extract, results.build_results_and_table

        def counted_extract(*args: Any, **kwargs: Any) -> Any:
            self.extractions += 1
            return real_extract(*args, **kwargs)

        def counted_build(*args: Any, **kwargs: Any) -> Any:
            self.builds += 1
            return real_build(*args, **kwargs)

        monkeypatch.setattr(extract, "extract", counted_extract)
        monkeypatch.setattr(results, "build_results_and_table", counted_build)


def report_json(run_dir: Path) -> Any:
    result = runner.invoke(app, ["report", str(run_dir), "--format", "json"])
    assert result.exit_code == 0, result.output
    return result


def from_scratch(run_dir: Path) -> dict[str, Any]:
    """build_results on a fresh store, stamped as the derived layer stamps it."""
    view = RunView(run_dir)
    results, _ = build_results_and_table(view)
    results[STAMP] = basis_of(run_dir, Variant(view.extract)).stamp()
    return public(results)


def test_a_finished_run_leaves_stamped_results_and_a_score_file(
    bench: Path, tmp_path: Path
) -> None:
    run = vlmeval_run(bench, tmp_path)
    saved = json.loads((run / "results.json").read_text(encoding="utf-8"))
    stamp = saved[STAMP]
    assert stamp["score_source"] == "rules" and stamp["extract"] == "vlmeval"
    assert stamp["medlens_version"] == basis_of(run, Variant("vlmeval")).medlens_version
    assert stamp["files"]["records.jsonl"] == file_sha256(run / "records.jsonl")
    assert set(stamp["files"]) == {"run.json", "items.jsonl", "records.jsonl"}
    assert (run / "derived" / "scores.vlmeval.rules.arrow").is_file()


def test_fresh_results_are_read_without_extracting_anything(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    run = vlmeval_run(bench, tmp_path)
    twin = shutil.copytree(run, tmp_path / "twin")  # compare refuses a run against itself
    counts = Counts(monkeypatch)
    for command in (["report", str(run), "--format", "json"], ["report", str(run)],
                    ["slice", str(run), "--by", "department"], ["runs", str(tmp_path)],
                    ["export", str(run), "-f", "vlmeval", "--output", str(tmp_path / "x")],
                    ["compare", str(run), str(twin)]):  # fmt: skip
        result = runner.invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
        assert "stale" not in result.output
    assert counts.extractions == 0 and counts.builds == 0


def test_calibrate_and_board_of_fresh_runs_extract_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provenance_fixture import write_gmai_choice_tsv, write_replay

    tsv = write_gmai_choice_tsv(tmp_path / "data", 40)
    replay = write_replay(tmp_path / "data", 40, 22)
    runs = [
        named_run(f"gmai:{tsv}", model, tmp_path / "runs", name, "--extract", "vlmeval")
        for name, model in (("replayed", f"replay:{replay}"), ("random", "random?seed=5"))
    ]
    counts = Counts(monkeypatch)
    for command in (
        [
            "calibrate",
            str(runs[0]),
            "--reference",
            "gmai-val",
            "--as",
            "GPT-4o",
            "--allow-partial",
            "--json",
        ],
        ["board", *map(str, runs), "--json"],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
        assert "stale" not in result.output
    assert counts.extractions == 0 and counts.builds == 0


def test_report_output_equals_a_from_scratch_build(bench: Path, tmp_path: Path) -> None:
    run = vlmeval_run(bench, tmp_path)
    reused = report_json(run).stdout
    assert json.loads(reused) == from_scratch(run)
    assert reused == json.dumps(from_scratch(run), indent=2, ensure_ascii=False) + "\n"
    text, markdown = (
        runner.invoke(app, ["report", str(run), *f]).stdout for f in ([], ["-f", "md"])
    )
    shutil.rmtree(run / "derived")
    (run / "results.json").unlink()
    assert report_json(run).stdout == reused  # rebuilt from the records alone
    assert runner.invoke(app, ["report", str(run)]).stdout == text
    assert runner.invoke(app, ["report", str(run), "-f", "md"]).stdout == markdown


def test_the_score_file_gives_the_score_table_it_was_built_from(
    bench: Path, tmp_path: Path
) -> None:
    from medlens.analysis.score_table import score_table
    from medlens.analysis.slices import load_slice_table, slice_table

    run = vlmeval_run(bench, tmp_path)
    store = RunStore.open(run)
    built = score_table(store.items(), store.records())
    read = fresh_score_table(run)
    assert read.ids == built.ids and list(read.meta) == list(built.meta)
    for name in ("score", "vlmeval", "random", "status", "cluster"):
        assert getattr(read, name).tolist() == getattr(built, name).tolist(), name
    assert all(read.meta[k].tolist() == built.meta[k].tolist() for k in built.meta)
    assert list(read.secondary) == list(built.secondary)
    assert load_slice_table(run).table.equals(slice_table(built).table)


def test_slice_and_board_print_the_same_from_score_files_or_records(
    bench: Path, tmp_path: Path
) -> None:
    first = named_run(f"jsonl:{bench}", "first", tmp_path, "first")
    second = vlmeval_run(bench, tmp_path)
    commands = (["slice", str(second), "--by", "department,modality", "--json"],
                ["board", str(first), str(second), "--by", "department", "--json"])  # fmt: skip
    reused = [runner.invoke(app, c).stdout for c in commands]
    for run in (first, second):
        shutil.rmtree(run / "derived")
    assert [runner.invoke(app, c).stdout for c in commands] == reused


@pytest.mark.parametrize("change", ["append", "compaction", "resume"])
def test_changed_records_rebuild_the_results_and_say_so(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    run = vlmeval_run(bench, tmp_path, "--limit", "60")
    if change == "resume":  # the same run continued: 60 more answers, results rebuilt by `run`
        vlmeval_run(bench, tmp_path)
        counts = Counts(monkeypatch)
        result = report_json(run)
        assert counts.builds == 0 and json.loads(result.stdout)["counts"]["records"] == 120
        return
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines()
    if change == "append":  # a record added by hand (or by another tool) after the run
        record = json.loads(lines[0])
        (run / "records.jsonl").write_text("\n".join([*lines, json.dumps(record)]) + "\n")
    else:  # compaction: the same records, rewritten in another order
        (run / "records.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    counts = Counts(monkeypatch)
    result = report_json(run)
    assert (
        "results.json is stale (records.jsonl changed since it was built): rebuilt" in result.stderr
    )
    assert counts.builds == 1 and counts.extractions == 60  # the medlens reading of 60 answers
    assert json.loads(result.stdout) == from_scratch(run)
    counts.builds = counts.extractions = 0
    report_json(run)  # rebuilt once, then fresh again
    assert counts.builds == 0 and counts.extractions == 0


def test_a_touched_but_unchanged_file_is_still_fresh(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = vlmeval_run(bench, tmp_path)
    data = (run / "records.jsonl").read_bytes()
    (run / "records.jsonl").write_bytes(data)  # a new modification time, the same bytes
    counts = Counts(monkeypatch)
    report_json(run)
    assert counts.builds == 0


def test_another_medlens_version_rebuilds(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medlens.core.version as version

    run = vlmeval_run(bench, tmp_path)
    monkeypatch.setattr(version, "__version__", "99.0")
    counts = Counts(monkeypatch)
    result = report_json(run)
    assert "built by medlens 0.1.0, this is 99.0" in result.stderr
    assert counts.builds == 1
    stamp = json.loads((run / "results.json").read_text(encoding="utf-8"))[STAMP]
    assert stamp["medlens_version"] == "99.0"


def test_a_judge_stage_makes_the_results_stale(bench: Path, tmp_path: Path) -> None:
    run = vlmeval_run(bench, tmp_path)
    folder = run / "judges" / "j"
    folder.mkdir(parents=True)
    (folder / "judgements.jsonl").write_text("")
    basis = basis_of(run, Variant("vlmeval"))
    stamp = json.loads((run / "results.json").read_text(encoding="utf-8"))[STAMP]
    assert basis.difference(stamp) == "judges/j/judgements.jsonl changed since it was built"


def test_another_score_source_gets_its_own_file_beside_results_json(
    bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medlens.analysis.results as results

    run = vlmeval_run(bench, tmp_path)
    before = (run / "results.json").read_bytes()
    table = build_results_and_table(RunView(run))[1]
    calls: list[str] = []

    def judged(view: RunView, source: Any) -> tuple[dict[str, Any], Any]:
        calls.append(f"{view.name} {source.label}")
        return {"run": view.name, "overall": {"score": 0.5}}, table

    monkeypatch.setattr(results, "build_results_and_table", judged)
    got = fresh_results(run, score_source="judge:panel")
    assert got["overall"] == {"score": 0.5} and got[STAMP]["score_source"] == "judge:panel"
    assert (run / "derived" / "results.vlmeval.judge-panel.json").is_file()
    assert (run / "derived" / "scores.vlmeval.judge-panel.arrow").is_file()
    assert (run / "results.json").read_bytes() == before
    assert fresh_results(run, score_source="judge:panel") == got
    assert calls == ["v judge:panel"]  # fresh the second time


def test_a_run_being_written_is_rebuilt_in_memory_only(bench: Path, tmp_path: Path) -> None:
    from medlens.runs.lock import hold_run_lock

    run = vlmeval_run(bench, tmp_path)
    (run / "results.json").unlink()
    with hold_run_lock(run, "test writer"):
        results = fresh_results(run, note=None)
    assert results["counts"]["records"] == 120
    assert not (run / "results.json").exists()


def test_a_moved_run_keeps_its_results(bench: Path, tmp_path: Path) -> None:
    run = vlmeval_run(bench, tmp_path)
    moved = shutil.copytree(run, tmp_path / "elsewhere")
    results = fresh_results(moved)
    assert results["run"] == "elsewhere"
    assert results == {**from_scratch(moved), "run": "elsewhere"}
