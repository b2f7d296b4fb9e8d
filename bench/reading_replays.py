"""Benchmark: verdicts on realistic outputs for real questions, per class, old reader vs new.

    # 1. write the replays once (needs this medlens: it reads the vocabularies)
    .venv/bin/python bench/reading_replays.py write /tmp/replays.json
    # 2. read them with any medlens on PYTHONPATH (the old one too), timing the reading
    PYTHONPATH=OLD/src .venv/bin/python bench/reading_replays.py read /tmp/replays.json /tmp/old.json
    PYTHONPATH=src .venv/bin/python bench/reading_replays.py read /tmp/replays.json /tmp/new.json
    # 3. per class: agreement with the careful reader's verdict, and verdicts that changed
    .venv/bin/python bench/reading_replays.py compare /tmp/old.json /tmp/new.json

The outputs are written in the styles real models use (issue 34) for real SLAKE, VQA-RAD,
MedQA and PubMedQA questions (../shared/realdata), each with the verdict a careful reader gives:
open answers as sentences (the gold or a vocabulary name of it), over-crediting guards (lists,
hedges, comparisons, negations, less specific answers), final choices after reasoning, non-answers
(refusals, questions back, file names, cut outputs) and yes/no answers that describe the image;
issue 42 adds PathVQA and ``yes_no_statement``: statements of presence and absence by the
question's shape ("There is no evidence of X." to "Is there X?", "S does not show Y." to PathVQA's
"Does S show Y?", "Abnormalities are seen." to "Is there an abnormality?", "This is a computed
tomography image." to "Is this a CT?"), and ``cut_committed``: outputs cut at the token cap
after they committed ("Yes, the image shows this finding, which is", "The answer is C, because
the", "This image shows the liver, which is located in the") or while hedging ("It could be the
liver or").
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

SPECS = {
    "slake": "slake:{root}/slake?lang=en",
    "vqa-rad": "vqa-rad:{root}/vqa_rad",
    "medqa": "medqa:{root}/medqa",
    "pubmedqa-choice": "pubmedqa:{root}/pubmedqa?format=choice",
    "pathvqa": "pathvqa:{root}/pathvqa",
}
OPEN = (
    ("open_sentence", "This image shows the {form}.", True),
    ("open_sentence", "The answer is {form}, as seen in this image.", True),
    ("open_sentence", "It is {form}.", True),
    ("open_guard", "It could be {gold} or {other}.", False),
    ("open_guard", "Possibly {gold}.", False),
    ("open_guard", "The {other} is larger than the {gold}.", False),
    ("open_guard", "It is not {gold}.", False),
    ("open_guard", "There is no evidence of {gold}.", False),
    ("open_guard", "The image is without {gold}.", False),
    ("cut_committed", "This image shows the {gold}, which is located in the", True),
    ("cut_committed", "It could be the {gold} or", False),
)
YES_NO = (
    ("yes_no_sentence", "{statement}", "{word}"),
    ("non_answer", "Could you share a clearer image?", None),
    ("non_answer", "I'm sorry, I cannot view the image you are referring to.", None),
    ("non_answer", "image_{id}.png", None),
    ("non_answer", "There is evidence of", None),
    ("cut_committed", "{statement_cut}", "{word}"),
)
CHOICE = (
    (
        "reasoning_choice",
        "Let's go through the options. {wrong_text} is unlikely here. The most "
        "likely answer is: {gold}) {gold_text}. Option {wrong} would need other findings.",
        "{gold}",
    ),
    (
        "reasoning_choice",
        "{wrong_text} does not fit, which eliminates {wrong}; that leaves {gold}.",
        "{gold}",
    ),
    ("reasoning_choice", "Weighing each option, the best choice here is {gold_text}.", "{gold}"),
    ("reasoning_choice", "Option {wrong} is a distractor.\nFinal answer: {gold}", "{gold}"),
    ("non_answer", "Option {wrong} seems to fit because {wrong_text} and the", None),
    ("non_answer", "What additional history is available?", None),
    ("cut_committed", "The answer is {gold}, because the", "{gold}"),
    (
        "cut_committed",
        "{wrong_text} is unlikely. Therefore, the most likely answer is {gold_text}, which",
        "{gold}",
    ),
    ("non_answer", "Let's weigh the options. Option {wrong} seems", None),
)


_THERE = re.compile(r"^(?:is|are)\s+there\s+(?:an?\s+|any\s+)?(.+?)\??$", re.I)
_SHOWS = re.compile(
    r"^(?:does|do)\s+(.+?)\s+(?:show|reveal|demonstrate|contain|have|include)\s+(.+?)\??$", re.I
)
_IS_THIS = re.compile(r"^(?:is|was)\s+(?:this|the image|this image)\s+(?:an?\s+)?(ct|mri)\b", re.I)
PRESENCE = {  # "Is there X?": statements of presence, and negations inside the noun phrase
    "yes": ("There is {x}.", "{X} is seen in this image.", "The image shows {x}.",
            "Yes, there is evidence of {x}.", "{X} is present."),
    "no": ("There is no evidence of {x}.", "No {x} is seen.", "The image shows no {x}.",
           "The image is without {x}.", "{X} is absent.", "No, there is no {x}."),
}  # fmt: skip
SHOWS = {  # PathVQA's "Does S show Y?"
    "yes": ("{S} shows {y}.", "Yes, {s} shows {y}."),
    "no": ("{S} does not show {y}.", "No, {s} does not show {y}.", "{S} shows no {y}."),
}  # fmt: skip
ABNORMAL = {  # generic presence statements to "Is there an abnormality?"-like questions
    "yes": ("Abnormalities are seen.", "There are abnormal findings.", "An abnormality is visible."),
    "no": ("No abnormalities are seen.", "There is no abnormality.", "The image appears normal."),
}  # fmt: skip
MODALITY = {"CT": ("computed tomography", "an MRI"), "MRI": ("magnetic resonance", "a CT")}


def _statements(item: Any) -> list[tuple[str, str]]:
    """(statement, the yes/no it says) for a yes/no question, by the question's shape."""
    from medlens.extract.polarity import parse_question

    question = item.question.strip()
    asked = parse_question(question)
    if asked.term == "abnormal" and not asked.negated:
        return [(text, word) for word, texts in ABNORMAL.items() for text in texts]
    if asked.term == "normal" and not asked.negated:
        flip = {"yes": "no", "no": "yes"}
        return [(text, flip[word]) for word, texts in ABNORMAL.items() for text in texts]
    if (found := _IS_THIS.match(question)) is not None:
        same, other = MODALITY[found.group(1).upper()]
        return [(f"This is a {same} image.", "yes"), (f"This is {other}.", "no")]
    if (found := _THERE.match(question)) is not None:
        x = found.group(1)
        names = {"x": x, "X": x[:1].upper() + x[1:]}
        return [(t.format(**names), word) for word, texts in PRESENCE.items() for t in texts]
    if (found := _SHOWS.match(question)) is not None:
        subject, y = found.group(1), found.group(2)
        names = {"s": subject, "S": subject[:1].upper() + subject[1:], "y": y}
        return [(t.format(**names), word) for word, texts in SHOWS.items() for t in texts]
    return []


