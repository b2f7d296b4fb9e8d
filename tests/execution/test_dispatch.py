"""Image-grouped dispatch (`--order image`): questions that share an image are sent one after
another, in a deterministic order, and records and scores equal those of item order."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
from pathlib import Path

import pytest

from cli_runs import invoke_run, named_run
from loopback_server import ChatRequest, ServerConfig, gold_by_marker, serve
from medlens.core.errors import SpecError
from medlens.core.items import ImageRef, Item
from medlens.execution.dispatch import dispatch_order, image_key
from study_fixtures import openai_spec, records, write_shared_bench


def item(item_id: str, *images: ImageRef) -> Item:
    return Item(id=item_id, question="?", kind="open", answer="x", images=tuple(images))


def file_image(name: str) -> ImageRef:
    return ImageRef("file", path=f"/data/{name}", name=name)


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("a b a c b a", "0 2 5 1 4 3"),  # groups in order of their first item, items in order
        ("a - a - b", "0 2 1 3 4"),  # text-only items keep their place between groups
        ("a b c", "0 1 2"),  # nothing shared: unchanged
        ("", ""),
    ],
)
def test_image_order_groups_by_first_appearance(layout: str, expected: str) -> None:
    items = [
        item(str(i)) if name == "-" else item(str(i), file_image(name))
        for i, name in enumerate(layout.split())
    ]
    assert [i.id for i in dispatch_order(items, "image")] == expected.split()
    assert [i.id for i in dispatch_order(items, "item")] == [i.id for i in items]


def test_references_to_the_same_bytes_group_together() -> None:
    tsv = ImageRef("tsv", path="/b.tsv", offset=100, length=50, name="7")
    again = ImageRef("tsv", path="/b.tsv", offset=100, length=50, name="7")
    other = ImageRef("tsv", path="/b.tsv", offset=200, length=50, name="8")
    raw_a, raw_b = ImageRef("bytes", data=b"png-a"), ImageRef("bytes", data=b"png-a")
    items = [item("1", tsv), item("2", other), item("3", again), item("4", raw_a),
             item("5", file_image("x")), item("6", raw_b)]  # fmt: skip
    assert [i.id for i in dispatch_order(items)] == ["1", "3", "2", "4", "6", "5"]
    assert image_key(items[0]) == image_key(items[2])


def test_two_images_group_by_the_pair() -> None:
    a, b = file_image("a"), file_image("b")
    items = [item("1", a, b), item("2", a), item("3", a, b), item("4", b, a)]
    assert [i.id for i in dispatch_order(items)] == ["1", "3", "2", "4"]


def test_an_unknown_order_is_refused() -> None:
    with pytest.raises(SpecError, match="--order 'random'"):
        dispatch_order([], "random")


class SentImages:
    """Which image each request carried, in the order the server received them."""

    def __init__(self, golds: dict[str, str]) -> None:
        self.lookup = gold_by_marker(golds)
        self.order: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str | None:
        data = base64.b64decode(request.image_urls[0].split(",", 1)[1])
        with self.lock:
            self.order.append(hashlib.sha256(data).hexdigest()[:12])
        return self.lookup(request)


def changes(order: list[str]) -> int:
    """How often the image changes from one request to the next."""
    return sum(1 for a, b in itertools.pairwise(order) if a != b)


def test_image_order_sends_each_image_once_in_a_row_and_records_equal_item_order(
    tmp_path: Path,
) -> None:
    bench, golds = write_shared_bench(tmp_path / "bench", 60, 7)
    out = tmp_path / "runs"
    orders = {}
    for order in ("item", "image"):
        sent = SentImages(golds)
        with serve(ServerConfig(gold=sent, accuracy=0.7)) as server:
            named_run(bench, openai_spec(server.base_url), out, order, "--order", order,
                      "--concurrency", "1", "--no-cache")  # fmt: skip
        orders[order] = sent.order
    assert changes(orders["image"]) == 6  # 7 images, each sent in one block
    assert changes(orders["item"]) > 30  # the file is shuffled
    assert sorted(orders["image"]) == sorted(orders["item"])
    assert records(out / "image") == records(out / "item")
    results = {o: json.loads((out / o / "results.json").read_text()) for o in ("item", "image")}
    assert results["image"]["overall"] == results["item"]["overall"]
    assert results["image"]["by"] == results["item"]["by"]


def test_order_is_not_part_of_the_run_so_a_resume_may_change_it(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "bench", 30, 4)
    out = tmp_path / "runs"
    with serve(ServerConfig(gold=gold_by_marker(golds))) as server:
        spec = openai_spec(server.base_url)
        named_run(bench, spec, out, "r", "--order", "item", "--limit", "10", "--no-cache")
        result = invoke_run(bench, spec, out, "r", "--order", "image", "--no-cache")
        assert result.exit_code == 0, result.output
        assert "resuming: 10 of 30" in result.output
        assert server.stats["requests"] == 30
    assert len(records(out / "r")) == 30


def test_run_refuses_an_unknown_order(tmp_path: Path) -> None:
    result = invoke_run("demo", "random", tmp_path / "runs", "x", "--order", "shuffled")
    assert result.exit_code == 2
    assert "--order 'shuffled'" in result.output
    assert not (tmp_path / "runs").exists()


def test_a_server_that_caches_images_encodes_each_image_once_in_image_order(
    tmp_path: Path,
) -> None:
    from loopback_server import ImageCost

    bench, golds = write_shared_bench(tmp_path / "bench", 40, 8)
    misses = {}
    for order in ("item", "image"):
        config = ServerConfig(gold=gold_by_marker(golds), image_cost=ImageCost(0, 0, capacity=2))
        with serve(config) as server:
            named_run(bench, openai_spec(server.base_url), tmp_path / "runs", order,
                      "--order", order, "--concurrency", "1", "--no-cache")  # fmt: skip
            assert server.images is not None
            misses[order] = server.images.misses
    assert misses["image"] == 8  # one encoding per image
    assert misses["item"] > 20  # shuffled questions: a cache of 2 images rarely helps


@pytest.mark.parametrize(
    ("n", "count", "first"),
    [(10, 3, [0, 3, 6]), (40, 21, None), (5, 5, [0, 1, 2, 3, 4]), (5, 9, [0, 1, 2, 3, 4]),
     (7, 0, [0, 1, 2, 3, 4, 5, 6])],
)  # fmt: skip
def test_spread_first_moves_evenly_spaced_items_to_the_front(
    n: int, count: int, first: list[int] | None
) -> None:
    from medlens.core.items import Item
    from medlens.execution.dispatch import spread_first

    items = [Item(id=str(i), question="q", kind="open") for i in range(n)]
    order = [int(item.id) for item in spread_first(items, count)]
    assert sorted(order) == list(range(n))  # nothing lost or repeated
    front = order[: min(count, n)] if count else order
    if first is not None:
        assert front == first
    else:  # every stretch of the list gives one
        assert len(front) == count and all(b - a <= 2 for a, b in itertools.pairwise(front))
