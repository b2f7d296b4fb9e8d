"""MMBU's wording rules in `medlens build`: the built-in lexicon, `--lexicon FILE`, a question
that names its gold answer (issue 33 item 7)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from test_build_labels import build, slake_labels, write_mask_set
from typer.testing import CliRunner

from items_fixtures import one_error_line
from medlens.cli import app
from medlens.core.errors import InputError
from medlens.core.lexicon import (
    CATEGORIES,
    builtin_lexicon,
    judge_wording,
    parse_lexicon,
)


def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_the_builtin_lexicon_has_hundreds_of_sourced_terms_in_the_four_categories() -> None:
    lexicon = builtin_lexicon()
    counts = Counter(term.category for term in lexicon.terms)
    assert len(lexicon) >= 400 and set(counts) == set(CATEGORIES)
    assert all(n >= 40 for n in counts.values()), counts
    assert all(term.source for term in lexicon.terms)
    folded = [term.term.casefold() for term in lexicon.terms]
    assert len(folded) == len(set(folded))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Is there a pneumothorax?", [("pneumothorax", "disease")]),
        ("Two gliomas and metastases", [("gliomas", "disease"), ("metastases", "malignancy")]),
        ("basal cell carcinomas here", [("basal cell carcinomas", "disease")]),  # longest wins
        ("tumourigenesis and pretumour", []),  # whole words only
        ("Crohn disease, Crohn's disease", [("Crohn disease", "disease"), ("Crohn's disease", "disease")]),
        ("MS lesions; 5 ms echo time", [("MS", "abbreviation")]),  # abbreviations: own capitals
        ("two PEs", [("PEs", "abbreviation")]),
        ("nevi and a CARCINOMA", [("nevi", "disease"), ("CARCINOMA", "malignancy")]),
        ("This is a CT image of the abdomen. What is shown inside the red box?", []),
    ],
)  # fmt: skip
def test_lexicon_matching_respects_words_case_and_plurals(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(h.word, h.category) for h in builtin_lexicon().find(text)] == expected


def test_the_rules_allow_yes_no_subjects_stated_choices_and_grounding_targets() -> None:
    lexicon = builtin_lexicon()
    assert not judge_wording("Is there a pneumothorax?", lexicon, kind="yes_no")
    stated = judge_wording(
        "Is the lesion benign or malignant?", lexicon, kind="choice",
        options=["benign", "malignant"], golds=["malignant"],
    )  # fmt: skip
    assert not stated
    grounding = judge_wording("Where is the polyp in this image?", lexicon, kind="detect",
                              target="Polyp")  # fmt: skip
    assert not grounding
    named = judge_wording(
        "Which tumour is shown: the glioma?", lexicon, kind="choice",
        options=["glioma", "meningioma", "pituitary adenoma"], golds=["glioma"],
    )  # fmt: skip
    assert named.names_gold == ("glioma",)
    assert [(h.word, h.category) for h in named.hits] == [("tumour", "malignancy")]


def test_a_layout_naming_every_option_by_its_distinctive_words_is_a_stated_choice() -> None:
    """The demo's ECG item lists every lead of the layout ("II, aVL, V2") and mentions "a lead II
    rhythm strip": every option ("lead V2", "lead II", …) is named, so its gold is not given away."""
    question = (
        "Rows I, aVR, V1, V4 / II, aVL, V2, V5 / III, aVF, V3, V6, then a lead II rhythm strip. "
        "Which lead is inside the red box?"
    )
    options = ["lead V2", "lead V5", "lead II", "lead V1"]
    kept = judge_wording(question, builtin_lexicon(), kind="choice", options=options,
                         golds=["lead II"])  # fmt: skip
    assert not kept
    partial = judge_wording(question, builtin_lexicon(), kind="choice",
                            options=[*options[:3], "lead X9"], golds=["lead II"])  # fmt: skip
    assert partial.names_gold == ("lead II",)


def test_default_build_warns_about_lexicon_words_without_a_lint_list(tmp_path: Path) -> None:
    labels = write_mask_set(tmp_path)
    text = (labels.read_text().replace("modality\n", "modality,specimen\n")
            .replace(",US\n", ",US,tumour biopsy\n"))  # fmt: skip
    labels.write_text(text)
    code, _, err = build(str(labels), "--output", str(tmp_path / "l.jsonl"), "--granularity",
                         "mask", "--options", "3", "--template", "full")  # fmt: skip
    assert code == 0
    warnings = warnings_of(err)
    assert len(warnings) == 12, err
    assert all("contains 'tumour' (malignancy)" in line for line in warnings)
    assert "labels.csv, row 1: question of item '1' contains" in warnings[0]


