"""Every command's output on the demo benchmark and on the real datasets, byte for byte.

Recorded before the package was split into layers (issue 20) and kept afterwards: a change that
alters what a command prints, a results.json or a run.json shows up here as a diff. A change
that means to alter an output rewrites the copies with ``MEDLENS_UPDATE_GOLDEN=1 pytest
tests/golden`` and commits the diff beside the code.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from data_paths import REALDATA
from golden.harness import Step, check_golden, run_script

RUN_FILES = ("results.json", "run.json")


def run_step(bench: str, model: str, name: str, *extra: str) -> Step:
    """`medlens run` into {ws}/runs/NAME, with its derived files in the transcript."""
    return Step(
        ["run", "--bench", bench, "--model", model, "--out", "{ws}/runs", "--name", name, *extra],
        files=[f"{{ws}}/runs/{name}/{f}" for f in RUN_FILES],
        digest=[f"{{ws}}/runs/{name}/records.jsonl", f"{{ws}}/runs/{name}/items.jsonl"],
    )


def reports(run: str) -> list[Step]:
    """Every report format of one run, and its slices."""
    path = f"{{ws}}/runs/{run}"
    return [
        Step(["report", path]),
        Step(["report", path, "--format", "md"]),
        Step(["report", path, "--format", "json"]),
        Step(
            ["report", path, "--format", "html", "-o", f"{{ws}}/{run}.html"],
            digest=[f"{{ws}}/{run}.html"],
        ),
        Step(
            ["report", path, "--format", "xlsx", "-o", f"{{ws}}/{run}.xlsx"],
            files=[f"{{ws}}/{run}.xlsx"],
        ),
    ]


def write_inputs(ws: Path) -> None:
    """Small input files the demo script reads: a corpus and an id list."""
    (ws / "corpus").mkdir(exist_ok=True)
    (ws / "corpus" / "a.txt").write_text(
        "Which imaging modality was used to acquire this image? computed tomography\n" * 3,
        encoding="utf-8",
    )
    (ws / "exclude.txt").write_text("ct_head-modality\nct_head-anatomy\n", encoding="utf-8")


def write_open_bench(ws: Path) -> None:
    """The judge fixture's open-answer benchmark, replayed answers, and a human rating file."""
    from judge_fixtures import write_open_bench as write

    write(ws / "open", 20, 6)
    rows = [
        {"id": f"o{i}", "rater": "dr1", "equivalent": "yes" if i % 20 < 13 else "no"}
        for i in range(20)
    ]
    with open(ws / "human.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "rater", "equivalent"])
        writer.writeheader()
        writer.writerows(rows)


def write_labels(ws: Path) -> None:
    """A labels CSV over images that `unpack` wrote, for `medlens build`."""
    images = sorted((ws / "unpacked" / "images").iterdir())[:6]
    with open(ws / "labels.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["image", "label", "modality"])
        for i, image in enumerate(images):
            writer.writerow(
                [f"unpacked/images/{image.name}", ["cyst", "mass", "normal"][i % 3], "CT"]
            )


EXTRACT_CASES = "".join(
    json.dumps(c) + "\n"
    for c in [
        {"output": "The answer is B.", "options": {"A": "CT", "B": "MR", "C": "X-ray"}},
        {"output": "b", "options": {"A": "CT", "B": "MR"}},
        {"output": "I cannot tell.", "options": {"A": "CT", "B": "MR"}},
        {"output": "Answer: (C) X-ray", "options": {"A": "CT", "B": "MR", "C": "X-ray"}},
    ]
)


STUDY_FILE = """name = "demo-study"
[models]
rand = "random"
[benchmarks]
demo = { spec = "demo", limit = 40 }
box = { spec = "demo", where = "granularity=box", limit = 20 }
[[boards]]
benchmark = "demo"
by = ["granularity"]
"""


def write_study_files(ws: Path) -> None:
    """A one-model study (one lane: its lines come in plan order) and a bad study file."""
    (ws / "study.toml").write_text(STUDY_FILE, encoding="utf-8")
    bad = STUDY_FILE.replace("limit = 40 }", "limt = 40 }")
    (ws / "bad-study.toml").write_text(bad, encoding="utf-8")


def study_steps() -> list[Step]:
    folder = "{ws}/studies/demo-study"
    run = ["study", "{ws}/study.toml", "--out", "{ws}/studies", "--no-reports"]
    return [
        Step([*run, "--dry-run"], before=write_study_files),
        Step(
            run,
            files=[f"{folder}/study.json", f"{folder}/study.md", f"{folder}/boards/demo.md"],
            digest=[f"{folder}/runs/rand--demo/records.jsonl"],
        ),
        Step(run),
        Step(["study", "{ws}/bad-study.toml", "--out", "{ws}/studies"]),
        Step(["run", "--bench", "demo", "--model", "random", "--model", "first"]),
    ]


DEMO_SCRIPT = [
    Step(["--version"]),
    Step(["benchmarks"], before=write_inputs),
    Step(["benchmarks", "--json"]),
    Step(["models"]),
    run_step("demo", "random", "rand"),
    run_step("demo", "random", "rand"),
    run_step("demo", "oracle", "oracle"),
    run_step("demo", "first", "first", "--prompt", "vlmeval", "--extract", "vlmeval"),
    run_step("demo", "prior", "prior"),
    run_step("demo", "random", "blank", "--probe", "blank-image"),
    run_step("demo", "random", "opts", "--probe", "options-only"),
    run_step(
        "demo", "random", "sel", "--where", "granularity=box", "--sample", "40", "--seed", "3"
    ),
    run_step("demo", "random", "excl", "--exclude", "{ws}/exclude.txt", "--limit", "50"),
    run_step("demo", "random", "cot", "--strategy", "cot"),
    Step(
        [
            "run",
            "--bench",
            "demo",
            "--model",
            "random",
            "--out",
            "{ws}/runs",
            "--name",
            "dry",
            "--dry-run",
        ]
    ),
    Step(
        [
            "run",
            "--bench",
            "demo",
            "--model",
            "random",
            "--out",
            "{ws}/runs",
            "--name",
            "dry",
            "--dry-run",
            "--price",
            "input=2.5,output=10",
        ]
    ),
    Step(["run", "--bench", "nosuch:x", "--model", "random", "--out", "{ws}/runs"]),
    Step(["run", "--bench", "demo", "--model", "nosuch", "--out", "{ws}/runs"]),
    Step(
        [
            "run",
            "--bench",
            "demo",
            "--model",
            "random?seed=5",
            "--out",
            "{ws}/runs",
            "--name",
            "rand",
        ]
    ),
    *reports("rand"),
    *reports("blank"),
    Step(["report", "{ws}/runs/cot"]),
    Step(["slice", "{ws}/runs/rand", "--by", "task,granularity"]),
    Step(["slice", "{ws}/runs/rand", "--by", "modality", "--json"]),
    Step(
        [
            "slice",
            "{ws}/runs/rand",
            "--by",
            "department",
            "--where",
            "granularity=box",
            "--worst",
            "3",
            "--min-n",
            "5",
        ]
    ),
    Step(["slice", "{ws}/runs/rand", "--by", "nosuch"]),
    Step(["compare", "{ws}/runs/rand", "{ws}/runs/first"]),
    Step(["compare", "{ws}/runs/rand", "{ws}/runs/prior", "--json"]),
    Step(["compare", "{ws}/runs/rand", "{ws}/runs/first", "--by", "granularity"]),
    Step(["compare", "{ws}/runs/rand", "{ws}/runs/blank"]),
    Step(["export", "{ws}/runs/rand", "--format", "vlmeval", "-o", "{ws}/vl"], files=["{ws}/vl"]),
    Step(["export", "{ws}/runs/rand", "--format", "gmai-submission", "-o", "{ws}/sub.xlsx"]),
    Step(["check", "demo"]),
    Step(["check", "demo", "--json"]),
    Step(["audit", "demo", "--corpus", "{ws}/corpus", "--n", "4"]),
    Step(["audit", "demo", "--corpus", "{ws}/corpus", "--n", "4", "--json"]),
    Step(["extract", "--kind", "choice"], stdin=EXTRACT_CASES),
    Step(["extract", "--kind", "choice", "--mode", "vlmeval"], stdin=EXTRACT_CASES),
    Step(["board", "{ws}/runs/rand", "{ws}/runs/oracle", "{ws}/runs/first", "{ws}/runs/prior"]),
    Step(
        [
            "board",
            "{ws}/runs/rand",
            "{ws}/runs/oracle",
            "{ws}/runs/first",
            "{ws}/runs/prior",
            "--json",
            "--by",
            "granularity",
        ]
    ),
    Step(
        [
            "board",
            "{ws}/runs/rand",
            "{ws}/runs/first",
            "{ws}/runs/prior",
            "--format",
            "md",
            "--pairs",
            "rand:first",
        ]
    ),
    Step(["board", "{ws}/runs/rand", "{ws}/runs/sel"]),
    Step(["runs", "{ws}/runs"]),
    Step(["runs", "{ws}/runs", "--json"]),
    Step(["show", "{ws}/runs/rand", "ct_head-modality"]),
    Step(["show", "{ws}/runs/first", "ct_head-findings", "--json"]),
    Step(["cost", "{ws}/runs/rand", "--price", "input=2.5,output=10"]),
    Step(["calibrate", "{ws}/runs/rand", "--reference", "gmai-val", "--as", "GPT-4o"]),
    Step(
        [
            "subset",
            "demo",
            "--output",
            "{ws}/sub/sub.jsonl",
            "--sample",
            "30",
            "--stratify",
            "granularity",
        ],
        files=["{ws}/sub/sub.jsonl", "{ws}/sub/sub.subset.json"],
    ),
    Step(
        [
            "subset",
            "demo",
            "--output",
            "{ws}/sub2/solved.jsonl",
            "--drop-solved-by",
            "{ws}/runs/first",
        ]
    ),
    run_step("jsonl:{ws}/sub/sub.jsonl", "random", "onsub"),
    Step(["report", "{ws}/runs/onsub"]),
    Step(["unpack", "demo", "--output", "{ws}/unpacked"], files=["{ws}/unpacked"]),
    Step(
        ["build", "{ws}/labels.csv", "--output", "{ws}/built/built.jsonl", "--options", "3"],
        before=write_labels,
        files=["{ws}/built/built.jsonl"],
    ),
    run_step("jsonl:{ws}/built/built.jsonl", "oracle", "built"),
    run_step("jsonl:{ws}/open/bench.jsonl", "replay:{ws}/open/predictions.csv", "open"),
    *study_steps(),
    # view serves until Ctrl-C, so only its refusals fit a transcript
    Step(["view", "{ws}/unpacked"]),
    Step(["view", "{ws}/runs", "--port", "70000"]),
]


def judge_steps(base_url: str) -> list[Step]:
    """Judge the open run with the loopback judge, then every command that reads judges."""
    spec = f"openai:judge-model?base_url={base_url}&backoff=0&backoff_max=0"
    run = "{ws}/runs/open"
    return [
        Step(
            ["judge", run, "--judge", spec, "--protocol", "equivalence", "--name", "eq"],
            files=[f"{run}/judges/eq/judge.json"],
            digest=[f"{run}/judges/eq/judgements.jsonl"],
        ),
        Step(["judge", run, "--judge", spec, "--protocol", "equivalence", "--name", "eq"]),
        Step(
            [
                "judge",
                run,
                "--judge",
                spec,
                "--protocol",
                "rubric",
                "--name",
                "rub",
                "--scope",
                "all",
            ]
        ),
        Step(["report", run]),
        Step(["report", run, "--format", "json"]),
        Step(["report", run, "--format", "md"]),
        Step(["agreement", run, "--judge", "eq", "--human", "{ws}/human.csv"]),
        Step(
            ["agreement", run, "--judge", "eq", "--human", "{ws}/human.csv", "--json"],
            files=[f"{run}/judges/eq/agreement.json"],
        ),
        Step(["agreement", run, "--judges", "eq,rub"]),
        Step(
            [
                *("judge", run, "--judge", spec, "--judge", f"{spec}&seed=7"),
                *("--protocol", "equivalence", "--name", "duo"),
            ],
            files=[f"{run}/judges/duo/judge.json"],
        ),
        Step(["judge", run, "--judge", spec, "--protocol", "mmbu", "--name", "mm"]),
        Step(["report", run, "--format", "md"]),
        Step(
            [
                "ratings",
                "export",
                run,
                "--judge",
                "eq",
                "--sample",
                "8",
                "--output",
                "{ws}/sheet.xlsx",
            ],
            files=["{ws}/sheet.xlsx"],
        ),
        Step(["cost", run, "--price", "input=2.5,output=10", "--json"]),
        Step(["show", run, "o10"]),
        Step(["slice", run, "--by", "modality"]),
        Step(["report", run, "--score", "judge:eq"]),
        Step(["report", run, "--format", "json", "--score", "combined:rub"]),
        Step(["slice", run, "--by", "modality", "--score", "judge:rub", "--json"]),
        Step(["board", run, "--score", "combined:eq", "--format", "md"]),
        Step(["report", run, "--score", "judge:nope"]),
        *medcmr_steps(spec),
    ]


def write_medcmr_inputs(ws: Path) -> None:
    """A Med-CMR-shaped benchmark and two replayed models (tests/paper_fixtures)."""
    from paper_fixtures import write_medcmr

    def model(right: int, modes: list[str]) -> Any:
        def answer(d: int, k: int, is_open: bool) -> str:
            return (
                modes[(d + k) % len(modes)]
                if is_open
                else ("right" if (7 * d + k) % 10 < right else "wrong")
            )

        return answer

    write_medcmr(
        ws / "medcmr",
        {"base": model(6, ["gold", "negated"]), "tuned": model(4, ["gold", "synonym"])},
    )


def medcmr_steps(judge: str) -> list[Step]:
    """Runs, rubric judges and the Med-CMR layout with its pairs; calibrate against one column."""
    steps = [Step(["--version"], before=write_medcmr_inputs)]
    for name in ("base", "tuned"):
        steps.append(
            run_step("medcmr:{ws}/medcmr", f"replay:{{ws}}/medcmr/{name}.csv", f"cmr-{name}")
        )
        steps.append(Step(["judge", f"{{ws}}/runs/cmr-{name}", "--judge", judge, "--protocol", "rubric",
                           "--name", "rubric"]))  # fmt: skip
    runs = ["{ws}/runs/cmr-base", "{ws}/runs/cmr-tuned"]
    steps += [
        Step(
            [
                "board",
                *runs,
                "--layout",
                "medcmr",
                "--judge",
                "rubric",
                "--pairs",
                "cmr-base:cmr-tuned",
            ]
        ),
        Step(
            [
                "board",
                *runs,
                "--layout",
                "medcmr",
                "--judge",
                "rubric",
                "--pairs",
                "cmr-base:cmr-tuned",
                "--allow-partial",
            ]
        ),
        Step(
            ["board", *runs, "--layout", "medcmr", "--judge", "rubric", "--json", "--allow-partial"]
        ),
        Step(["board", *runs, "--layout", "medcmr", "--format", "md", "--allow-partial"]),
        Step(["board", *runs, "--reference", "medcmr"]),
        Step(
            [
                "calibrate",
                runs[0],
                "--reference",
                "medcmr",
                "--as",
                "GPT-5",
                "--column",
                "SOD",
                "--allow-partial",
            ]
        ),
    ]
    return steps


@pytest.fixture()
def workspace(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder whose path has the same length on every machine and every run (mkdtemp's suffix
    is always 8 characters): a path inside a table cell sets the table's column widths, so the
    workspace, the data and cache folders and the real-data link all live under it."""
    ws = Path(tempfile.mkdtemp(prefix="medlens-golden-", dir="/tmp"))
    monkeypatch.setenv("MEDLENS_CACHE", str(ws / "cache"))
    monkeypatch.setenv("MEDLENS_DATA", str(ws / "data"))
    (ws / "real").symlink_to(REALDATA, target_is_directory=True)
    try:
        yield ws
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def test_demo_commands_match_their_golden_outputs(workspace: Path) -> None:
    from judge_server import JudgeReplies, judge_config
    from loopback_server import LoopbackServer

    write_open_bench(workspace)
    server = LoopbackServer(judge_config(JudgeReplies("verdict")))
    server.start()
    try:
        text = run_script(
            [*DEMO_SCRIPT, *judge_steps(server.base_url)], workspace, workspace / "real"
        )
    finally:
        server.stop()
    check_golden("demo", text)


REAL_SETS = {
    "vqa-rad": "vqa-rad:{real}/vqa_rad",
    "slake": "slake:{real}/slake",
    "pathvqa": "pathvqa:{real}/pathvqa",
    "pubmedqa": "pubmedqa:{real}/pubmedqa",
    "medqa": "medqa:{real}/medqa",
    "medmcqa": "medmcqa:{real}/medmcqa",
    "mmlu": "mmlu:{real}/mmlu_medical",
}


def real_script(name: str, spec: str) -> list[Step]:
    return [
        run_step(spec, "random", f"{name}-random"),
        run_step(spec, "oracle", f"{name}-oracle"),
        run_step(spec, "first", f"{name}-first", "--prompt", "vlmeval", "--extract", "vlmeval"),
        Step(["report", f"{{ws}}/runs/{name}-random"]),
        Step(["report", f"{{ws}}/runs/{name}-random", "--format", "json"]),
        Step(["report", f"{{ws}}/runs/{name}-first", "--format", "md"]),
        Step(["compare", f"{{ws}}/runs/{name}-random", f"{{ws}}/runs/{name}-first", "--json"]),
        Step(
            [
                "board",
                f"{{ws}}/runs/{name}-random",
                f"{{ws}}/runs/{name}-oracle",
                f"{{ws}}/runs/{name}-first",
            ]
        ),
        Step(["check", spec, "--json"]),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_SETS))
def test_real_dataset_commands_match_their_golden_outputs(name: str, workspace: Path) -> None:
    if not (REALDATA / REAL_SETS[name].split("/")[1]).is_dir():
        pytest.skip(f"real data {REALDATA} is absent")
    text = run_script(real_script(name, REAL_SETS[name]), workspace, workspace / "real")
    check_golden(f"real-{name}", text)
