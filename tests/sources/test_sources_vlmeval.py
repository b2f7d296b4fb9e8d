"""The streaming GMAI/VLMEvalKit TSV loader and its byte-level scanner."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import random
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest
from PIL import Image

from data_paths import realdata_dir
from gmai_fixture import write_gmai_tsv
from medlens.api import load_benchmark
from medlens.core.errors import InputError, ItemError, SpecError
from medlens.core.items import Item, decode_image
from medlens.sources import tsv_scan
from medlens.sources.tsv_scan import Row, TsvScanner
from medlens.sources.vlmeval_layout import normalise_granularity
from tiny_images import B64, PNG, tiny_png

# --- helpers -----------------------------------------------------------------------------------


HEADER = ["index", "question", "A", "B", "C", "D", "answer", "image", "category"]


def cells(index: str, **changes: str) -> list[str]:
    row = {"index": index, "question": f"Question {index}?", "A": "Normal", "B": "Tumour",
           "C": "Cyst", "D": "nan", "answer": "B", "image": B64, "category": "Anatomy"}  # fmt: skip
    row.update(changes)
    return [row.get(name, "") for name in HEADER]


def write_tsv(
    path: Path,
    rows: list[list[str]],
    header: list[str] = HEADER,
    newline: bytes = b"\n",
    prefix: bytes = b"",
) -> Path:
    lines = [b"\t".join(c.encode("utf-8") for c in line) for line in [header, *rows]]
    path.write_bytes(prefix + newline.join(lines) + newline)
    return path


def load(path: Path, options: str = "") -> list[Item]:
    return list(load_benchmark(f"gmai:{path}{options}").items())


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims a huge size (Pillow refuses it before decoding any pixel)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (width + 1))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


# --- the scanner -------------------------------------------------------------------------------


def random_cell(chooser: random.Random) -> str:
    alphabet = ["a", "b", "é", " ", "\t", '"', "\n", "\r\n", "x" * 30, "ü"]
    return "".join(chooser.choice(alphabet) for _ in range(chooser.randrange(0, 8)))


def read_rows(path: Path, span: int | None = None) -> list[Row]:
    with TsvScanner(str(path)) as scanner:
        return list(iter(lambda: scanner.read_row(span=span), None))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_scanner_reads_what_csv_writes(tmp_path: Path, seed: int, newline: str) -> None:
    chooser = random.Random(seed)
    table = [[random_cell(chooser) or "v" for _ in range(4)] for _ in range(40)]
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter="\t", lineterminator=newline).writerows(table)
    path = tmp_path / "t.tsv"
    path.write_bytes(buffer.getvalue().encode("utf-8"))
    read = [[v.decode("utf-8") for v in row.values] for row in read_rows(path)]
    assert read == table


def test_scanner_spans_long_cells_without_keeping_them(tmp_path: Path) -> None:
    long_cell = "QUJD" * 500
    data = f'a\t{long_cell}\tz\r\nb\t{"r" * 64}\ty\n"c"\t"{long_cell}"\tw\nd\t{long_cell}\r\n'
    path = tmp_path / "t.tsv"
    path.write_bytes(data.encode())
    raw = path.read_bytes()
    rows = read_rows(path, span=1)
    assert [r.values[1] for r in rows] == [b"", b"r" * 64, b"", b""]
    assert [r.lengths[1] for r in rows] == [len(long_cell), 64, len(long_cell), len(long_cell)]
    for row in rows:
        offset, length = row.offset(1), row.lengths[1]
        assert raw[offset : offset + length].decode() in (long_cell, "r" * 64)
    assert [r.values[2] for r in rows[:3]] == [b"z", b"y", b"w"]
    assert len(rows[3].values) == 2


def test_scanner_skips_bom_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_bytes(b"\xef\xbb\xbfindex\tq\r\n\r\n\n1\tx\n\n")
    assert [row.values for row in read_rows(path)] == [[b"index", b"q"], [b"1", b"x"]]
    (tmp_path / "empty.tsv").write_bytes(b"")
    assert read_rows(tmp_path / "empty.tsv") == []


def test_a_file_that_cannot_be_mapped_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_tsv(tmp_path / "fuse.tsv", [cells("1")])

    def no_mapping(*args: object, **kwargs: object) -> None:
        raise OSError(19, "No such device")

    monkeypatch.setattr(tsv_scan.mmap, "mmap", no_mapping)
    with pytest.raises(InputError, match="cannot read the file \\(No such device\\)"):
        load(path)


def test_scanner_hands_mapped_pages_back_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of a memory-mapped file count as the process's memory until they are handed back."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux) to read the process's mapped file pages")
    monkeypatch.setattr(tsv_scan, "RELEASE_BYTES", 1 << 20)
    image = "QUJD" * 250_000  # 1 MB a row, 64 MB in all
    path = tmp_path / "t.tsv"
    path.write_bytes(b"".join(f"{n}\t{image}\tx\n".encode() for n in range(64)))
    resident = []
    with TsvScanner(str(path)) as scanner:
        while scanner.read_row(span=1) is not None:
            resident.append(rss_file_kb())
    assert max(resident) - resident[0] < 16_000, "mapped pages were kept"


def rss_file_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))


def random_raw_cell(chooser: random.Random) -> bytes:
    """A cell as it may appear in a file: plain (quotes inside allowed) or quoted, short or long."""
    size = 4200 if chooser.random() < 0.05 else chooser.choice([0, 1, 3, 8, 70, 300])
    text = "".join(chooser.choice(["a", "é", " ", '"', "\r", "QUJD"]) for _ in range(size))
    if chooser.random() < 0.25:
        special = "".join(chooser.choice(["x", "\t", "\n", "\r\n", '""']) for _ in range(4))
        return f'"{text.replace(chr(34), chr(34) * 2)}{special}"'.encode()
    return text.lstrip('"').rstrip("\r").encode()


def random_raw_table(seed: int) -> bytes:
    chooser = random.Random(seed)
    rows = []
    for _ in range(20):
        width = 6 if chooser.random() < 0.9 else chooser.choice([1, 5, 7])
        newline = chooser.choice([b"\n", b"\r\n"]) + chooser.choice([b"", b"", b"\n"])
        rows.append(b"\t".join(random_raw_cell(chooser) for _ in range(width)) + newline)
    return b"".join(rows)[: None if seed % 3 else -1]  # some files end without a newline


def scan_all(path: Path, span: int | None) -> list[list[tuple]]:
    """Every row as ``(offset, length, value)`` triples, then the error message if one is raised."""
    rows: list[list[tuple]] = []
    with TsvScanner(str(path)) as scanner:
        try:
            while (row := scanner.read_row(span=span)) is not None:
                offsets = [row.offset(column) for column in range(len(row.values))]
                rows.append(list(zip(offsets, row.lengths, row.values, strict=True)))
        except InputError as exc:
            rows.append([(str(exc),)])
    return rows


@pytest.mark.parametrize("span", [None, 0, 2, 5])
@pytest.mark.parametrize("seed", range(8))
def test_split_path_reads_what_the_cell_by_cell_path_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, span: int | None
) -> None:
    path = tmp_path / "t.tsv"
    path.write_bytes(random_raw_table(seed))
    fast = scan_all(path, span)
    monkeypatch.setattr(TsvScanner, "_split_plain_row", lambda *args: None)
    assert fast == scan_all(path, span)


def test_split_path_takes_plain_rows_and_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = "QUJD" * 3000
    lines = [
        f"1\tplain\t{image}\ta\tb\r\n",  # split path, the row ends in CRLF
        f'2\t"quoted"\t{image}\ta\tb\n',  # a quoted cell before the image: cell by cell
        f'3\tplain\t{image}\ta\t"b"\n',  # a quoted cell after it: cell by cell
        f'4\tsay "hi"\t{image}\t\t\n',  # quotes inside a plain cell and empty cells: split
        "5\tshort\n",  # too few cells to reach the image column: cell by cell
    ]
    path = tmp_path / "t.tsv"
    path.write_bytes("".join(lines).encode())
    taken: list[bool] = []
    original = TsvScanner._split_plain_row

    def recording(self: TsvScanner, span: int | None, keep_limit: int) -> Row | None:
        row = original(self, span, keep_limit)
        taken.append(row is not None)
        return row

    monkeypatch.setattr(TsvScanner, "_split_plain_row", recording)
    rows = scan_all(path, 2)
    assert taken == [True, False, False, True, False]
    assert [[v for _, _, v in row] for row in rows] == [
        [b"1", b"plain", b"", b"a", b"b"],
        [b"2", b"quoted", b"", b"a", b"b"],
        [b"3", b"plain", b"", b"a", b"b"],
        [b"4", b'say "hi"', b"", b"", b""],
        [b"5", b"short"],
    ]
    raw = path.read_bytes()
    for row in rows:
        for column, (offset, length, value) in enumerate(row):
            quoted = raw[offset - 1 : offset] == b'"'
            expected = value.replace(b'"', b'""') if quoted else value
            assert raw[offset : offset + length] == (image.encode() if column == 2 else expected)


# --- round trip on a GMAI-format TSV built from real VQA-RAD images ----------------------------


@pytest.fixture(scope="module")
def gmai_tsv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    folder = realdata_dir("vqa_rad")
    path = tmp_path_factory.mktemp("gmai") / "GMAI_mm_bench_VAL.tsv"
    return path, write_gmai_tsv(path, n_rows=36, vqa_rad_dir=folder)


def test_gmai_round_trip_is_lossless(gmai_tsv: tuple[Path, list]) -> None:
    path, rows = gmai_tsv
    benchmark = load_benchmark(f"gmai:{path}")
    assert (benchmark.split, benchmark.has_answers) == ("val", True)
    items = list(benchmark.items())
    assert [i.id for i in items] == [r.index for r in rows]
    for item, row in zip(items, rows, strict=True):
        assert (item.answer, item.kind) == (row.answer, row.kind)
        assert item.meta["granularity"] == row.granularity
        assert item.meta["image_id"] == item.images[0].name == row.owner
        data = item.images[0].read_bytes()
        assert hashlib.sha256(data).hexdigest() == row.png_sha256
        image = decode_image(data)
        assert (image.mode, image.size) == (row.mode, row.size)
        assert hashlib.sha256(image.tobytes()).hexdigest() == row.pixels_sha256


def test_gmai_fixture_covers_what_the_loader_must_handle(gmai_tsv: tuple[Path, list]) -> None:
    path, rows = gmai_tsv
    items = load(path)
    assert {i.meta["granularity"] for i in items} == {"image", "box", "mask", "contour"}
    assert any(r.owner != r.index for r in rows), "no reference rows"
    assert {i.kind for i in items} == {"choice", "multi_choice"}
    assert {r.mode for r in rows} == {"RGB", "L"}
    first = items[0]
    assert first.meta["task"] == first.meta["clinical VQA task"]
    assert first.meta["department"] and first.meta["modality"] and first.meta["source"] == "VQA-RAD"
    assert first.meta["l2-category"] and first.meta["category"] and first.meta["split"] == "val"
    assert "image" not in first.meta and "answer" not in first.meta
    assert any(i.context == "Look at the whole image." for i in items)


def test_test_split_has_no_answers(tmp_path: Path) -> None:
    folder = realdata_dir("vqa_rad")
    path = tmp_path / "GMAI_mm_bench_TEST.tsv"
    rows = write_gmai_tsv(path, n_rows=8, with_answers=False, vqa_rad_dir=folder)
    benchmark = load_benchmark(f"gmai:{path}")
    items = list(benchmark.items())
    assert (benchmark.split, benchmark.has_answers) == ("test", False)
    assert [i.answer for i in items] == [None] * len(rows)
    assert {i.meta["split"] for i in items} == {"test"}


def test_crlf_file_gives_the_same_images(tmp_path: Path) -> None:
    folder = realdata_dir("vqa_rad")
    rows = write_gmai_tsv(tmp_path / "crlf.tsv", n_rows=6, vqa_rad_dir=folder, crlf=True)
    for item, row in zip(load(tmp_path / "crlf.tsv"), rows, strict=True):
        assert hashlib.sha256(item.images[0].read_bytes()).hexdigest() == row.png_sha256
        assert not any(v.endswith("\r") for v in item.meta.values())


# --- dialect, options, answers, headers --------------------------------------------------------


def test_quoted_cells_with_tab_quote_and_newline(tmp_path: Path) -> None:
    question = '"Is the ""mass""\tleft\nor right?"'
    path = write_tsv(tmp_path / "q.tsv", [cells("1", question=question), cells("2")])
    items = load(path)
    assert items[0].question == 'Is the "mass"\tleft\nor right?'
    assert items[1].images[0].read_bytes() == PNG


def test_bom_and_crlf(tmp_path: Path) -> None:
    rows = [cells("1"), cells("2")]
    path = write_tsv(tmp_path / "b.tsv", rows, newline=b"\r\n", prefix=b"\xef\xbb\xbf")
    items = load(path)
    assert [i.id for i in items] == ["1", "2"]
    assert items[1].meta["category"] == "Anatomy"
    assert (
        decode_image(items[1].images[0].read_bytes()).tobytes()
        == Image.open(io.BytesIO(PNG)).tobytes()
    )


@pytest.mark.parametrize(
    ("gold", "kind", "answer"),
    [("B", "choice", "B"), ("AC", "multi_choice", "AC"), ("A,C", "multi_choice", "AC"),
     ("A, C", "multi_choice", "AC"), ("C,A", "multi_choice", "AC"), (" B ", "choice", "B"),
     ("BB", "choice", "B")],
)  # fmt: skip
def test_gold_answers(tmp_path: Path, gold: str, kind: str, answer: str) -> None:
    (item,) = load(write_tsv(tmp_path / "g.tsv", [cells("1", answer=gold)]))
    assert (item.kind, item.answer) == (kind, answer)


def test_options_present_only_when_non_empty_and_not_nan(tmp_path: Path) -> None:
    (item,) = load(write_tsv(tmp_path / "o.tsv", [cells("1", C="", D="NaN")]))
    assert dict(item.options) == {"A": "Normal", "B": "Tumour"}


def test_hint_becomes_context(tmp_path: Path) -> None:
    header = [*HEADER, "hint"]
    rows = [[*cells("1"), "A CT of the head."], [*cells("2"), "nan"], [*cells("3"), ""]]
    items = load(write_tsv(tmp_path / "h.tsv", rows, header=header))
    assert [i.context for i in items] == ["A CT of the head.", None, None]
    assert "hint" not in items[0].meta


def test_headers_match_case_and_space_insensitively(tmp_path: Path) -> None:
    header = ["Index", " QUESTION", "A", "B", "C", "D", "Answer", "IMAGE", "Clinical VQA Task",
              "DEPARTMENT", "perceptual  granularity", "Modality", "L2-Category",
              "Dataset"]  # fmt: skip
    row = [*cells("1")[:8], "Disease Diagnosis", "Urology", "Box Level", "CT", "Kidney", "KiTS"]
    (item,) = load(write_tsv(tmp_path / "h.tsv", [row], header=header))
    assert item.question == "Question 1?" and item.answer == "B"
    expected = {"task": "Disease Diagnosis", "department": "Urology", "granularity": "box",
                "modality": "CT", "source": "KiTS", "L2-Category": "Kidney",
                "perceptual  granularity": "Box Level", "split": "val",
                "image_id": "1"}  # fmt: skip
    assert expected.items() <= item.meta.items()


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [("Image Level", "image"), ("Box Level", "box"), ("mask level", "mask"),
     ("CONTOUR LEVEL", "contour"), ("Contour", "contour"), ("Region", "Region")],
)  # fmt: skip
def test_granularity_is_normalised(raw: str, canonical: str) -> None:
    assert normalise_granularity(raw) == canonical


def test_split_option_overrides_and_unknown_option_is_refused(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "s.tsv", [cells("1")])
    assert load_benchmark(f"gmai:{path}?split=dev").split == "dev"
    assert load_benchmark(f"vlmeval:{path}").name == "vlmeval"
    with pytest.raises(SpecError, match="split"):
        load_benchmark(f"gmai:{path}?splt=dev")


# --- image references --------------------------------------------------------------------------


def test_references_backward_and_forward(tmp_path: Path) -> None:
    other = base64.b64encode(tiny_png(shade=7)).decode()
    rows = [cells("1"), cells("2", image="1"), cells("3", image="4"), cells("4", image=other)]
    items = load(write_tsv(tmp_path / "r.tsv", rows))
    assert [i.id for i in items] == ["1", "2", "4", "3"]
    by_id = {i.id: i for i in items}
    assert by_id["2"].images == by_id["1"].images and by_id["2"].meta["image_id"] == "1"
    assert by_id["3"].images == by_id["4"].images and by_id["3"].meta["image_id"] == "4"
    assert by_id["3"].images[0].read_bytes() == tiny_png(shade=7)


# --- malformed input: whole-file problems are InputErrors naming file, row and field -----------


def _bad_files() -> list[tuple[str, list[list[str]] | bytes, list[str] | None, tuple[str, ...]]]:
    no = [n for n in HEADER]
    return [
        ("empty file", b"", None, ("empty file",)),
        ("header only", [], None, ("header only", "row 1")),
        ("no index column", [cells("1")[1:]], no[1:], ("'index'",)),
        ("no question column", [[c for i, c in enumerate(cells("1")) if i != 1]],
         [n for n in no if n != "question"], ("'question'",)),
        ("no image column", [cells("1")[:7] + cells("1")[8:]],
         [n for n in no if n != "image"], ("'image'",)),
        ("truncated last line", [cells("1"), cells("2")[:5]], None, ("row 2", "'D'", "truncated")),
        ("duplicate index", [cells("7"), cells("8"), cells("7")], None,
         ("row 3", "'index'", "duplicate")),
        ("gold not an option", [cells("1"), cells("2", answer="D")], None,
         ("row 2", "'answer'", "not among the options")),
        ("gold empty", [cells("1", answer="")], None, ("row 1", "'answer'", "empty")),
        ("reference to missing index", [cells("1"), cells("2", image="99")], None,
         ("row 2", "'image'", "'99'")),
        ("reference to a reference", [cells("1"), cells("2", image="1"), cells("3", image="2")],
         None, ("row 3", "'image'", "'2'")),
        ("forward reference to a reference",
         [cells("1"), cells("2", image="3"), cells("3", image="1")], None,
         ("row 2", "'image'", "'3'", "is a reference")),
        ("extra field", [[*cells("1"), "stray"]], None, ("row 1", "stray tab")),
        ("unterminated quote", [cells("1"), cells("2", category='"Anatomy')], None,
         ("row 2", "'category'", "never closed")),
        ("empty question", [cells("1", question=" ")], None, ("row 1", "'question'", "empty")),
    ]  # fmt: skip


@pytest.mark.parametrize(("case", "rows", "header", "expected"), _bad_files(), ids=lambda v: v)
def test_malformed_file_is_an_input_error(
    tmp_path: Path,
    case: str,
    rows: list[list[str]] | bytes,
    header: list[str] | None,
    expected: tuple[str, ...],
) -> None:
    path = tmp_path / "bad.tsv"
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    else:
        write_tsv(path, rows, header=header or HEADER)
    with pytest.raises(InputError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    for part in expected:
        assert part in message, (case, message)


def test_non_utf8_bytes_name_row_and_field(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "latin1.tsv", [cells("1"), cells("2", category="X")])
    path.write_bytes(path.read_bytes().replace(b"Question 2?", b"Qu\xe9stion 2?"))
    with pytest.raises(InputError, match=r"row 2, field 'question': bytes that are not UTF-8"):
        load(path)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such TSV file"):
        load_benchmark(f"gmai:{tmp_path / 'absent.tsv'}")


# --- malformed images: the file loads, the one image fails as an ItemError ---------------------


@pytest.mark.parametrize(
    ("case", "image_cell"),
    [
        ("bad base64 padding", "A" * 65),
        ("bad base64 characters", "!@#$%^&*" * 10),
        ("base64 that is not an image", base64.b64encode(b"not an image at all " * 8).decode()),
        ("empty image cell", ""),
        ("decompression bomb", base64.b64encode(png_header_only(20000, 20000)).decode()),
    ],
)
def test_bad_image_is_an_item_error(tmp_path: Path, case: str, image_cell: str) -> None:
    path = write_tsv(tmp_path / "img.tsv", [cells("1"), cells("2", image=image_cell), cells("3")])
    items = load(path)
    assert [i.id for i in items] == ["1", "2", "3"]
    decode_image(items[0].images[0].read_bytes())
    decode_image(items[2].images[0].read_bytes())
    with pytest.raises(ItemError) as caught:
        decode_image(items[1].images[0].read_bytes(), name="2")
    assert caught.value.kind == "image", case
    if case == "decompression bomb":
        assert "decompression bomb" in str(caught.value)


# --- streaming ---------------------------------------------------------------------------------


def test_streaming_never_holds_a_long_image_cell(tmp_path: Path) -> None:
    big = base64.b64encode(random.Random(1).randbytes(6_000_000)).decode()
    path = write_tsv(tmp_path / "big.tsv", [cells("1", image=big), cells("2", image=big)])
    tracemalloc.start()
    try:
        items = load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [i.images[0].length for i in items] == [len(big), len(big)]
    assert peak < 4_000_000, f"peak {peak:,} bytes while indexing two 8 MB cells"


def test_first_item_comes_before_the_rest_of_the_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = base64.b64encode(random.Random(2).randbytes(3_000_000)).decode()
    path = write_tsv(tmp_path / "many.tsv", [cells(str(n), image=big) for n in range(8)])
    read: list[int] = []
    original = TsvScanner.read_row

    def counting_read_row(
        self: TsvScanner, span: int | None = None, keep_limit: int = 64
    ) -> Row | None:
        row = original(self, span, keep_limit)
        read.append(sum(row.lengths) if row else 0)
        return row

    monkeypatch.setattr(TsvScanner, "read_row", counting_read_row)
    iterator = load_benchmark(f"gmai:{path}").items()
    read.clear()  # what loading read: the header and the first row, to check them
    assert next(iterator).id == "0"
    assert sum(read) < 2 * len(big), f"{sum(read):,} bytes read for the first item"
    assert [i.id for i in iterator] == [str(n) for n in range(1, 8)]
    assert sum(read) > 8 * len(big)