def test_real_slake_detect_questions_may_name_their_target_but_no_other_term(
    tmp_path: Path,
) -> None:
    labels, root, rows = slake_labels(tmp_path)
    assert any(row["label"] in ("Cardiomegaly", "Pneumonia", "Liver Cancer") for row in rows)
    out = tmp_path / "d.jsonl"
    code, _, err = build(str(labels), "--images", str(root), "--output", str(out),
                         "--task", "detect", "--options", "0")  # fmt: skip
    assert code == 0 and not warnings_of(err), err
    code, _, err = build(str(labels), "--images", str(root), "--output", str(tmp_path / "e.jsonl"),
                         "--task", "detect", "--options", "0",
                         "--question", "Where is the {label}? It may be a metastatic lesion.")  # fmt: skip
    warnings = warnings_of(err)
    assert code == 0 and len(warnings) == 21, err  # 20 named, then a count
    assert all("contains 'metastatic' (malignancy)" in line for line in warnings[:20])
    assert warnings[-1].startswith("warning: … and ") and "more questions" in warnings[-1]


def test_a_real_slake_question_that_names_its_gold_answer_is_called_out(tmp_path: Path) -> None:
    labels, root, _ = slake_labels(tmp_path, n_images=3)
    code, _, err = build(str(labels), "--images", str(root), "--output", str(tmp_path / "g.jsonl"),
                         "--granularity", "box", "--options", "0",
                         "--question", "Is the {label} inside the red box?")  # fmt: skip
    named = [line for line in warnings_of(err) if "names its gold answer" in line]
    assert code == 0 and named, err
    assert "question of item '1' names its gold answer 'Liver'" in named[0]


def test_lexicon_file_adds_terms_and_bad_files_are_refused_before_writing(tmp_path: Path) -> None:
    labels = write_mask_set(tmp_path)
    text = (labels.read_text().replace("modality\n", "modality,specimen\n")
            .replace(",US\n", ",US,core biopsy\n"))  # fmt: skip
    labels.write_text(text)
    extra = tmp_path / "mine.tsv"
    extra.write_text("# our site's words\nterm\tcategory\nbiopsy\toutcome\tsite list\n")
    args = [str(labels), "--granularity", "mask", "--options", "3", "--template", "full"]
    code, _, err = build(*args, "--output", str(tmp_path / "a.jsonl"), "--lexicon", str(extra))
    assert code == 0 and "contains 'biopsy' (outcome)" in err
    code, _, err = build(*args, "--output", str(tmp_path / "b.jsonl"))
    assert code == 0 and "biopsy" not in err
    for body, field in (("biopsy\toutcome\nBiopsy\tdisease\n", "line 2, field 'term'"),
                        ("biopsy\tprocedure\n", "line 1, field 'category'"),
                        ("biopsy\n", "line 1, field 'category'")):  # fmt: skip
        extra.write_text(body)
        output = tmp_path / "refused.jsonl"
        result = CliRunner().invoke(app, ["build", *args, "--output", str(output),
                                          "--lexicon", str(extra)])  # fmt: skip
        line = one_error_line(result)
        assert f"mine.tsv, {field}" in line, line
        assert not output.exists() and not (tmp_path / "refused_images").exists()


def test_parse_lexicon_names_the_duplicate_and_its_first_line() -> None:
    with pytest.raises(
        InputError,
        match=r"x.tsv, line 3, field 'term': duplicate term 'PNEUMONIA' \(already on line 1\)",
    ):
        parse_lexicon("pneumonia\tdisease\n\nPNEUMONIA\tdisease\n", "x.tsv")
    assert len(parse_lexicon("a\tdisease\n# c\n", "x.tsv")) == 1


def test_a_gold_ending_in_a_capital_has_no_plural_and_plain_properties_are_no_outcome() -> None:
    question = "Which lead is inside the red box? Is the QRS complex predominantly negative?"
    found = judge_wording(
        question, builtin_lexicon(), kind="choice", options=["lead I", "lead V2"], golds=["lead I"]
    )
    assert not found  # the demo's ECG items: "lead is" is not the plural of "lead I"
    named = judge_wording("Two nodules here.", builtin_lexicon(), kind="choice",
                          options=["nodule", "cyst"], golds=["nodule"])  # fmt: skip
    assert named.names_gold == ("nodule",)
