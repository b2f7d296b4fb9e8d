"""Builder pool bench: how many of SLAKE's organ labels become closed items, and from which pool.

Writes a labels CSV of every SLAKE image's organ and lesion boxes (``detection.json``: one row per
box, ``[x, y, w, h]`` → ``x0,y0,x1,y1``) with ``source`` = slake, the image's ``modality`` and its
``body_part`` (the ``location`` most of the image's questions name), then runs ``medlens build
--granularity box --options 4`` twice: with the widening pools (default) and with
``--strict-pool`` (the narrowest pool only, the builder's behaviour before widening). Prints the
share of labels built and the pool level distribution (``meta["distractor_pool"]``) of each.

    .venv/bin/python bench/build_pools.py [--slake DIR] [--options 4]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SLAKE = Path("/work/shared/realdata/slake")


def organ_labels(slake: Path, out: Path) -> int:
    """The labels CSV; returns its row count."""
    modality: dict[str, str] = {}
    places: dict[str, Counter[str]] = {}
    for split in ("train", "validate", "test"):
        for record in json.loads((slake / f"{split}.json").read_text(encoding="utf-8")):
            modality[record["img_name"]] = record["modality"]
            places.setdefault(record["img_name"], Counter())[record["location"]] += 1
    rows = []
    for image in sorted((slake / "imgs").glob("xmlab*"), key=lambda p: int(p.name[5:])):
        name = f"{image.name}/source.jpg"
        for entry in json.loads((image / "detection.json").read_text(encoding="utf-8")):
            for label, (x, y, w, h) in entry.items():
                rows.append({
                    "image": name, "label": label, "box": f"{x:g},{y:g},{x + w:g},{y + h:g}",
                    "source": "slake", "modality": modality.get(name, ""),
                    "body_part": places[name].most_common(1)[0][0] if name in places else "",
                })  # fmt: skip
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def build(labels: Path, images: Path, output: Path, options: int, *extra: str) -> list[dict]:  # type: ignore[type-arg]
    command = [sys.executable, "-m", "medlens", "build", str(labels), "--images", str(images),
               "--output", str(output), "--granularity", "box", "--options", str(options), *extra]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    print("  " + "\n  ".join(line for line in done.stderr.splitlines() if "building" not in line))
    return [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slake", type=Path, default=DEFAULT_SLAKE)
    parser.add_argument("--options", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="medlens-pools-") as tmp:
        folder = Path(tmp)
        total = organ_labels(args.slake, folder / "labels.csv")
        for title, extra in (("--strict-pool (before)", ("--strict-pool",)), ("widening", ())):
            print(f"{title}:")
            items = build(folder / "labels.csv", args.slake / "imgs", folder / f"{len(extra)}.jsonl",
                          args.options, *extra)  # fmt: skip
            levels = Counter(str(item["meta"].get("distractor_pool")) for item in items)
            shares = ", ".join(f"{name} {n} ({n / len(items):.1%})" for name, n in levels.items())
            print(f"  built {len(items):,} of {total:,} labels ({len(items) / total:.1%}); "
                  f"pool levels: {shares}")  # fmt: skip


if __name__ == "__main__":
    main()
