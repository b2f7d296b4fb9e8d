"""Each bad input of issue 10 through a real `medlens` subprocess: one line naming what is wrong,
exit 2, no traceback, and nothing left behind (no run folder, no changed file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Runs medlens with some modules made unimportable, as on an install without that extra.
WITHOUT = (
    "import sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = ['medlens', *sys.argv[2:]]\n"
    "from medlens.cli import main\n"
    "main()\n"
)


def medlens(tmp: Path, *args: str, without: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEDLENS_CACHE": str(tmp / "cache")}
    command = [sys.executable, "-c", WITHOUT, without, *args] if without else [
        sys.executable, "-m", "medlens", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=env, cwd=tmp)


def write_bench(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bench.jsonl"
    lines = [
        {"id": str(i), "question": f"Which organ {i}?", "kind": "choice",
         "options": {"A": "liver", "B": "lung"}, "answer": "A", "meta": {"modality": "CT"}}
        for i in range(4)
    ]  # fmt: skip
    lines.append({"id": "open", "question": "Which organ?", "kind": "open", "answer": "liver",
                  "meta": {"modality": "CT"}})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def assert_one_line_exit_2(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    message = proc.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith("medlens: error: ") and needle in message, message


RUN_CASES = {
    "name with ..": (["--name", "../../escape"], "", "must be one folder name inside --out"),
    "absolute name": (["--name", "/tmp/medlens-escape"], "", "must be one folder name"),
    "openai without base_url": (["--model", "openai:gpt-4o"], "", "base_url=URL"),
    "concurrency cap": (["--concurrency", "100000000"], "", "at most 4096 requests in flight"),
    "duplicate spec option": (
        ["--bench", "BENCH?split=test&split=train"],
        "",
        "given more than once",
    ),
    "hf without torch": (["--model", "hf:/models/x"], "torch", "pip install 'medlens[hf]'"),
    "vllm without vllm": (["--model", "vllm:/models/x"], "vllm", "pip install 'medlens[vllm]'"),
    "ray without ray": (["--executor", "ray"], "ray", "pip install 'medlens[ray]'"),
}


@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_bad_run_input_is_one_line_exit_2_and_leaves_nothing(case: str, tmp_path: Path) -> None:
    extra, without, needle = RUN_CASES[case]
    bench = write_bench(tmp_path / "bench")
    args = {"--bench": f"jsonl:{bench}", "--model": "random"}
    rest: list[str] = []
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        if flag in args:
            args[flag] = value.replace("BENCH", f"jsonl:{bench}")
        else:
            rest += [flag, value]
    command = ["run", *(x for pair in args.items() for x in pair), *rest, "--out", "runs"]
    before = sorted(p for p in tmp_path.rglob("*") if "cache" not in p.parts)
    assert_one_line_exit_2(medlens(tmp_path, *command, without=without), needle)
    assert sorted(p for p in tmp_path.rglob("*") if "cache" not in p.parts) == before
    assert not Path("/tmp/medlens-escape").exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench")
    (tmp_path / "runs").write_text("not a folder")
    proc = medlens(
        tmp_path, "run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", "runs"
    )
    assert_one_line_exit_2(proc, "--out runs: is a file")
    assert (tmp_path / "runs").read_text() == "not a folder"


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    bench = write_bench(tmp_path / "bench")
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model", "first", "--out",
                   "runs", "--name", "r")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "runs" / "r"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


READER_CASES = {
    "xlsx without -o": (["report", "RUN", "-f", "xlsx"], "--format xlsx is binary: give --output"),
    "submission of a jsonl run": (
        ["export", "RUN", "--format", "gmai-submission"],
        "--format gmai-submission is for GMAI-MMBench's multiple-choice items; 1 of 5 items",
    ),
    "where matching nothing": (
        ["slice", "RUN", "--by", "modality", "--where", "modality=XR"],
        "--where matches no item (known values: modality: CT)",
    ),
}


@pytest.mark.parametrize("case", sorted(READER_CASES))
def test_bad_reader_input_is_one_line_exit_2_and_changes_nothing(
    case: str, run_dir: Path, tmp_path: Path
) -> None:
    args, needle = READER_CASES[case]
    before = snapshot(tmp_path / "runs")
    proc = medlens(tmp_path, *(str(run_dir) if a == "RUN" else a for a in args))
    assert_one_line_exit_2(proc, needle)
    assert snapshot(tmp_path / "runs") == before


def test_replay_of_another_benchmarks_predictions_is_refused(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench")
    predictions = tmp_path / "pred.tsv"
    predictions.write_text(
        "index\tquestion\tprediction\n0\tWhich organ 0?\tA\n1\tIs this MedQA?\tB\n"
    )
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model",
                   f"replay:{predictions}", "--out", "runs")  # fmt: skip
    assert_one_line_exit_2(proc, "index '1': column 'question' asks 'Is this MedQA?'")
    assert not (tmp_path / "runs").exists()
    other = tmp_path / "other.tsv"
    other.write_text("index\tprediction\n900\tA\n901\tB\n")
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model", f"replay:{other}",
                   "--out", "runs")  # fmt: skip
    assert_one_line_exit_2(proc, "none of its 2 predictions has the index of an item")


def test_replay_covering_fewer_items_says_so_before_the_run(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench")
    predictions = tmp_path / "pred.tsv"
    predictions.write_text(
        "index\tquestion\tprediction\n0\tWhich  organ 0?\tA\n1\tWhich organ 1?\tB\n"
    )
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{bench}", "--model",
                   f"replay:{predictions}", "--out", "runs", "--max-error-rate", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stderr.split())
    assert f"note: {predictions} has no prediction for 3 of 5 items" in flat
    assert flat.index("has no prediction") < flat.index("evaluating")


GOOD_ITEM = {"id": "1", "question": "Which organ?", "kind": "choice",
             "options": {"A": "liver", "B": "lung"}, "answer": "A"}  # fmt: skip
JSONL_CASES = {
    "gold not among options": (
        {"answer": "C"},
        "field 'answer': gold 'C' is not among the options",
    ),
    "numeric option keys": (
        {"options": {"1": "liver", "2": "lung"}, "answer": "1"},
        "field 'options': option keys must be letters A-Z, got '1', '2'",
    ),
    "yes/no answer perhaps": (
        {"kind": "yes_no", "options": {}, "answer": "perhaps"},
        "field 'answer': a yes_no answer is one of yes, no, got 'perhaps'",
    ),
    "missing image file": ({"images": ["absent.png"]}, "field 'images[0]': no such image file"),
    "image through a symlink out of the folder": (
        {"images": ["link/secret.png"]},
        "field 'images[0]': image path 'link/secret.png' resolves outside the folder",
    ),
}


@pytest.mark.parametrize("case", sorted(JSONL_CASES))
def test_jsonl_items_are_validated_like_gmai_rows(case: str, tmp_path: Path) -> None:
    change, needle = JSONL_CASES[case]
    folder = tmp_path / "bench"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.png").write_bytes(b"\x89PNG")
    (folder / "link").symlink_to(tmp_path / "elsewhere")
    lines = [dict(GOOD_ITEM, id="0"), {**GOOD_ITEM, **change}]
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc = medlens(tmp_path, "run", "--bench", f"jsonl:{path}", "--model", "first", "--out", "runs")
    assert_one_line_exit_2(proc, f"{path}, line 2, {needle}")
    assert not (tmp_path / "runs").exists()


def test_native_loaders_share_the_symlink_policy(tmp_path: Path) -> None:
    from medlens.core.errors import InputError
    from medlens.sources.native import file_image

    (tmp_path / "data").mkdir()
    (tmp_path / "secret.png").write_bytes(b"x")
    (tmp_path / "data" / "inside.png").write_bytes(b"x")
    (tmp_path / "data" / "planted.png").symlink_to(tmp_path / "secret.png")
    assert file_image(tmp_path / "data", "inside.png", tmp_path / "f.json", "record 1").path
    with pytest.raises(
        InputError, match=r"f\.json, record 2: image path 'planted\.png' resolves outside"
    ):
        file_image(tmp_path / "data", "planted.png", tmp_path / "f.json", "record 2")
