"""The openai: backend against a real loopback server: wire format, errors, retries, secrets."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from loopback_server import (
    Faults,
    LoopbackServer,
    ServerConfig,
    gold_by_marker,
    gold_by_pixels,
    pixel_key,
    serve,
)
from medlens.api import load_model
from medlens.core.errors import SpecError
from medlens.core.items import ImageRef, Item
from medlens.models.base import ModelContext, Response
from medlens.models.images import is_passthrough_png, pixel_sha256, png_bytes
from medlens.models.openai import (
    OpenAIChatModel,
    ServerRejectedError,
    backoff_delay,
    retry_after_seconds,
)
from model_calls import answer_items, answer_requests, requests_for, with_broken_image

KEY = "sk-test-0123456789abcdef-secret"
FAST = "connect_timeout=2&read_timeout=0.3&backoff=0.001&backoff_max=0.01"


def png(
    size: tuple[int, int] = (16, 12), colour: tuple[int, ...] = (200, 30, 60), mode: str = "RGB"
) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg(size: tuple[int, int] = (16, 12)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 120, 250)).save(buffer, format="JPEG")
    return buffer.getvalue()


def item(key: str, gold: str = "B", images: tuple[bytes, ...] = ()) -> Item:
    return Item(
        id=key,
        question=f"[[{key}]] Which organ is shown?",
        kind="choice",
        options={"A": "liver", "B": "lung", "C": "heart", "D": "kidney"},
        answer=gold,
        images=tuple(
            ImageRef("bytes", data=data, name=f"{key}-{i}") for i, data in enumerate(images)
        ),
    )


def model(
    server: LoopbackServer, options: str = "", env: str = "MEDLENS_TEST_KEY"
) -> OpenAIChatModel:
    text = f"openai:tiny-vlm?base_url={server.base_url}&api_key_env={env}&{FAST}"
    built = load_model(text + (f"&{options}" if options else ""), ModelContext(items=()))
    assert isinstance(built, OpenAIChatModel)
    return built


def ask(backend: OpenAIChatModel, items: list[Item]) -> list[Response]:
    return answer_items(backend, items)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLENS_TEST_KEY", KEY)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(50)}
    with serve(ServerConfig(gold=gold_by_marker(golds), api_key=KEY)) as running:
        yield running


# -- spec -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("api_key=sk-123", "never put the API key"),
        ("colour=red", "unknown option(s) colour"),
        ("temperature=warm", "temperature='warm' is not a number"),
        ("max_retries=-1", "max_retries='-1' must be at least 0"),
        ("read_timeout=0", "read_timeout='0' must be at least"),
        ("extra_body=%7Bnope", "extra_body is not valid JSON"),
        ("extra_body=%5B1%5D", "extra_body must be a JSON object"),
        ("image_detail=ultra", "image_detail='ultra' must be auto, low or high"),
        ("base_url=notaurl", "base_url='notaurl' is not an http:// or https:// URL"),
        ("base_url=ftp://127.0.0.1:9/v1", "is not an http:// or https:// URL"),
        ("api_key_env=MEDLENS_UNSET_KEY", "variable .MEDLENS_UNSET_KEY is not set"),
        ("base_url=", "give the server explicitly with base_url=URL"),
        ("base_url=http://h/v1&base_url=http://x/v1", "option base_url given more than once"),
    ],
)
def test_bad_options_name_the_option(options: str, message: str) -> None:
    server = "" if options.startswith("base_url=") else "base_url=http://127.0.0.1:9/v1&"
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        load_model(f"openai:m?{server}{options}", ModelContext(items=()))
    assert "sk-123" not in str(caught.value)


def test_openai_without_base_url_is_refused_before_any_request() -> None:
    """No default endpoint: medical images never leave for api.openai.com by omission."""
    with pytest.raises(SpecError, match="give the server explicitly with base_url=URL"):
        load_model("openai:gpt-4o?temperature=0", ModelContext(items=()))


def test_model_name_is_required() -> None:
    with pytest.raises(SpecError, match="name the model"):
        load_model("openai:?base_url=http://127.0.0.1:9", ModelContext(items=()))


def test_spec_keeps_request_options_and_drops_transport_and_secrets() -> None:
    backend = load_model(
        "openai:m?base_url=http://h/v1&api_key_env=MEDLENS_TEST_KEY&read_timeout=5&max_retries=2"
        "&temperature=0&seed=3",
        ModelContext(items=()),
    )
    # base_url is transport: the same server moved to another port continues the same run
    assert backend.spec == "openai:m?api_key_env=MEDLENS_TEST_KEY&seed=3&temperature=0"
    assert KEY not in backend.spec
    asyncio.run(backend.aclose())


@pytest.mark.parametrize(
    ("options", "deterministic"),
    [("", True), ("temperature=0.7", False), ("temperature=0.7&seed=1", True)],
)
def test_deterministic_means_greedy_or_seeded(options: str, deterministic: bool) -> None:
    suffix = f"&{options}" if options else ""
    backend = load_model(f"openai:m?base_url=http://h/v1{suffix}", ModelContext(items=()))
    assert backend.deterministic is deterministic
    asyncio.run(backend.aclose())


# -- wire format ---------------------------------------------------------------------------------


def test_answers_from_gold_with_text_and_images(server: LoopbackServer) -> None:
    responses = ask(model(server), [item("q1", "B", (png(),)), item("q2", "C")])
    assert [r.text for r in responses] == ["B", "C"]
    assert all(r.error is None for r in responses)
    assert responses[0].usage["prompt_tokens"] > 0
    assert responses[0].usage["total_tokens"] == sum(
        responses[0].usage[k] for k in ("prompt_tokens", "completion_tokens")
    )
    assert all(h.get("authorization") == f"Bearer {KEY}" for h in server.seen_headers)


def test_png_is_sent_untouched_and_other_formats_losslessly(server: LoopbackServer) -> None:
    stored_png, stored_jpeg = png(), jpeg()
    ask(model(server), [item("q1", images=(stored_png,))])
    assert server.last_body is not None
    url = server.last_body["messages"][0]["content"][0]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(stored_png).decode()
    ask(model(server), [item("q2", images=(stored_jpeg,))])
    sent = base64.b64decode(server.last_body["messages"][0]["content"][0]["image_url"]["url"][22:])
    assert sent.startswith(b"\x89PNG") and pixel_sha256(sent) == pixel_sha256(stored_jpeg)


@pytest.mark.parametrize(
    ("mode", "colour", "passthrough"),
    [
        ("RGB", (1, 2, 3), True),
        ("L", 7, True),
        ("RGBA", (1, 2, 3, 4), False),
        ("LA", (5, 9), False),
    ],
)
def test_png_passthrough_only_for_modes_vlmeval_keeps(
    mode: str, colour: tuple[int, ...], passthrough: bool
) -> None:
    data = png(mode=mode, colour=colour)
    assert is_passthrough_png(data) is passthrough
    converted = png_bytes(data)
    assert (converted == data) is passthrough
    assert Image.open(io.BytesIO(converted)).mode in ("RGB", "L")


def test_system_detail_and_extra_body_reach_the_server(server: LoopbackServer) -> None:
    extra = "extra_body=%7B%22top_k%22%3A%201%7D"
    ask(
        model(server, f"system=Be%20brief&image_detail=high&max_tokens=8&seed=5&{extra}"),
        [item("q3", images=(png(),))],
    )
    body = server.last_body
    assert body is not None
    assert body["messages"][0] == {"role": "system", "content": "Be brief"}
    assert body["messages"][1]["content"][0]["image_url"]["detail"] == "high"
    assert (body["max_tokens"], body["seed"], body["top_k"], body["temperature"]) == (8, 5, 1, 0.0)


def test_image_answers_follow_pixels() -> None:
    images = [png(colour=(i, 0, 0)) for i in range(8)]
    golds = {pixel_key(data): "ABCD"[i % 4] for i, data in enumerate(images)}
    with serve(ServerConfig(gold=gold_by_pixels(golds))) as running:
        responses = ask(model(running), [item(f"p{i}", images=(d,)) for i, d in enumerate(images)])
    assert [r.text for r in responses] == ["ABCD"[i % 4] for i in range(8)]


def test_accuracy_is_deterministic_per_prompt() -> None:
    golds = {f"q{i}": "A" for i in range(200)}
    items = [item(f"q{i}", "A") for i in range(200)]
    answers = []
    for _ in range(2):
        with serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.7)) as running:
            answers.append([r.text for r in ask(model(running), items)])
    assert answers[0] == answers[1]
    share = sum(a == "A" for a in answers[0]) / len(items)
    assert 0.6 < share < 0.8


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("faults", "error_type"),
    [
        (Faults(rate_limit=1.0), "rate_limit"),
        (Faults(server_error=1.0), "server"),
        (Faults(slow=1.0), "timeout"),
        (Faults(dropped=1.0), "connection"),
        (Faults(malformed=1.0), "protocol"),
        (Faults(empty_choices=1.0), "protocol"),
    ],
)
def test_each_fault_becomes_a_typed_error_never_an_answer(faults: Faults, error_type: str) -> None:
    with serve(ServerConfig(gold=gold_by_marker({"q1": "A"}), faults=faults)) as running:
        [response] = ask(model(running, "max_retries=2"), [item("q1", "A")])
        assert running.stats["requests"] == 3
    assert response.text is None
    assert response.error is not None and response.error.type == error_type
    assert "gave up after 3 attempts" in response.error.message


def test_content_filter_is_refused_by_api_and_not_retried() -> None:
    config = ServerConfig(gold=gold_by_marker({"q1": "A"}), content_filter_marker="organ")
    with serve(config) as running:
        [response] = ask(model(running), [item("q1", "A")])
        assert running.stats["requests"] == 1
    assert response.error is not None and response.error.type == "refused_by_api"


def test_unreachable_server_is_a_connection_error() -> None:
    backend = load_model(
        f"openai:m?base_url=http://127.0.0.1:9/v1&max_retries=1&{FAST}", ModelContext(items=())
    )
    assert isinstance(backend, OpenAIChatModel)
    [response] = ask(backend, [item("q1")])
    assert response.error is not None and response.error.type == "connection"


def test_wrong_key_stops_the_run_without_showing_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTHER_KEY", "sk-wrong-key-123456")
    with serve(ServerConfig(api_key=KEY)) as running, pytest.raises(ServerRejectedError) as caught:
        ask(model(running, env="OTHER_KEY"), [item("q1")])
    assert "rejected the API key" in str(caught.value) and "$OTHER_KEY" in str(caught.value)
    assert "sk-wrong" not in str(caught.value) and KEY not in str(caught.value)


def test_undecodable_image_fails_only_that_item(server: LoopbackServer) -> None:
    backend = model(server)
    good, bad = requests_for(backend, [item("q1", "B"), item("q2", "C", (png(),))])
    bad = with_broken_image(bad, b"\x00not an image" * 4, "broken.jpg")
    good, bad = answer_requests(backend, [good, bad], together=False)
    assert good.text == "B"
    assert bad.error is not None and bad.error.type == "image" and "broken.jpg" in bad.error.message


# -- retries --------------------------------------------------------------------------------------


def test_retries_recover_from_mixed_faults() -> None:
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(100)}
    faults = Faults(
        rate_limit=0.2,
        server_error=0.1,
        slow=0.05,
        malformed=0.05,
        dropped=0.05,
        empty_choices=0.05,
    )
    with serve(
        ServerConfig(gold=gold_by_marker(golds), faults=faults, slow_seconds=0.5)
    ) as running:
        responses = ask(
            model(running, "max_retries=12"), [item(f"q{i}", golds[f"q{i}"]) for i in range(100)]
        )
        stats = dict(running.stats)
    assert [r.text for r in responses] == [golds[f"q{i}"] for i in range(100)]
    assert all(stats.get(kind, 0) > 0 for kind in ("rate_limit", "server_error", "slow", "dropped"))


def test_retry_after_seconds_is_honoured() -> None:
    faults = Faults(rate_limit=1.0)
    config = ServerConfig(
        gold=gold_by_marker({"q1": "A"}), faults=faults, retry_after="0.4", retry_after_ms=None
    )
    with serve(config) as running:
        started = time.perf_counter()
        [response] = ask(model(running, "max_retries=1"), [item("q1", "A")])
        elapsed = time.perf_counter() - started
    assert response.error is not None and response.error.type == "rate_limit"
    assert elapsed >= 0.4


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x", "retry-after": "3"}, 3.0),
        ({}, None),
    ],
)
def test_retry_after_parsing(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(httpx.Headers(headers)) == seconds


def test_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    value = retry_after_seconds(httpx.Headers({"retry-after": when}))
    assert value is not None and 27 <= value <= 31


@pytest.mark.parametrize("attempt", range(8))
def test_backoff_grows_with_jitter_capped_and_respects_retry_after(attempt: int) -> None:
    ceiling = min(4.0, 0.1 * 2**attempt)
    delays = [backoff_delay(attempt, 0.1, 4.0, None) for _ in range(200)]
    assert all(ceiling / 2 <= d <= ceiling for d in delays)
    assert len(set(delays)) > 1
    assert backoff_delay(attempt, 0.1, 4.0, 7.5) == 7.5


def test_answers_parse_list_content_and_refusal_field() -> None:
    from medlens.models.openai_replies import message_text

    assert (
        message_text({"content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]})
        == "AB"
    )
    assert message_text({"content": None, "refusal": "I cannot help"}) == "I cannot help"
    assert message_text({"content": None}) is None


@pytest.mark.parametrize(
    ("body", "text", "error"),
    [
        ({"choices": [{"message": {"content": "B"}, "finish_reason": "stop"}]}, "B", None),
        ({"choices": [{"message": {"content": None}, "finish_reason": "length"}]}, "", None),
        ({"choices": [{"message": "B"}]}, None, "protocol"),
        ({"choices": [{"text": "B"}]}, None, "protocol"),
        ({"choices": "B"}, None, "protocol"),
        ([1, 2], None, "protocol"),
        (
            {"choices": [{"message": {"content": None}, "finish_reason": "content_filter"}]},
            None,
            "refused_by_api",
        ),
    ],
)
def test_parse_answers(body: Any, text: str | None, error: str | None) -> None:
    from medlens.models.openai_replies import parsed_answer

    attempt = parsed_answer(httpx.Response(200, content=json.dumps(body).encode()))
    got = attempt.response if attempt.response is not None else None
    if error is None:
        assert got is not None and got.text == text and got.error is None
    elif error == "protocol":
        assert got is None and attempt.error is not None and attempt.error.type == "protocol"
    else:
        assert got is not None and got.error is not None and got.error.type == error


def test_records_json_dump_of_body_has_no_key(server: LoopbackServer) -> None:
    ask(model(server), [item("q1")])
    assert KEY not in json.dumps(server.last_body)


# -- the whole `medlens run` path under faults -----------------------------------------------------


def write_benchmark(folder: Path, n_items: int) -> tuple[Path, dict[str, str]]:
    """A jsonl benchmark of `n_items` choice questions sharing four small PNGs."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(4):
        (folder / f"img{index}.png").write_bytes(png((24, 24), (index * 60, 10, 200)))
    golds: dict[str, str] = {}
    with (folder / "bench.jsonl").open("w") as handle:
        for index in range(n_items):
            key, gold = f"q{index}", "ABCD"[(index * 7) % 4]
            golds[key] = gold
            line = {
                "id": key,
                "question": f"[[{key}]] Which structure is marked?",
                "kind": "choice",
                "options": {"A": "aorta", "B": "trachea", "C": "spleen", "D": "femur"},
                "answer": gold,
                "images": [f"img{index % 4}.png"],
                "meta": {"task": f"t{index % 3}", "modality": "CT" if index % 2 else "MR"},
            }
            handle.write(json.dumps(line) + "\n")
    return folder / "bench.jsonl", golds


