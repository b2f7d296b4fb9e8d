"""Environment in run.json, served model and fingerprint from a real loopback server, warnings."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.core.specs import parse_spec
from medlens.runs.provenance import differences, environment, environment_notes, weights_identity
from medlens.runs.store import spec_hash
from provenance_fixture import write_choice_benchmark

REPO = Path(__file__).resolve().parents[2]


def _run_json(run: Path) -> dict:
    return json.loads((run / "run.json").read_text(encoding="utf-8"))


def test_a_real_run_records_its_environment_outside_the_spec(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 12)
    run = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "r")
    data = _run_json(run)
    env = data["environment"]
    assert env["python"] == platform.python_version()
    assert env["packages"]["numpy"] == __import__("numpy").__version__
    assert set(env["packages"]) >= {
        "numpy",
        "pillow",
        "pydicom",
        "httpx",
        "scikit-learn",
        "sacrebleu",
    }
    assert "torch" not in env["packages"]  # only recorded when the backend uses it
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if head:
        assert env["medlens_commit"] == head
    assert "environment" not in data["spec"]
    assert data["spec_hash"] == spec_hash(data["spec"])


def test_resume_in_another_environment_warns_and_records_it(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 12)
    out = tmp_path / "runs"
    run = named_run(f"jsonl:{bench}", "random", out, "r", "--limit", "5")
    data = _run_json(run)
    data["environment"]["packages"]["numpy"] = "0.0.1"
    (run / "run.json").write_text(json.dumps(data), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(out), "--name", "r"],
    )
    assert result.exit_code == 0, result.output
    assert "warning: resuming in a different environment (packages.numpy: 0.0.1 →" in result.output
    after = _run_json(run)
    assert after["environment"]["packages"]["numpy"] == "0.0.1"  # the original stays
    assert len(after["resumed_environments"]) == 1
    assert after["resumed_environments"][0]["packages"]["numpy"] == __import__("numpy").__version__
    assert len((run / "records.jsonl").read_text().splitlines()) == 12


def _served_run(tmp_path: Path, name: str, fingerprint: str) -> Path:
    bench_dir = tmp_path / "data"
    bench_dir.mkdir(exist_ok=True)
    bench = bench_dir / "bench.jsonl"
    with open(bench, "w", encoding="utf-8") as handle:
        for index in range(6):
            item = {"id": str(index), "question": f"[[q{index}]] Which one?", "kind": "choice",
                    "options": {"A": "x", "B": "y"}, "answer": "A", "images": [], "meta": {}}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    config = ServerConfig(
        gold=gold_by_marker({f"q{i}": "A" for i in range(6)}),
        served_model="tiny-vlm-2026-01-01",
        system_fingerprint=fingerprint,
    )
    with serve(config) as server:
        spec = f"openai:tiny-vlm?base_url={server.base_url}&max_retries=0"
        result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", name, "--no-cache")
    assert result.exit_code == 0, result.output
    return tmp_path / "runs" / name


def test_openai_records_carry_served_model_and_fingerprint(tmp_path: Path) -> None:
    run = _served_run(tmp_path, "a", "fp_abc123")
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert {r["served_model"] for r in records} == {"tiny-vlm-2026-01-01"}
    assert {r["system_fingerprint"] for r in records} == {"fp_abc123"}
    report = CliRunner().invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert "served model: tiny-vlm-2026-01-01 (6)" in report.output
    assert "system fingerprint: fp_abc123 (6)" in report.output


def test_compare_warns_when_served_fingerprints_differ(tmp_path: Path) -> None:
    run_a = _served_run(tmp_path, "a", "fp_one")
    run_b = _served_run(tmp_path, "b", "fp_two")
    notes = environment_notes([run_a, run_b])
    assert notes == ["a and b ran in different environments (system_fingerprint: fp_one → fp_two)"]
    result = CliRunner().invoke(app, ["compare", str(run_a), str(run_b), "--json"])
    assert result.exit_code == 0, result.output
    assert "warning: a and b ran in different environments" in result.output


def test_compare_is_quiet_when_environments_agree(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 8)
    run_a = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "a")
    run_b = named_run(f"jsonl:{bench}", "first", tmp_path / "runs", "b")
    assert environment_notes([run_a, run_b]) == []
    data = _run_json(run_b)
    data["environment"]["python"] = "2.7.18"
    (run_b / "run.json").write_text(json.dumps(data), encoding="utf-8")
    assert environment_notes([run_a, run_b])[0].endswith(
        f"(python: {platform.python_version()} → 2.7.18)"
    )


def test_weights_identity_hashes_every_safetensors_file(tmp_path: Path) -> None:
    snapshot = tmp_path / "models--org--tiny" / "snapshots" / ("ab" * 20)
    snapshot.mkdir(parents=True)
    (snapshot / "model-00001.safetensors").write_bytes(b"first shard")
    (snapshot / "model-00002.safetensors").write_bytes(b"second shard")
    (snapshot / "config.json").write_text("{}")
    identity = weights_identity(str(snapshot))
    assert identity is not None
    lines = "".join(
        f"{name}:{hashlib.sha256(data).hexdigest()}\n"
        for name, data in (("model-00001.safetensors", b"first shard"),
                           ("model-00002.safetensors", b"second shard"))
    )  # fmt: skip
    assert identity["safetensors_sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert identity["revision"] == "ab" * 20
    env = environment(parse_spec(f"hf:{snapshot}"))
    assert env["weights"]["safetensors_sha256"] == identity["safetensors_sha256"]
    assert {"torch", "transformers"} <= set(env["packages"])
    (snapshot / "model-00002.safetensors").write_bytes(b"second shard, changed")
    assert differences(env, environment(parse_spec(f"hf:{snapshot}")))[0].startswith("weights: ")


@pytest.mark.parametrize("spec", ["random", "openai:gpt-4o?base_url=http://127.0.0.1:9/v1"])
def test_models_without_local_weights_record_none(spec: str) -> None:
    assert "weights" not in environment(parse_spec(spec))


def test_report_json_carries_environment_and_served_models(tmp_path: Path) -> None:
    run = _served_run(tmp_path, "j", "fp_json")
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["environment"] == _run_json(run)["environment"]
    assert data["served"] == {
        "served_model": {"tiny-vlm-2026-01-01": 6},
        "system_fingerprint": {"fp_json": 6},
    }


def test_served_model_is_escaped_in_html_and_old_runs_still_report(tmp_path: Path) -> None:
    from medlens.report import render

    run = _served_run(tmp_path, "h", "<script>alert(1)</script>")
    html = render(run, "html")
    assert isinstance(html, str)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    data = _run_json(run)
    del data["environment"]
    (run / "run.json").write_text(json.dumps(data), encoding="utf-8")
    text = render(run, "text")
    assert "environment: not recorded (the run was made before medlens recorded it)" in text
