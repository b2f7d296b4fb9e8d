"""`medlens subset`, `medlens unpack` and `medlens run --where/--sample/--stratify/--exclude`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from data_paths import items_of
from gmai_fixture import write_gmai_tsv
from medlens.api import load_benchmark
from medlens.cli import app
from medlens.core.fingerprint import describe
from medlens.execution.selection import allocate

N_ROWS = 120


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GMAI-format TSV from real VQA-RAD images, every 5th row reusing another's image."""
    path = tmp_path_factory.mktemp("gmai") / "VAL.tsv"
    write_gmai_tsv(path, n_rows=N_ROWS)
    return path


def medlens(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


def subset(source: Path, output: Path, *extra: str) -> dict[str, object]:
    code, err = medlens("subset", f"gmai:{source}", "--output", str(output), *extra)
    assert code == 0, err
    sidecar: dict[str, object] = json.loads((output.parent / "subset.json").read_text())
    return sidecar


def rows_of(path: Path) -> dict[str, bytes]:
    """index → the row's bytes, from a plain (unquoted) TSV."""
    lines = path.read_bytes().split(b"\n")
    return {line.split(b"\t", 1)[0].decode(): line for line in lines[1:] if line}


@pytest.mark.parametrize(
    ("sizes", "total", "expected"),
    [
        ({("a",): 5, ("b",): 3, ("c",): 2}, 7, {("a",): 4, ("b",): 2, ("c",): 1}),  # 3.5 2.1 1.4
        ({("a",): 1, ("b",): 1, ("c",): 1}, 2, {("a",): 1, ("b",): 1, ("c",): 0}),  # ties: key
        ({("a",): 10, ("b",): 30}, 4, {("a",): 1, ("b",): 3}),
        ({("a",): 7, ("b",): 2, ("c",): 1}, 10, {("a",): 7, ("b",): 2, ("c",): 1}),
    ],
)
def test_largest_remainder_allocation(
    sizes: dict[tuple[str, ...], int], total: int, expected: dict[tuple[str, ...], int]
) -> None:
    assert allocate(sizes, total) == expected


def test_stratified_sample_counts_and_proportions(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "s" / "sample.tsv"
    sidecar = subset(source, output, "--sample", "37", "--stratify", "granularity,department")
    items = items_of(f"gmai:{output}")
    assert len(items) == 37 == sidecar["n_items"]
    population = Counter(
        (i.meta["granularity"], i.meta["department"]) for i in items_of(f"gmai:{source}")
    )
    drawn = Counter((i.meta["granularity"], i.meta["department"]) for i in items)
    for key, size in population.items():
        assert abs(drawn[key] - 37 * size / N_ROWS) < 1  # each stratum gets its quota ± 1
    assert drawn == Counter(allocate(dict(population), 37)) + Counter()
    source_json = sidecar["source"]
    assert isinstance(source_json, dict)
    assert source_json["content_hash"] == describe(*_bench(source)).content_hash
    assert source_json["n_items"] == N_ROWS
    recipe = sidecar["recipe"]
    assert isinstance(recipe, dict)
    assert recipe["sample"] == 37 and recipe["stratify"] == ["granularity", "department"]


def _bench(path: Path) -> tuple[object, list[object]]:
    benchmark = load_benchmark(f"gmai:{path}")
    return benchmark, list(benchmark.items())  # type: ignore[return-value]


def test_tsv_rows_are_copied_byte_for_byte(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "c" / "cut.tsv"
    subset(source, output, "--fraction", "0.5", "--seed", "7")
    assert output.read_bytes().split(b"\n")[0] == source.read_bytes().split(b"\n")[0]
    old, new = rows_of(source), rows_of(output)
    assert len(new) == N_ROWS // 2
    by_id = {item.id: item for item in items_of(f"gmai:{source}")}
    kept = {item.id: item for item in items_of(f"gmai:{output}")}
    carried = 0
    for index, row in new.items():
        if row == old[index]:
            continue
        # a row whose image was another, dropped row's now carries that row's base64 text
        carried += 1
        target = by_id[index].images[0]
        assert by_id[index].meta["image_id"] not in new
        assert kept[index].images[0].read_bytes() == target.read_bytes()
    assert carried > 0
    assert sum(row == old[index] for index, row in new.items()) > 0
    code, err = medlens("check", f"gmai:{output}")
    assert code == 0, err


def test_where_include_exclude_and_determinism(source: Path, tmp_path: Path) -> None:
    ids = [item.id for item in items_of(f"gmai:{source}")]
    (tmp_path / "in.txt").write_text("\n".join(ids[:60]) + "\n\n")
    (tmp_path / "out.txt").write_text("\n".join(ids[:10]) + "\n")
    args = ["--where", "granularity in (box|mask)", "--include", str(tmp_path / "in.txt"),
            "--exclude", str(tmp_path / "out.txt")]  # fmt: skip
    subset(source, tmp_path / "a" / "w.tsv", *args)
    subset(source, tmp_path / "b" / "w.tsv", *args)
    assert (tmp_path / "a" / "w.tsv").read_bytes() == (tmp_path / "b" / "w.tsv").read_bytes()
    expected = [
        i.id for i in items_of(f"gmai:{source}")[10:60] if i.meta["granularity"] in ("box", "mask")
    ]
    assert [i.id for i in items_of(f"gmai:{tmp_path / 'a' / 'w.tsv'}")] == expected


def test_jsonl_output_keeps_ids_meta_and_image_bytes(source: Path, tmp_path: Path) -> None:
    output = tmp_path / "j" / "box.jsonl"
    subset(source, output, "--where", "granularity=box")
    originals = {item.id: item for item in items_of(f"gmai:{source}")}
    items = items_of(f"jsonl:{output}")
    assert items and all(item.meta["granularity"] == "box" for item in items)
    for item in items:
        original = originals[item.id]
        assert item.question == original.question and item.answer == original.answer
        assert item.meta["department"] == original.meta["department"]
        assert item.images[0].read_bytes() == original.images[0].read_bytes()
    code, err = medlens("check", f"jsonl:{output}")
    assert code == 0, err


def test_jsonl_source_to_tsv_output(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "src", n_items=40)
    output = tmp_path / "t" / "cut.tsv"
    code, err = medlens("subset", f"jsonl:{bench}", "--output", str(output), "--sample", "12",
                        "--stratify", "modality", "--seed", "2")  # fmt: skip
    assert code == 0, err
    originals = {item.id: item for item in items_of(f"jsonl:{bench}")}
    items = items_of(f"vlmeval:{output}")
    assert len(items) == 12
    for item in items:
        assert item.images[0].read_bytes() == originals[item.id].images[0].read_bytes()
        assert dict(item.options) == dict(originals[item.id].options)


def test_drop_solved_by_keeps_what_some_run_got_wrong(source: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    oracle = named_run(f"gmai:{source}", "oracle", runs, "oracle")
    guess = named_run(f"gmai:{source}", "random", runs, "random")
    records = [json.loads(line) for line in (guess / "records.jsonl").read_text().splitlines()]
    wrong = [r["id"] for r in records if r["score"] != 1.0]
    output = tmp_path / "hard" / "hard.tsv"
    sidecar = subset(source, output, "--drop-solved-by", f"{oracle},{guess}")
    assert sorted(i.id for i in items_of(f"gmai:{output}")) == sorted(wrong)
    # a run on the subset shows its recipe
    run = named_run(f"gmai:{output}", "oracle", runs, "on-subset")
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["subset"]["recipe"] == sidecar["recipe"]
    code, _ = medlens("report", str(run), "--format", "md", "--output", str(tmp_path / "r.md"))
    assert code == 0
    report = (tmp_path / "r.md").read_text()
    assert f"| subset | {len(wrong)} of {N_ROWS} items of gmai:{source}" in report
    assert "drop items solved by" in report


def test_drop_flagged_uses_an_audit_report(source: Path, tmp_path: Path) -> None:
    items = items_of(f"gmai:{source}")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(items[3].question + " " + " ".join(items[3].options.values()) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "medlens", "audit", f"gmai:{source}", "--corpus", str(corpus),
         "--n", "3", "--json"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    (tmp_path / "audit.json").write_text(done.stdout)
    flagged = {i["id"] for i in json.loads(done.stdout)["items"] if i["flagged"]}
    assert 0 < len(flagged) < N_ROWS
    output = tmp_path / "clean" / "clean.tsv"
    subset(source, output, "--drop-flagged", str(tmp_path / "audit.json"))
    assert {i.id for i in items_of(f"gmai:{output}")} == {i.id for i in items} - flagged


def test_unpack_writes_images_and_a_loadable_manifest(source: Path, tmp_path: Path) -> None:
    code, err = medlens("unpack", f"gmai:{source}", "--output", str(tmp_path / "un"))
    assert code == 0, err
    originals = items_of(f"gmai:{source}")
    unpacked = items_of(f"jsonl:{tmp_path / 'un' / 'items.jsonl'}")
    assert [i.id for i in unpacked] == [i.id for i in originals]
    for new, old in zip(unpacked, originals, strict=True):
        assert new.images[0].path.endswith(".png")
        assert new.images[0].read_bytes() == old.images[0].read_bytes()
        assert (new.question, new.options, new.answer) == (old.question, old.options, old.answer)
    owners = {i.meta["image_id"] for i in originals}
    assert len(list((tmp_path / "un" / "images").iterdir())) == len(owners)
    code, err = medlens("unpack", f"gmai:{source}", "--output", str(tmp_path / "un"))
    assert code == 2 and "not an empty folder" in err


def test_run_with_a_one_off_selection_records_it(source: Path, tmp_path: Path) -> None:
    ids = [item.id for item in items_of(f"gmai:{source}")]
    (tmp_path / "x.txt").write_text(ids[0] + "\n")
    run = named_run(f"gmai:{source}", "oracle", tmp_path / "runs", "sel", "--where",
                    "granularity!=image", "--sample", "20", "--stratify", "granularity",
                    "--exclude", str(tmp_path / "x.txt"))  # fmt: skip
    spec = json.loads((run / "run.json").read_text())["spec"]
    selection = spec["selection"]
    assert selection["n_items"] == 20 == spec["benchmark"]["n_items"]
    assert selection["recipe"]["where"] == "granularity!=image"
    assert selection["source"]["n_items"] == N_ROWS
    kept = [json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()]
    assert len(kept) == 20 and ids[0] not in {k["id"] for k in kept}
    assert all(k["meta"]["granularity"] != "image" for k in kept)
    plain = named_run(f"gmai:{source}", "oracle", tmp_path / "runs", "plain")
    assert "selection" not in json.loads((plain / "run.json").read_text())["spec"]


BAD = {
    "unknown stratify axis": (["--sample", "5", "--stratify", "colour"], "unknown axis 'colour'"),
    "sample larger than the population": (["--sample", "500"], "larger than the population"),
    "where on an unknown axis": (["--where", "colour=red"], "unknown axis 'colour'"),
    "missing id list": (["--exclude", "nowhere.txt"], "nowhere.txt"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_subset_requests_are_one_line_exit_2_and_nothing_written(
    case: str, source: Path, tmp_path: Path
) -> None:
    extra, problem = BAD[case]
    done = subprocess.run(
        [sys.executable, "-m", "medlens", "subset", f"gmai:{source}", "--output",
         str(tmp_path / "out" / "s.tsv"), *extra],
        capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_source_itself_is_never_the_output(source: Path) -> None:
    before = source.read_bytes()
    code, err = medlens("subset", f"gmai:{source}", "--output", str(source), "--sample", "3")
    assert code == 2 and "the source benchmark itself" in err
    assert source.read_bytes() == before


def test_a_run_selection_matching_nothing_lists_the_known_values(tmp_path: Path) -> None:
    from cli_runs import invoke_run

    result = invoke_run("demo", "first", tmp_path, "w", "--where", "modality=NOPE")
    assert result.exit_code == 2 and "known values: modality: CT" in result.output
    assert not (tmp_path / "w").exists()
    kinds = invoke_run("demo", "first", tmp_path, "k", "--where", "kind=multi_choice")
    assert kinds.exit_code == 0, kinds.output


def test_a_jsonl_subset_of_medmcqa_names_the_items_its_loader_would_refuse(tmp_path: Path) -> None:
    """Real MedMCQA dev holds 21 items with two identical options (its loader warns); a jsonl
    file refuses them, so the subset is refused before anything is written, naming the
    output and the items, not the hidden staging file."""
    from data_paths import realdata_dir

    spec = f"medmcqa:{realdata_dir('medmcqa') / 'dev.json'}"
    out = tmp_path / "mm" / "c.jsonl"
    out.parent.mkdir()
    code, err = medlens("subset", spec, "--where", "subject_name=Anatomy", "--output", str(out))
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert f"--output {out}:" in lines[0] and "staging" not in lines[0]
    assert "same text" in lines[0] and "--exclude" in lines[0]
    assert list(out.parent.iterdir()) == []


def test_a_jsonl_subset_of_a_text_benchmark_leaves_no_empty_images_folder(tmp_path: Path) -> None:
    from data_paths import realdata_dir

    spec = f"medqa:{realdata_dir('medqa') / 'phrases_no_exclude_test.jsonl'}"
    out = tmp_path / "mq" / "q.jsonl"
    code, err = medlens("subset", spec, "--sample", "20", "--output", str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == ["q.jsonl", "subset.json"]
    ran = CliRunner().invoke(app, ["check", f"jsonl:{out}"])
    assert ran.exit_code == 0, ran.output
