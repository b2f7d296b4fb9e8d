"""TREC 2017 LiveQA Medical (Ben Abacha et al. 2017): consumer health questions, long answers.

Release layout (github.com/abachaa/LiveQA_MedicalTask_TREC2017): ``TestDataset/TREC-2017-LiveQA-
Medical-Test-Questions-w-summaries.xml`` (104 questions) holds ``<NLM-QUESTION qid="TQ1">``
elements with ``<Original-Question>`` (``<SUBJECT>``, ``<MESSAGE>``), ``<NIST-PARAPHRASE>``,
``<NLM-Summary>``, ``<ANNOTATIONS>`` (``<FOCUS fcategory=…>``, ``<TYPE>``) and
``<ReferenceAnswers>`` whose ``<RefAnswer>`` or ``<ReferenceAnswer>`` children carry
``<ANSWER>`` text (both tag spellings occur in the file). MultiMedQA asks the consumer's original
message (``?question=original``, default: subject + message) or the NLM summary
(``?question=summary``, as HELM does).

Items are ``report`` kind with ``meta["answer_format"] = "long"``: scored by ROUGE-L against the
best-matching reference answer (``meta["reference_answers"]``, JSON list) and BLEU-4 — automatic
proxies for the human rating MultiMedQA uses; ``question_type`` and ``focus_category`` are axes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
TEST_FILE = "TREC-2017-LiveQA-Medical-Test-Questions-w-summaries.xml"
CARD = {
    "licence": "no licence stated by the release (NLM/TREC research data; cite the overview)",
    "access": "open",
    "homepage": "https://github.com/abachaa/LiveQA_MedicalTask_TREC2017",
    "citation": (
        "@inproceedings{abacha2017liveqa,\n"
        "  author = {Asma {Ben Abacha} and Eugene Agichtein and Yuval Pinter and "
        "Dina Demner{-}Fushman},\n"
        "  title = {Overview of the Medical Question Answering Task at {TREC} 2017 LiveQA},\n"
        "  booktitle = {Proceedings of the Twenty-Sixth Text REtrieval Conference (TREC 2017)},\n"
        "  year = {2017}\n}"
    ),
}


def load_liveqa(spec: Spec) -> Benchmark:
    """``liveqa:FILE.xml|DIR[?question=original|summary]``."""
    path = native.open_spec(spec, {"question"}, want="any")
    if path.is_dir():
        path = native.first_existing(
            [path / TEST_FILE, path / "TestDataset" / TEST_FILE], "LiveQA test XML", path
        )
    asked = native.choose_option(spec, "question", ("original", "summary"), "original")
    root = _parse(path)

    def iter_items() -> Iterator[Item]:
        for number, element in enumerate(root.iter("NLM-QUESTION"), start=1):
            yield _item(element, path, f"question {number}", asked)

    return native.make_benchmark(spec, "test", iter_items, description=f"LiveQA Medical ({asked})")


def _parse(path: Path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise InputError(path, f"line {exc.position[0]}", f"not well-formed XML ({exc})") from None


def _item(element: ET.Element, path: Path, where: str, asked: str) -> Item:
    qid = element.get("qid") or ""
    if not qid:
        raise InputError(path, f"{where}, attribute 'qid'", "missing")
    question = _question(element, path, f"{where} ({qid})", asked)
    answers = [_clean(a.text) for a in element.iter("ANSWER") if _clean(a.text)]
    if not answers:
        raise InputError(path, f"{where} ({qid}), field 'ANSWER'", "no reference answer")
    meta = {
        "source": "liveqa",
        "split": "test",
        "lang": "en",
        "answer_format": "long",
        "reference_answers": json.dumps(answers, ensure_ascii=False),
    }
    types = [_clean(t.text) for t in element.iter("TYPE") if _clean(t.text)]
    foci = [f.get("fcategory", "") for f in element.iter("FOCUS") if f.get("fcategory")]
    if types:
        meta["question_type"] = types[0].lower()
    if foci:
        meta["focus_category"] = foci[0]
    return Item(id=qid, question=question, kind="report", answer=answers[0], meta=meta)


def _question(element: ET.Element, path: Path, where: str, asked: str) -> str:
    if asked == "summary":
        summary = _clean(element.findtext("NLM-Summary"))
        if not summary:
            raise InputError(path, f"{where}, field 'NLM-Summary'", "missing or empty")
        return summary
    original = element.find("Original-Question")
    subject = _clean(original.findtext("SUBJECT")) if original is not None else ""
    message = _clean(original.findtext("MESSAGE")) if original is not None else ""
    if not message:
        raise InputError(path, f"{where}, field 'MESSAGE'", "missing or empty")
    return f"{subject}: {message}" if subject else message


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())
