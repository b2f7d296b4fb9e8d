"""A benchmark's content hash covers the bytes a model is sent of every image, whatever holds it
(issue 49: after the image files were replaced, two runs got the same hash, since images were
identified by name only), and stays fast: digests are cached by (file, size, mtime)."""

from __future__ import annotations

import base64
import io
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medlens.core import image_digests
from medlens.core.fingerprint import describe
from medlens.core.items import Benchmark, ImageRef, Item
from tiny_images import tiny_png

PAST = 1_600_000_000
"""A modification time long gone (a file written just now is hashed every time: racy rule)."""

Writer = Callable[[Path, bytes], ImageRef]


def _aged(path: Path, seconds: int = PAST) -> None:
    os.utime(path, (seconds, seconds))


def write_file(folder: Path, data: bytes) -> ImageRef:
    path = folder / "img.png"
    path.write_bytes(data)
    return ImageRef("file", str(path), name="img.png")


def write_dicom(folder: Path, data: bytes) -> ImageRef:
    path = folder / "img.dcm"
    path.write_bytes(b"\0" * 128 + b"DICM" + data)
    return ImageRef("dicom", str(path), name="img.dcm")


def write_tsv(folder: Path, data: bytes) -> ImageRef:
    path = folder / "bench.tsv"
    head = "index\tquestion\timage\n0\tWhat is shown?\t"
    text = base64.b64encode(data).decode("ascii")
    path.write_text(head + text + "\n", encoding="ascii")
    return ImageRef("tsv", str(path), len(head), len(text), name="0")


def _table(data: bytes) -> pa.Table:
    return pa.table({"image": [{"bytes": b"other", "path": "a.png"}, {"bytes": data,
                                                                      "path": "img.png"}]})  # fmt: skip


def write_parquet(folder: Path, data: bytes) -> ImageRef:
    path = folder / "test.parquet"
    pq.write_table(_table(data), path)
    return ImageRef("parquet", str(path), 1, entry="image", name="img.png")


def write_arrow(folder: Path, data: bytes) -> ImageRef:
    path = folder / "data.arrow"
    table = _table(data)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return ImageRef("arrow", str(path), 1, entry="image", name="img.png")


def write_zip(folder: Path, data: bytes) -> ImageRef:
    path = folder / "imgs.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other.png", b"other")
        archive.writestr("imgs/img.png", data)
    return ImageRef("zip", str(path), entry="imgs/img.png", name="img.png")


def write_bytes(folder: Path, data: bytes) -> ImageRef:
    return ImageRef("bytes", data=data, name="img.png")


WRITERS: dict[str, Writer] = {
    "file": write_file, "dicom": write_dicom, "tsv": write_tsv, "parquet": write_parquet,
    "arrow": write_arrow, "zip": write_zip, "bytes": write_bytes,
}  # fmt: skip


def content_hash(*images: ImageRef) -> str:
    items = [Item(id=str(n), question="What is shown?", kind="open", answer="lung",
                  images=(image,)) for n, image in enumerate(images)]  # fmt: skip
    benchmark = Benchmark("jsonl", "jsonl:x", "test", True, lambda: iter(items))
    return describe(benchmark, items).content_hash


def one_byte_changed(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]


@pytest.mark.parametrize("kind", WRITERS)
def test_replacing_one_image_byte_changes_the_hash_for_every_source_kind(
    kind: str, tmp_path: Path
) -> None:
    data = tiny_png(40)
    before = content_hash(WRITERS[kind](tmp_path, data))
    for path in tmp_path.iterdir():
        _aged(path)  # cached now
    assert content_hash(WRITERS[kind](tmp_path, data)) == before  # same bytes, same hash
    image = WRITERS[kind](tmp_path, one_byte_changed(data))  # same size, other bytes
    assert image.source == kind
    for path in tmp_path.iterdir():
        _aged(path, PAST + 60)  # a later (still past) time: what a replaced file has
    assert content_hash(image) != before


