"""A real OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks, with injected faults.

It answers ``POST /v1/chat/completions`` from the item's gold answer, found by a lookup the test
supplies (:func:`gold_by_marker` reads a ``[[key]]`` marker in the prompt text;
:func:`gold_by_pixels` hashes the decoded pixels of the first image, so image probes change the
answers). With
``accuracy`` < 1 a fixed, prompt-determined share of answers is wrong. Faults are drawn from a hash
of (prompt, attempt number), so a fresh server replays the same faults for the same run.

For benches it can also take time like a real server: a fixed ``latency`` per answer, and an
image-encode cost model (:class:`ImageCost`: a vision encoder with a cache of the last N images it
encoded, as vLLM's multi-modal cache or SGLang's radix cache give a server that sees the same
image again soon).

Bounded: it binds only to 127.0.0.1, serves at most ``max_requests`` requests and shuts itself
down after ``lifetime`` seconds. Run ``python tests/loopback_server.py`` to serve from a separate
process (it prints its base URL), as ``bench/overhead.py`` and ``bench/study.py`` do.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import io
import json
import re
import socket
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("rate_limit", "server_error", "slow", "malformed", "dropped", "empty_choices")


@dataclass(frozen=True)
class ChatRequest:
    """What the server understood of one request."""

    body: Mapping[str, Any]
    text: str
    """All text parts of all messages, joined by newlines."""
    image_urls: tuple[str, ...]
    key: str
    """sha256 of the canonical request body: the prompt identity used for every random draw."""


GoldLookup = Callable[[ChatRequest], "str | None"]


class HTTPFault(Exception):
    """Raised by a ``reply`` function: the server answers this status with an error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Faults:
    """Probability of each fault per attempt (the rest are answered normally)."""

    rate_limit: float = 0.0
    """429 with ``Retry-After`` (seconds) and ``retry-after-ms``."""
    server_error: float = 0.0
    """500 with a JSON error body."""
    slow: float = 0.0
    """Answer only after ``ServerConfig.slow_seconds`` (set it beyond the client's read timeout)."""
    malformed: float = 0.0
    """200 with truncated JSON."""
    dropped: float = 0.0
    """Connection closed without any response."""
    empty_choices: float = 0.0
    """200 with ``"choices": []``."""

    def draw(self, unit: float) -> str | None:
        """The fault for a uniform draw `unit` in [0, 1), or None."""
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += getattr(self, kind)
            if unit < edge:
                return kind
        return None


@dataclass(frozen=True)
class ImageCost:
    """Seconds the server's vision encoder spends per image: `miss` for an image not among the
    last `capacity` distinct images it saw (it must be encoded), `hit` otherwise (a lookup).
    The encoder is one resource, as a server's GPU is: it handles one image at a time, so
    concurrent requests queue for it (their other work, `latency`, runs side by side)."""

    miss: float = 0.020
    hit: float = 0.002
    capacity: int = 64


class ImageCache:
    """The server's recently seen images (LRU by sha256 of the image URL) and its one encoder."""

    def __init__(self, cost: ImageCost) -> None:
        self.cost = cost
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._encoder = threading.Lock()
        self.hits = 0
        self.misses = 0

    def encode(self, image_urls: tuple[str, ...]) -> None:
        """Spend the encoder's time on these images; each counts as seen from now on."""
        keys = [hashlib.sha256(url.encode()).hexdigest() for url in image_urls]
        with self._encoder:
            for key in keys:
                hit = key in self._seen
                self._seen[key] = None
                self._seen.move_to_end(key)
                while len(self._seen) > self.cost.capacity:
                    self._seen.popitem(last=False)
                self.hits += hit
                self.misses += not hit
                time.sleep(self.cost.hit if hit else self.cost.miss)


