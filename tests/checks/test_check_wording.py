"""`medlens check`'s wording line: MMBU's wording rules on a benchmark's image questions, with the
built-in lexicon and `--lexicon FILE` (issue 33 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from builder.test_build_labels import build, slake_labels
from data_paths import realdata_dir
from items_fixtures import one_error_line
from medlens.cli import app

runner = CliRunner()


def wording(spec: str, *extra: str) -> dict[str, object]:
    result = runner.invoke(app, ["check", spec, "--json", "--sample", "2", *extra])
    assert result.exit_code in (0, 1), result.output
    checks = json.loads(result.stdout)["checks"]
    return next(c for c in checks if c["name"] == "wording")


def test_real_vqa_rad_questions_are_counted_but_the_rules_do_not_bind_them() -> None:
    line = wording(f"vqa-rad:{realdata_dir('vqa_rad')}")
    assert line["status"] == "info"
    data = line["data"]
    assert data["image_questions"] == 451 and data["rules_bind"] is False
    assert data["names_gold"] == 0 and data["with_terms"] > 0
    assert set(data["categories"]) <= {"disease", "outcome", "malignancy", "abbreviation"}
    assert any("(disease)" in d and d.startswith("item ") for d in line["details"])


def test_a_built_benchmark_whose_questions_name_their_gold_is_warned(tmp_path: Path) -> None:
    labels, root, _ = slake_labels(tmp_path, n_images=3)
    clean, named = tmp_path / "clean.jsonl", tmp_path / "named.jsonl"
    assert build(str(labels), "--images", str(root), "--output", str(clean), "--granularity",
                 "box", "--options", "0")[0] == 0  # fmt: skip
    assert wording(f"jsonl:{clean}")["status"] == "pass"
    assert build(str(labels), "--images", str(root), "--output", str(named), "--granularity",
                 "box", "--options", "0", "--question", "Is the {label} in the red box?")[0] == 0  # fmt: skip
    line = wording(f"jsonl:{named}")
    assert line["status"] == "warn" and line["data"]["rules_bind"] is True
    assert line["details"][0] == "item 1: names its gold answer 'Liver'"
    assert line["data"]["names_gold"] == line["data"]["image_questions"]


def test_lexicon_terms_warn_where_the_rules_bind_and_a_user_file_adds_terms(
    tmp_path: Path,
) -> None:
    labels, root, _ = slake_labels(tmp_path, n_images=3)
    out = tmp_path / "t.jsonl"
    assert build(str(labels), "--images", str(root), "--output", str(out), "--granularity", "box",
                 "--question", "Which structure, maybe a tumour, is in the red box?")[0] == 0  # fmt: skip
    line = wording(f"jsonl:{out}")
    assert line["status"] == "warn" and line["data"]["categories"] == {
        "malignancy": line["data"]["image_questions"]
    }
    assert line["details"][0] == "item 1: 'tumour' (malignancy)"
    extra = tmp_path / "words.tsv"
    extra.write_text("structure\toutcome\n", encoding="utf-8")
    line = wording(f"jsonl:{out}", "--lexicon", str(extra))
    assert line["details"][0] == "item 1: 'structure' (outcome); 'tumour' (malignancy)"
    extra.write_text("structure\toutcome\nStructure\tdisease\n", encoding="utf-8")
    error = one_error_line(runner.invoke(app, ["check", f"jsonl:{out}", "--lexicon", str(extra)]))
    assert "words.tsv, line 2, field 'term': duplicate term 'Structure'" in error


def test_any_benchmark_naming_a_gold_option_in_its_question_is_warned(tmp_path: Path) -> None:
    path = write_jsonl_benchmark(tmp_path, 12)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    first = rows[0]
    gold = first["options"][first["answer"][0]]
    first["question"] = f"Is this {gold}?"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    line = wording(f"jsonl:{path}")
    assert line["status"] == "warn" and line["data"]["rules_bind"] is False
    assert line["details"] == [f"item q0: names its gold answer {gold!r}"]
