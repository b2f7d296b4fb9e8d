"""Cache identity: the response cache knows which server (or weights) answered. Two servers under
one model name give two runs; a moved server resumes its run and re-asks; a cached answer from
another served model is discarded; ``--no-cache`` re-asks cached items; compare and board warn
when two runs share cache entries."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.core.items import Item
from medlens.execution.cache import CachingModel, ResponseCache, cache_key
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import ModelError, Request, Response
from medlens.models.openai import endpoint_identity

N = 8


def bench(folder: Path) -> tuple[Path, dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(N)}
    with open(folder / "bench.jsonl", "w") as handle:
        for key, gold in golds.items():
            item = {"id": key, "question": f"[[{key}]] Which finding?", "kind": "choice",
                    "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": gold}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    return folder / "bench.jsonl", golds


def spec(base_url: str) -> str:
    return f"openai:llava?base_url={base_url}&max_retries=0"


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def run_ok(data: Path, model: str, out: Path, name: str, *extra: str) -> Path:
    result = invoke_run(f"jsonl:{data}", model, out, name, *extra)
    assert result.exit_code == 0, result.output
    return out / name


def cache_entries(cache: Path) -> set[str]:
    with sqlite3.connect(cache / "responses.sqlite") as db:
        return {row[0] for row in db.execute("SELECT fingerprint FROM responses")}


def test_two_servers_under_one_model_name_give_two_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    data, golds = bench(tmp_path / "bench")
    right = ServerConfig(gold=gold_by_marker(golds), accuracy=1.0)
    wrong = ServerConfig(gold=gold_by_marker(golds), accuracy=0.0)
    with serve(right) as one, serve(wrong) as other:
        a = run_ok(data, spec(one.base_url), tmp_path / "runs", "a")
        b = run_ok(data, spec(other.base_url), tmp_path / "runs", "b")
        assert one.stats["requests"] == N and other.stats["requests"] == N
    assert not any(r["cached"] for r in records(b))
    assert {r["cache_key"] for r in records(a)}.isdisjoint({r["cache_key"] for r in records(b)})
    assert len(cache_entries(tmp_path / "cache")) == 2 * N
    scores = [json.loads((run / "results.json").read_text())["overall"]["score"] for run in (a, b)]
    assert scores == [1.0, 0.0]
    compared = CliRunner().invoke(app, ["compare", str(a), str(b), "--json"])
    assert json.loads(compared.stdout)["shared_cache"] == []


def test_a_moved_server_resumes_its_run_and_re_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    data, golds = bench(tmp_path / "bench")
    config = ServerConfig(gold=gold_by_marker(golds))
    with serve(config) as old:
        run = run_ok(data, spec(old.base_url), tmp_path / "runs", "r", "--limit", "3")
        run_ok(data, spec(old.base_url), tmp_path / "runs", "full")
    with serve(config) as new:  # the same model, now on another port
        result = invoke_run(f"jsonl:{data}", spec(new.base_url), tmp_path / "runs", "r")
        assert result.exit_code == 0 and "resuming: 3 of 8 items already answered" in result.output
        assert new.stats["requests"] == N - 3  # the run resumed, the rest went to the new server
        again = run_ok(data, spec(new.base_url), tmp_path / "runs", "again", "--cache-check", "1")
        # the old server's cache entries do not answer for the new one; the resumed run's do
        # (one of them asked live: the cache check, made small here; test_cache_live_check)
        assert new.stats["requests"] == N - 3 + 3 + 1
    assert len(records(run)) == N
    assert sum(r["cached"] for r in records(again)) == N - 3 - 1


@dataclass
class ServedModel:
    """A backend whose answers name the model the server says it serves."""

    served: str
    spec: str = "openai:llava"
    deterministic: bool = True
    cache_identity: str = "endpoint=http://127.0.0.1:8000/v1"
    reports_served_model: bool = True
    down: bool = False
    calls: list[str] = field(default_factory=list)

    async def generate(self, request: Request) -> Response:
        self.calls.append(request.item.id)
        if self.down:
            return Response(None, error=ModelError("connection", "refused"))
        return Response(f"answer of {self.served}", served_model=self.served)

    async def aclose(self) -> None:
        return None


def ask_all(model: CachingModel, requests: list[Request]) -> list[Response]:
    async def every() -> list[Response]:
        return list(await asyncio.gather(*(model.generate(r) for r in requests)))

    return asyncio.run(every())


def mcq(i: int) -> Item:
    return Item(
        id=str(i), question=f"q{i}", kind="choice", options={"A": "x", "B": "y"}, answer="A"
    )


def test_cached_answers_of_another_served_model_are_discarded(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    first = ServedModel("ckpt-1")
    requests = [build_request(mcq(i), first.spec, RunSettings(), None) for i in range(5)]
    ask_all(CachingModel(first, ResponseCache(path)), requests)
    assert len(first.calls) == 5
    same = ServedModel("ckpt-1")
    answers = ask_all(CachingModel(same, ResponseCache(path), checks=1), requests)
    assert len(same.calls) == 1 and sum(a.cached for a in answers) == 4  # one live check
    swapped = ServedModel("ckpt-2")  # a new checkpoint behind the same name and endpoint
    wrapped = CachingModel(swapped, ResponseCache(path), checks=1)
    answers = ask_all(wrapped, requests)
    assert len(swapped.calls) == 5 and not any(a.cached for a in answers)
    assert {a.text for a in answers} == {"answer of ckpt-2"} and wrapped.discarded == 4
    gone = ServedModel("ckpt-2", down=True)  # the server is unreachable: the cache answers
    unchecked = CachingModel(gone, ResponseCache(path), checks=1)
    answers = ask_all(unchecked, requests)
    assert len(gone.calls) == 1 and all(a.cached for a in answers)
    assert unchecked.check_entry is not None
    assert unchecked.check_entry["result"] == "not checked"


def test_the_cache_key_joins_the_fingerprint_and_the_answerer() -> None:
    assert cache_key("f", "") == "f"
    assert cache_key("f", "endpoint=a") != cache_key("f", "endpoint=b") != "f"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("http://LOCALHOST:80/v1/", "http://localhost/v1", True),
        ("https://api.example.com/v1", "https://api.example.com:443/v1//", True),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1", False),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v2", False),
        ("http://host:8000/v1", "https://host:8000/v1", False),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1/", True),
    ],
)
def test_endpoints_are_normalised(a: str, b: str, same: bool) -> None:
    assert (endpoint_identity(a) == endpoint_identity(b)) is same


def test_local_weights_are_named_by_content(tmp_path: Path) -> None:
    from medlens.core.specs import parse_spec
    from medlens.models.base import ModelContext
    from medlens.models.hf import make_hf

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava", "vision_config": {}}')
    (folder / "processor_config.json").write_text("{}")  # checked before the weights load
    (folder / "model.safetensors").write_bytes(b"weights one")
    model = make_hf(parse_spec(f"hf:{folder}"), ModelContext(items=[], describe_only=True))
    before = model.cache_identity
    (folder / "model.safetensors").write_bytes(b"weights two, a new checkpoint")
    assert model.cache_identity != before and before.startswith("weights=")


def test_no_cache_re_asks_what_the_cache_answered_and_runs_sharing_it_are_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    data, golds = bench(tmp_path / "bench")
    with serve(ServerConfig(gold=gold_by_marker(golds))) as server:
        a = run_ok(data, spec(server.base_url), tmp_path / "runs", "a")
        b = run_ok(data, spec(server.base_url), tmp_path / "runs", "b", "--cache-check", "1")
        assert server.stats["requests"] == N + 1
        compared = CliRunner().invoke(app, ["compare", str(a), str(b), "--json"])
        shared = json.loads(compared.stdout)["shared_cache"]
        # every answer of b but the one live check came from a's cache entries
        assert len(shared) == 1 and f"a and b share {N - 1} answers" in shared[0]
        assert "share 7 answers from one set of response-cache entries" in compared.stderr
        board = CliRunner().invoke(app, ["board", str(a), str(b), "--json"])
        assert json.loads(board.stdout)["shared_cache"] == shared
        result = invoke_run(f"jsonl:{data}", spec(server.base_url), tmp_path / "runs", "b",
                            "--no-cache", "--cache-check", "1")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.stats["requests"] == N + 1 + (N - 1)  # every cached answer asked again
    assert not any(r["cached"] for r in records(b))