@dataclass(frozen=True)
class ServerConfig:
    gold: GoldLookup = field(default=lambda request: None)
    accuracy: float = 1.0
    faults: Faults = Faults()
    slow_seconds: float = 0.5
    retry_after: str = "0"
    """Value of the ``Retry-After`` header on 429s."""
    retry_after_ms: str | None = "5"
    """Value of ``retry-after-ms`` (None: header left out)."""
    api_key: str | None = None
    """When set, requests without ``Authorization: Bearer <api_key>`` get 401."""
    content_filter_marker: str | None = None
    """Prompts containing this text end with ``finish_reason: content_filter``."""
    max_requests: int = 200_000
    lifetime: float = 900.0
    reply: Callable[[ChatRequest], Any] | None = None
    """When set, the text of every fault-free answer (a judge: see ``tests/judge_server.py``), or
    a (text, finish_reason) pair; it may raise :class:`HTTPFault`."""
    finish: Callable[[ChatRequest], str] | None = None
    """When set, the ``finish_reason`` of every ``reply`` answer (``length``: cut at the cap)."""
    logprob_tokens: tuple[str, ...] = ("A", "B", "C", "D", "E", "yes", "no", "maybe")
    """Alternatives offered in ``top_logprobs`` when a request asks for ``logprobs``."""
    answer_probability: float = 0.6
    """Probability the answer token gets among its alternatives; the rest share what is left."""
    probability: Callable[[ChatRequest], float] | None = None
    """When set, the answer token's probability per request (in place of `answer_probability`):
    scores that vary from item to item, for ROC operating points."""
    served_model: str | None = None
    """The ``model`` the answers name (None: the requested one), e.g. a new checkpoint."""
    system_fingerprint: str | None = None
    """``system_fingerprint`` of the answers (None: left out)."""
    port: int = 0
    """The port to listen on (0: any free one); a test restarts a server on the same port."""
    arrived: threading.Event | None = None
    """Set when a request arrives (tests wait on it instead of sleeping)."""
    hold: threading.Event | None = None
    """When given, answers wait until it is set (a run kept busy while the test acts); one
    still waiting when the server's lifetime is over gets a 503."""
    hold_after: int = 0
    """With `hold`: only requests after the first `hold_after` wait (some answers get through)."""
    latency: float = 0.0
    """Seconds every answer takes (a model's time to answer; answers overlap), after `image_cost`."""
    image_cost: ImageCost | None = None
    """Time charged per image, by whether the server saw it recently (None: images are free)."""
    healthy: threading.Event | None = None
    """``GET /health`` answers 200 once it is set, 503 before (None: always healthy)."""
    version: str = "0.0.0+loopback"
    """What ``GET /version`` says (vLLM's route)."""
    model_root: str | None = None
    """``root`` of the ``GET /v1/models`` entry (vLLM: the folder it serves), when set."""


def unit_hash(*parts: object) -> float:
    """A deterministic uniform number in [0, 1) from the given parts."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def gold_by_marker(golds: Mapping[str, str]) -> GoldLookup:
    """Gold looked up by the ``[[key]]`` marker the test wrote into the question."""
    pattern = re.compile(r"\[\[([^\]]+)\]\]")

    def lookup(request: ChatRequest) -> str | None:
        found = pattern.search(request.text)
        return golds.get(found.group(1)) if found else None

    return lookup


def pixel_key(data: bytes) -> str:
    """sha256 of decoded pixels (mode, size, bytes), as the server computes it for sent images."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.load()
        if image.mode in ("RGBA", "P", "LA"):
            image = image.convert("RGB")
        digest = hashlib.sha256(f"{image.mode}:{image.size[0]}x{image.size[1]}:".encode())
        digest.update(image.tobytes())
    return digest.hexdigest()


def gold_by_pixels(golds: Mapping[str, str]) -> GoldLookup:
    """Gold looked up by the pixel hash (:func:`pixel_key`) of the request's first image."""

    def lookup(request: ChatRequest) -> str | None:
        if not request.image_urls:
            return None
        url = request.image_urls[0]
        data = base64.b64decode(url.split(",", 1)[1])
        return golds.get(pixel_key(data))

    return lookup


def option_letters(text: str) -> list[str]:
    """Option letters shown in the prompt (lines such as ``B. text``)."""
    return sorted(set(re.findall(r"(?m)^([A-J])[.)] ", text)))


def choose_answer(request: ChatRequest, gold: str | None, accuracy: float) -> str:
    """Gold with probability `accuracy` (fixed per prompt); otherwise a wrong or guessed answer."""
    letters = option_letters(request.text) or list("ABCD")
    draw = unit_hash(request.key, "correct")
    if gold is not None and draw < accuracy:
        return gold
    if gold in ("yes", "no"):
        return "no" if gold == "yes" else "yes"
    wrong = [letter for letter in letters if letter != gold] or letters
    return wrong[int(unit_hash(request.key, "guess") * len(wrong))]


