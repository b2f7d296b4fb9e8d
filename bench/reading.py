"""Benchmark: reading and scoring the same outputs under every reading mode (issue 23).

    .venv/bin/python bench/reading.py [--realdata ../shared/realdata] [--repeat 20]

Reads the real SLAKE (English) and VQA-RAD test questions, gives each a few realistic model
outputs (a bare word, a sentence restating the question, a complementary-term statement, a
hedge, a statement about another finding), and times ``read_and_score`` per mode over all of
them. Prints outputs per second per mode and each mode's time as a ratio to VLMEvalKit's exact
matching measured in the same run (the cheapest reader), so the cost of question polarity is
visible. Peers run only on the datasets they have.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from medlens.api import load_benchmark
from medlens.core.items import Item
from medlens.extract.peers import PEER_MODES, peer_module
from medlens.scoring.item_scores import read_and_score

FORMS = (
    "{word}",
    "{word_cap}, there is.",
    "There is no abnormality.",
    "The {organ} appears abnormal.",
    "I can't rule out a mass.",
    "No pleural effusion is seen.",
    "Yes, there is a nodule in the left lung.",
    "<think>Looking at the image.</think>No",
)


def outputs_for(item: Item) -> list[str]:
    word = str(item.answer or "yes")
    organ = item.meta.get("location", "liver").lower() or "liver"
    return [f.format(word=word, word_cap=word.capitalize(), organ=organ) for f in FORMS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdata", type=Path, default=Path("../shared/realdata"))
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    items = [
        item
        for spec in (f"slake:{args.realdata / 'slake'}", f"vqa-rad:{args.realdata / 'vqa_rad'}")
        for item in load_benchmark(spec).items()
        if item.kind == "yes_no"
    ]
    pairs = [(item, text) for item in items for text in outputs_for(item)]
    print(f"{len(items)} yes/no questions × {len(FORMS)} outputs = {len(pairs)} outputs")
    timings = {}
    for mode in ("vlmeval", "medlens", *PEER_MODES):
        supported = peer_module(mode).SUPPORTED if mode in PEER_MODES else None
        chosen = [p for p in pairs if supported is None or p[0].meta["source"] in supported]
        started = time.perf_counter()
        for _ in range(args.repeat):
            for item, text in chosen:
                read_and_score(item, text, mode)
        elapsed = (time.perf_counter() - started) / args.repeat
        timings[mode] = (len(chosen), elapsed)
    base_n, base_s = timings["vlmeval"]
    for mode, (n, seconds) in timings.items():
        per_second = n / seconds if seconds else float("inf")
        ratio = (seconds / n) / (base_s / base_n)
        print(f"{mode:>13}: {n:5d} outputs in {seconds * 1000:8.1f} ms  "
              f"{per_second:10,.0f}/s  {ratio:5.2f}× vlmeval per output")  # fmt: skip


if __name__ == "__main__":
    main()