def test_the_same_bytes_hash_alike_in_every_container(tmp_path: Path) -> None:
    """The Hub's parquet copy of a release and its native image folder keep one hash."""
    data = tiny_png(90)
    hashes = set()
    for kind, writer in WRITERS.items():
        if kind in ("dicom", "tsv"):  # other bytes (a DICOM header) or other names (TSV index)
            continue
        folder = tmp_path / kind
        folder.mkdir()
        hashes.add(content_hash(writer(folder, data)))
    assert len(hashes) == 1


def test_warm_digests_are_read_from_the_cache_not_the_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    images = []
    for index in range(5):
        path = tmp_path / f"img{index}.png"
        path.write_bytes(tiny_png(index * 30))
        _aged(path)
        images.append(ImageRef("file", str(path), name=path.name))
    images.append(write_tsv(tmp_path, tiny_png(200)))
    _aged(tmp_path / "bench.tsv")
    cold = content_hash(*images)
    reads: list[str] = []
    real = image_digests._read_digest
    monkeypatch.setattr(image_digests, "_read_digest",
                        lambda image: reads.append(image.path) or real(image))  # fmt: skip
    image_digests.forget_process_digests()  # as a new process: only the cache on disk
    assert content_hash(*images) == cold and reads == []
    (tmp_path / "img3.png").write_bytes(tiny_png(31))
    _aged(tmp_path / "img3.png", PAST + 60)
    image_digests.forget_process_digests()
    assert content_hash(*images) != cold and reads == [str(tmp_path / "img3.png")]


def test_a_file_written_just_now_is_hashed_every_time(tmp_path: Path) -> None:
    """Racy rule: a write within one clock tick of the first hash keeps size and mtime."""
    path = tmp_path / "img.png"
    data = tiny_png(10)
    path.write_bytes(data)
    stat = path.stat()
    image = ImageRef("file", str(path), name="img.png")
    before = content_hash(image)
    path.write_bytes(one_byte_changed(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same tick
    assert content_hash(image) != before


def test_an_unreadable_image_hashes_as_such_until_it_is_there(tmp_path: Path) -> None:
    image = ImageRef("file", str(tmp_path / "late.png"), name="late.png")
    missing = content_hash(image)
    assert missing == content_hash(
        ImageRef("tsv", str(tmp_path / "none.tsv"), 5, 0, name="late.png")
    )
    (tmp_path / "late.png").write_bytes(tiny_png(1))
    assert content_hash(image) != missing


def test_a_cache_that_cannot_be_written_only_costs_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = write_file(tmp_path, tiny_png(7))
    _aged(Path(image.path))
    expected = content_hash(image)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("MEDLENS_CACHE", str(blocker))
    image_digests.forget_process_digests()
    assert content_hash(image) == expected


def test_digests_stream_one_image_at_a_time(tmp_path: Path) -> None:
    """A file image is read in chunks: a large one hashes like hashlib over its bytes."""
    import hashlib

    big = tmp_path / "big.png"
    payload = io.BytesIO()
    for n in range(3 * image_digests.CHUNK // 1000 + 7):
        payload.write(bytes([n % 251]) * 1000)
    big.write_bytes(payload.getvalue())
    digest = image_digests._read_digest(ImageRef("file", str(big), name="big.png"))
    assert digest == hashlib.sha256(payload.getvalue()).hexdigest()


def test_few_shot_exemplars_are_recorded_by_their_bytes_too(tmp_path: Path) -> None:
    """A run's spec names its exemplars by id and by content: a replaced exemplar image is
    another run, as a replaced item image is."""
    from medlens.execution.evaluate import strategy_spec
    from medlens.execution.exemplars import Exemplars
    from medlens.execution.strategies import parse_strategy

    def recorded(data: bytes) -> dict[str, object]:
        shot = Item(id="x1", question="What is shown?", kind="open", answer="lung",
                    images=(write_bytes(tmp_path, data),))  # fmt: skip
        exemplars = Exemplars("jsonl:pool.jsonl", 1, {"": (shot,)})
        return strategy_spec(parse_strategy("few-shot:1"), exemplars)["exemplars"]  # type: ignore[no-any-return]

    before, after = recorded(tiny_png(3)), recorded(one_byte_changed(tiny_png(3)))
    assert before["ids"] == after["ids"] and before["content_hash"] != after["content_hash"]