def run_cli(
    bench: Path, server: LoopbackServer, out: Path, name: str, *extra: str
) -> dict[str, Any]:
    from cli_runs import invoke_run

    spec = (
        f"openai:tiny-vlm?base_url={server.base_url}&api_key_env=MEDLENS_TEST_KEY"
        "&connect_timeout=2&read_timeout=1&max_retries=12&backoff=0.002&backoff_max=0.02"
    )
    result = invoke_run(f"jsonl:{bench}", spec, out, name, "--concurrency", "32", *extra)
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    return dict(json.loads((out / name / "results.json").read_text()))


def test_rejected_key_from_the_cli_is_exit_2_with_no_run_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli_runs import invoke_run

    monkeypatch.setenv("OTHER_KEY", "sk-wrong-key-123456")
    bench, _ = write_benchmark(tmp_path / "bench", 3)
    with serve(ServerConfig(api_key=KEY)) as running:
        spec = f"openai:tiny-vlm?base_url={running.base_url}&api_key_env=OTHER_KEY&{FAST}"
        result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", "rejected")
    assert result.exit_code == 2 and "rejected the API key" in result.output, result.output
    assert "sk-wrong" not in result.output
    assert not (tmp_path / "runs").exists()


def records_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_fault_run_of_2000_items_matches_a_fault_free_run(tmp_path: Path) -> None:
    bench, golds = write_benchmark(tmp_path / "bench", 2000)
    faults = Faults(rate_limit=0.10, server_error=0.05, slow=0.05, malformed=0.02, dropped=0.02)
    common = {"gold": gold_by_marker(golds), "accuracy": 0.8, "api_key": KEY, "slow_seconds": 2.0}
    with serve(ServerConfig(faults=faults, **common)) as faulty:  # type: ignore[arg-type]
        faulty_results = run_cli(bench, faulty, tmp_path / "runs", "faulty")
        stats, delivered = dict(faulty.stats), set(faulty.answered_keys)
    with serve(ServerConfig(**common)) as clean:  # type: ignore[arg-type]
        # without the cache: base_url is no part of the fingerprint, and the cache would answer
        clean_results = run_cli(bench, clean, tmp_path / "runs", "clean", "--no-cache")
        assert clean.stats["requests"] == 2000
    for kind in ("rate_limit", "server_error", "slow", "malformed", "dropped"):
        assert stats.get(kind, 0) > 0, kind
    # The server wrote an answer for every item's prompt. Counted per prompt, not per answer: on
    # a loaded machine a "slow" answer can beat the client's timeout (then it is the answer) and
    # a normal one can miss it (then the item is asked again), so answer counts vary run to run.
    # "Exactly one record per item, none errored" is checked on the records below.
    assert len(delivered) == 2000
    faulty_records, clean_records = (records_of(tmp_path / "runs" / n) for n in ("faulty", "clean"))
    assert sorted(r["id"] for r in faulty_records) == sorted(golds)
    assert all(r["error"] is None for r in faulty_records)
    outputs = {r["id"]: r["output"] for r in clean_records}
    assert {r["id"]: r["output"] for r in faulty_records} == outputs
    assert faulty_results["overall"]["score"] == clean_results["overall"]["score"]
    assert 0.75 < faulty_results["overall"]["score"] < 0.85
    assert faulty_results["rates"]["error"] == 0
    cache = Path(os.environ["MEDLENS_CACHE"])
    for root in (tmp_path / "runs", cache):
        files = [p for p in root.rglob("*") if p.is_file()]
        assert files, root
        for path in files:
            assert KEY.encode() not in path.read_bytes(), path


def test_exhausted_retries_exit_1_and_resume_retries_them(tmp_path: Path) -> None:
    bench, golds = write_benchmark(tmp_path / "bench", 40)
    from cli_runs import invoke_run

    def invoke(server: LoopbackServer) -> Any:
        spec = (
            f"openai:m?base_url={server.base_url}&api_key_env=MEDLENS_TEST_KEY"
            "&read_timeout=0.3&max_retries=0&backoff=0.001"
        )
        return invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", "r")

    # One listener, so the attempt counters (and their faults) continue across both runs.
    config = ServerConfig(gold=gold_by_marker(golds), faults=Faults(server_error=0.3))
    with serve(config) as running:
        first = invoke(running)
        errored = [r for r in records_of(tmp_path / "runs" / "r") if r["error"]]
        assert first.exit_code == 1, first.output
        assert errored and all(
            r["error"]["type"] == "server" and r["output"] is None for r in errored
        )
        second = invoke(running)  # attempts continue, so the faults of attempt 0 are passed
    records = records_of(tmp_path / "runs" / "r")
    assert sorted(r["id"] for r in records) == sorted(golds)
    assert sum(r["error"] is not None for r in records) < len(errored)
    assert second.exit_code in (0, 1)
