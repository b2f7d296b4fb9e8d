"""A user's prompt template in a file (issue 48, item 5): ``run --prompt file:PATH`` sends it,
the run records its texts, version and sha256 and the versions of its reader and prompt; a bad
template is one line naming the file (and line), exit 2, nothing written; an edited template
does not resume the run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app
from medlens.extract.rules_version import READER_RULES_VERSION

TEMPLATE = """version = "3"
description = "short answers"

[prompts]
choice = "Q: {question}\\n{options}\\nReply with one of {letters}."
default = "Q: {question}\\nOne word."
"""


def bench(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": "c1", "question": "Which organ?", "kind": "choice",
             "options": {"A": "liver", "B": "lung"}, "answer": "A"},
            {"id": "o1", "question": "What is shown?", "kind": "open", "answer": "liver"}]  # fmt: skip
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_template_file_is_sent_and_recorded(tmp_path: Path) -> None:
    template = tmp_path / "short.toml"
    template.write_text(TEMPLATE)
    run = named_run(f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "t",
                    "--prompt", f"file:{template}")  # fmt: skip
    shown = CliRunner().invoke(app, ["show", str(run), "c1"]).output
    assert "Q: Which organ?\nA. liver\nB. lung\nReply with one of A, B." in shown
    assert (
        "Q: What is shown?\nOne word." in CliRunner().invoke(app, ["show", str(run), "o1"]).output
    )
    recorded = json.loads((run / "run.json").read_text())
    spec = recorded["spec"]
    assert spec["prompt"] == "file:short.toml"
    assert spec["prompt_template"]["sha256"] == hashlib.sha256(template.read_bytes()).hexdigest()
    assert spec["prompt_template"]["version"] == "3"
    assert recorded["components"] == {
        "reader": {"mode": "medlens", "rules": READER_RULES_VERSION},
        "prompt": {"style": "file:short.toml", "file": "short.toml",
                   "sha256": spec["prompt_template"]["sha256"], "version": "3"},
    }  # fmt: skip
    card = CliRunner().invoke(app, ["report", str(run), "--format", "md"]).output
    assert f"reader medlens rules v{READER_RULES_VERSION}; prompt file:short.toml sha256" in card
    assert "a user's template: version 3, sha256" in card
    template.write_text(TEMPLATE.replace("One word.", "Two words."))
    again = invoke_run(f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "t",
                       "--prompt", f"file:{template}")  # fmt: skip
    assert again.exit_code == 2 and "holds a run with a different spec" in again.output


def test_a_built_in_prompt_records_its_components_and_a_resume_with_others_warns(
    tmp_path: Path,
) -> None:
    data = bench(tmp_path)
    run = named_run(f"jsonl:{data}", "first", tmp_path / "runs", "b", "--prompt", "vlmeval")
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["components"] == {
        "reader": {"mode": "medlens", "rules": READER_RULES_VERSION},
        "prompt": {"style": "vlmeval", "version": 1},
    }
    recorded["components"]["reader"]["rules"] = 0  # as an older medlens recorded it
    (run / "run.json").write_text(json.dumps(recorded))
    (run / "records.jsonl").write_text("")
    again = invoke_run(f"jsonl:{data}", "first", tmp_path / "runs", "b", "--prompt", "vlmeval")
    assert again.exit_code == 0, again.output
    assert "warning: resuming with other components (reader:" in again.output
    after = json.loads((run / "run.json").read_text())
    assert after["components"]["reader"]["rules"] == 0
    assert after["resumed_components"][0]["reader"]["rules"] == READER_RULES_VERSION


@pytest.mark.parametrize(
    ("text", "name", "said"),
    [("[prompts]\nchoice = \"{question} {options}\"\nopen = \"{question} {answer}\"\n", "t.toml",
      "t.toml, line 3: unknown placeholder {answer} (known: {question}, {options}"),
     ("Answer this: {question!r}\n", "t.txt", "t.txt, line 1: placeholder {question} must be a bare name"),
     ("Answer: {question\n", "t.txt", "t.txt: expected '}' before end of string"),
     ("Describe the image.\n", "t.txt", "t.txt: the template never sends {question}"),
     ("[prompts]\nchoice = \"{question}\"\ndefault = \"{question}\"\n", "t.toml",
      "t.toml, template 'choice': a choice template must send {options} or {options_inline}"),
     ("[prompts]\nmcq = \"{question}\"\n", "t.toml", "t.toml, line 2: [prompts] key 'mcq' is no item kind"),
     ("[prompts]\nchoice = \"{question} {options}\"\n", "t.toml",
      "t.toml: no template for the benchmark's open items (add [prompts] open or default)"),
     ("{question}", "missing.txt", "cannot read the prompt template")],
)  # fmt: skip
def test_a_bad_template_is_one_line_naming_the_file(
    tmp_path: Path, text: str, name: str, said: str
) -> None:
    if name != "missing.txt":
        (tmp_path / name).write_text(text)
    result = invoke_run(f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "bad",
                        "--prompt", f"file:{tmp_path / name}")  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "runs" / "bad").exists()