def _write(root: Path, out: Path, per_bench: int) -> None:
    from medlens.api import load_benchmark
    from medlens.extract.vocabulary import active_vocabulary

    vocabulary = active_vocabulary()
    rows: list[dict[str, Any]] = []
    for bench, spec in SPECS.items():
        items = list(load_benchmark(spec.format(root=root)).items())
        golds = sorted({str(i.answer) for i in items if i.kind == "open" and i.answer})
        for item in items[
            : per_bench * 3 if bench in ("slake", "vqa-rad", "pathvqa") else per_bench
        ]:
            rows.extend(_outputs(bench, item, golds, vocabulary))
    out.write_text(json.dumps(rows, indent=0), "utf-8")
    print(f"{out}: {len(rows)} outputs, {dict(Counter(r['class'] for r in rows))}")


def _outputs(bench: str, item: Any, golds: list[str], vocabulary: Any) -> list[dict[str, Any]]:
    rows = []
    base = {"bench": bench, "id": item.id}
    if item.kind == "open" and item.answer:
        gold = str(item.answer)
        concept = vocabulary.concept(gold)
        forms = [gold] + ([e.term for e in vocabulary.entries(concept[0])
                           if e.canonical == concept[1]][:2] if concept else [])  # fmt: skip
        other = next(g for g in golds if g.lower() != gold.lower() and "," not in g)
        for name, template, credited in OPEN:
            for form in forms if name == "open_sentence" else [gold]:
                text = template.format(form=form, gold=gold, other=other)
                finish = "length" if name == "cut_committed" else None
                rows.append({**base, "class": name, "output": text, "expected": credited,
                             "finish_reason": finish})  # fmt: skip
    elif item.kind == "yes_no" and item.answer in ("yes", "no"):
        for name, template, expected in YES_NO:
            word = str(item.answer)
            statement = ("Yes, the image clearly shows this." if word == "yes"
                         else "No, this is not seen in the image.")  # fmt: skip
            cut = ("Yes, the image shows this finding, which is" if word == "yes"
                   else "No, there is no evidence of")  # fmt: skip
            text = template.format(statement=statement, id=item.id, statement_cut=cut)
            finish = "length" if text.endswith((" of", " is")) else None
            want = expected.format(word=word) if expected else None
            rows.append({**base, "class": name, "output": text, "expected": want,
                         "finish_reason": finish})  # fmt: skip
        for text, word in _statements(item):
            rows.append({**base, "class": "yes_no_statement", "output": text, "expected": word})
    elif item.kind == "choice" and item.answer:
        gold = str(item.answer)
        wrong = next(letter for letter in item.options if letter != gold)
        for name, template, expected in CHOICE:
            text = template.format(gold=gold, wrong=wrong, gold_text=item.options[gold],
                                   wrong_text=item.options[wrong])  # fmt: skip
            want = expected.format(gold=gold) if expected else None
            finish = "length" if name == "cut_committed" or text.endswith("seems") else None
            rows.append({**base, "class": name, "output": text, "expected": want,
                         "finish_reason": finish})  # fmt: skip
    return rows