def parse_chat(raw: bytes) -> ChatRequest:
    body = json.loads(raw)
    texts: list[str] = []
    images: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content:
            if part["type"] == "text":
                texts.append(part["text"])
            elif part["type"] == "image_url":
                images.append(part["image_url"]["url"])
    key = hashlib.sha256(raw).hexdigest()
    return ChatRequest(body, "\n".join(texts), tuple(images), key)


class _Listener(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # room for every connection a concurrency-128 client opens at once


class LoopbackServer:
    """The server plus what it saw; use :func:`serve` to run one."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.stats: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()
        self.seen_headers: list[dict[str, str]] = []
        self.last_body: Mapping[str, Any] | None = None
        self.answered_keys: set[str] = set()
        """Prompts that got at least one answer written out (normal or slow)."""
        self._lock = threading.Lock()
        self.images = ImageCache(config.image_cost) if config.image_cost else None
        self._httpd = _Listener(("127.0.0.1", config.port), _make_handler(self))
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def arrival(self) -> int:
        """Count one parsed request on arrival; the count so far."""
        with self._lock:
            self.stats["arrived"] += 1
            return self.stats["arrived"]

    def next_attempt(self, key: str) -> int:
        with self._lock:
            self.attempts[key] += 1
            self.stats["requests"] += 1
            return self.attempts[key] - 1

    def delivered(self, key: str) -> None:
        """An answer (on time or slow) was written out for the prompt `key`."""
        with self._lock:
            self.answered_keys.add(key)

    def count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def start(self) -> None:
        self._serving = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._serving.start()
        self._stopper = threading.Timer(self.config.lifetime, self.stop)
        self._stopper.daemon = True
        self._stopper.start()

    def stop(self) -> None:
        """Shut the server down; its threads are gone when this returns."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._stopper.cancel()
        for thread in (self._serving, self._stopper):
            if thread is not threading.current_thread():
                thread.join()


@contextlib.contextmanager
def serve(config: ServerConfig) -> Iterator[LoopbackServer]:
    """Run a server in a background thread for the duration of the block."""
    server = LoopbackServer(config)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def token_logprobs(answer: str, request: ChatRequest, config: ServerConfig) -> dict[str, Any]:
    """OpenAI's ``logprobs.content``: the answer as one token, its top alternatives drawn from
    ``config.logprob_tokens`` (the answer at ``answer_probability``, the rest sharing 1 − p)."""
    import math

    top = int(request.body.get("top_logprobs") or 1)
    others = [t for t in config.logprob_tokens if t != answer][: max(0, top - 1)]
    chosen = config.probability(request) if config.probability else config.answer_probability
    rest = (1.0 - chosen) / max(1, len(others))
    alternatives = [{"token": answer, "logprob": math.log(chosen)}]
    alternatives += [{"token": t, "logprob": math.log(rest)} for t in others]
    first = {"token": answer, "logprob": alternatives[0]["logprob"], "top_logprobs": alternatives}
    return {"content": [first]}


def completion(answer: str | None, request: ChatRequest, finish: str = "stop") -> dict[str, Any]:
    prompt_tokens = len(request.text) // 4 + 85 * len(request.image_urls)
    completion_tokens = 0 if answer is None else max(1, len(answer) // 4)
    return {
        "id": "chatcmpl-" + request.key[:12],
        "object": "chat.completion",
        "created": 0,
        "model": request.body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _make_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to one server's config and counters.

    Over 60 lines because it is a class definition (one method per HTTP concern) closed over
    `server`; http.server wants a handler class, not an instance.
    """
    config = server.config

    class ChatHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_GET(self) -> None:
            """``GET /stats`` (the counters, for a bench that runs the server in a process) and
            vLLM's ``/health``, ``/version`` and ``/v1/models``."""
            path = self.path.rstrip("/")
            if path.endswith("/stats"):
                images = server.images
                stats = {**server.stats, "image_hits": images.hits if images else 0,
                         "image_misses": images.misses if images else 0}  # fmt: skip
                return self._json(200, stats)
            if path == "/health":
                ready = config.healthy is None or config.healthy.is_set()
                return self._json(200 if ready else 503, {})
            if path == "/version":
                return self._json(200, {"version": config.version})
            if path.endswith("/models"):
                server.count("model_listings")
                entry = {"id": config.served_model or "loopback", "object": "model",
                         "owned_by": "medlens-tests"}  # fmt: skip
                if config.model_root is not None:
                    entry["root"] = config.model_root
                return self._json(200, {"object": "list", "data": [entry]})
            return self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            server.seen_headers.append({k.lower(): v for k, v in self.headers.items()})
            if server.stats["requests"] >= config.max_requests:
                return self._json(503, {"error": {"message": "request budget spent"}})
            if not self.path.endswith("/chat/completions"):
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            if config.api_key and self.headers.get("authorization") != f"Bearer {config.api_key}":
                return self._json(401, {"error": {"message": "invalid api key"}})
            try:
                request = parse_chat(raw)
            except (ValueError, KeyError, TypeError) as exc:
                return self._json(400, {"error": {"message": f"bad request: {exc}"}})
            server.last_body = request.body
            if config.arrived is not None:
                config.arrived.set()
            held = config.hold is not None and server.arrival() > config.hold_after
            if held and not config.hold.wait(config.lifetime):  # type: ignore[union-attr]
                return self._json(503, {"error": {"message": "held past the server's lifetime"}})
            attempt = server.next_attempt(request.key)
            if server.images is not None:
                server.images.encode(request.image_urls)
            if config.latency > 0:
                time.sleep(config.latency)
            fault = config.faults.draw(unit_hash(request.key, attempt, "fault"))
            server.count(fault or "answered")
            self._respond(request, fault)

        def _respond(self, request: ChatRequest, fault: str | None) -> None:
            if fault == "rate_limit":
                headers = {"retry-after": config.retry_after}
                if config.retry_after_ms is not None:
                    headers["retry-after-ms"] = config.retry_after_ms
                return self._json(429, {"error": {"message": "slow down"}}, headers)
            if fault == "server_error":
                return self._json(500, {"error": {"message": "internal error"}})
            if fault == "dropped":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return None
            if fault == "malformed":
                return self._send(200, b'{"id": "chatcmpl-x", "choices": [{"index": 0, "mess')
            if fault == "empty_choices":
                return self._json(
                    200, {"id": "chatcmpl-x", "object": "chat.completion", "choices": []}
                )
            if fault == "slow":
                time.sleep(config.slow_seconds)
            if config.content_filter_marker and config.content_filter_marker in request.text:
                return self._json(200, completion(None, request, "content_filter"))
            if config.reply is not None:
                try:
                    reply = config.reply(request)
                except HTTPFault as fault:
                    return self._json(fault.status, {"error": {"message": fault.message}})
                text, finish = reply if isinstance(reply, tuple) else (reply, "stop")
                if config.finish is not None:
                    finish = config.finish(request)
                body = completion(text, request, finish)
                return self._json(200, self._identified(body))
            answer = choose_answer(request, config.gold(request), config.accuracy)
            body = completion(answer, request)
            if config.served_model is not None:
                body["model"] = config.served_model
            if config.system_fingerprint is not None:
                body["system_fingerprint"] = config.system_fingerprint
            if request.body.get("logprobs") and answer:
                body["choices"][0]["logprobs"] = token_logprobs(answer, request, config)
            if self._json(200, body):
                server.delivered(request.key)
            return None

        def _identified(self, body: dict[str, Any]) -> dict[str, Any]:
            """The answer naming the served model and system fingerprint the config sets."""
            if config.served_model is not None:
                body["model"] = config.served_model
            if config.system_fingerprint is not None:
                body["system_fingerprint"] = config.system_fingerprint
            return body

        def _json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> bool:
            return self._send(status, json.dumps(value).encode(), headers)

        def _send(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> bool:
            """Write one response; False when the client had gone."""
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                return True
            except OSError:  # the client gave up (e.g. after its read timeout)
                self.close_connection = True
                return False

    return ChatHandler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument(
        "--image-cost", default=None, help="MISS,HIT,CAPACITY: e.g. 0.02,0.002,64 (ImageCost)"
    )
    parser.add_argument(
        "--gold", default=None, help="JSON file of marker -> gold answer (gold_by_marker)"
    )
    args = parser.parse_args()
    cost = None
    if args.image_cost:
        miss, hit, capacity = args.image_cost.split(",")
        cost = ImageCost(float(miss), float(hit), int(capacity))
    gold: GoldLookup = lambda request: None  # noqa: E731
    if args.gold:
        with open(args.gold, encoding="utf-8") as handle:
            gold = gold_by_marker(json.load(handle))
    config = ServerConfig(gold=gold, lifetime=args.lifetime, latency=args.latency, image_cost=cost)
    server = LoopbackServer(config)
    server.start()
    print(server.base_url, flush=True)
    time.sleep(args.lifetime)


if __name__ == "__main__":
    main()