def _read(root: Path, replays: Path, out: Path, repeat: int) -> None:
    from medlens.api import load_benchmark
    from medlens.scoring.item_scores import read_and_score

    rows = json.loads(replays.read_text("utf-8"))
    items = {b: _items(load_benchmark, s.format(root=root)) for b, s in SPECS.items()}
    pairs = [(items[r["bench"]][r["id"]], r) for r in rows]
    verdicts: list[dict[str, Any]] = []
    started = time.perf_counter()
    for round_ in range(repeat):
        for item, row in pairs:
            try:
                found, value = read_and_score(item, row["output"], "medlens",
                                              row.get("finish_reason"))  # fmt: skip
            except TypeError:  # a medlens before finish_reason was read
                found, value = read_and_score(item, row["output"], "medlens")
            if round_ == 0:
                answer = _LETTERS.get(str(found.answer), found.answer) if item.kind == "yes_no" \
                    and row["bench"] == "pubmedqa-choice" else found.answer  # fmt: skip
                verdicts.append({"answer": answer, "score": value, "method": found.method})
    seconds = (time.perf_counter() - started) / repeat
    out.write_text(json.dumps({"rows": rows, "verdicts": verdicts, "seconds": seconds}), "utf-8")
    print(f"{len(rows)} outputs read in {seconds * 1000:.1f} ms: {len(rows) / seconds:,.0f}/s")


_LETTERS = {"yes": "A", "no": "B", "maybe": "C"}


def _items(load: Any, spec: str) -> dict[str, Any]:
    """A medlens before ``format=choice`` reads PubMedQA's lettered replays as yes/no items."""
    from medlens.core.errors import SpecError

    try:
        return {i.id: i for i in load(spec).items()}
    except SpecError:
        return {i.id: i for i in load(spec.replace("?format=choice", "")).items()}


def _agrees(row: dict[str, Any], verdict: dict[str, Any]) -> bool:
    if isinstance(row["expected"], bool):
        return (verdict["score"] == 1.0) == row["expected"]
    return verdict["answer"] == row["expected"]


def _compare(old_path: Path, new_path: Path) -> None:
    old, new = (json.loads(p.read_text("utf-8")) for p in (old_path, new_path))
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for row, a, b in zip(new["rows"], old["verdicts"], new["verdicts"], strict=True):
        counts = table[row["class"]]
        counts["n"] += 1
        counts["old_agree"] += _agrees(row, a)
        counts["new_agree"] += _agrees(row, b)
        counts["changed"] += (a["answer"], a["score"]) != (b["answer"], b["score"])
    print(f"{'class':>17}  {'n':>5}  {'changed':>7}  {'agree old':>9}  {'agree new':>9}")
    for name, c in sorted(table.items()):
        print(f"{name:>17}  {c['n']:5d}  {c['changed']:7d}  {c['old_agree'] / c['n']:9.3f}  "
              f"{c['new_agree'] / c['n']:9.3f}")  # fmt: skip
    benches: dict[str, Counter[str]] = defaultdict(Counter)
    for row, a, b in zip(new["rows"], old["verdicts"], new["verdicts"], strict=True):
        benches[row["bench"]].update(n=1, old_agree=_agrees(row, a), new_agree=_agrees(row, b))
    print(f"{'benchmark':>17}  {'n':>5}  {'agree old':>9}  {'agree new':>9}")
    for name, c in sorted(benches.items()):
        print(f"{name:>17}  {c['n']:5d}  {c['old_agree'] / c['n']:9.3f}  "
              f"{c['new_agree'] / c['n']:9.3f}")  # fmt: skip
    print(f"reading time: old {old['seconds'] * 1000:.1f} ms, new {new['seconds'] * 1000:.1f} ms "
          f"({new['seconds'] / old['seconds']:.2f}×)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("write", "read", "compare"))
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--realdata", type=Path, default=Path("../shared/realdata"))
    parser.add_argument("--per-bench", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.step == "write":
        _write(args.realdata, args.files[0], args.per_bench)
    elif args.step == "read":
        _read(args.realdata, args.files[0], args.files[1], args.repeat)
    else:
        _compare(args.files[0], args.files[1])


if __name__ == "__main__":
    main()
