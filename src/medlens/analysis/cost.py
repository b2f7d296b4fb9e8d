"""Token counts and cost of a run (model and judges separately), and its projection to N items.

Prices are USD per million tokens, given as ``input=2.5,output=10``. Billed tokens are those of
records that did not come from the response cache; the projection uses every record that
reports usage (cached ones too: a fresh run of new items would pay for them), so the projected
cost of N items is N × the mean per-item cost, with a Student-t 95% interval of that mean.
A judge's cost is projected over the items it covers, not over every item: its per-item mean
over the items it has lines for (rule-settled ones cost 0), times the number of items it would
cover among the N — the items of the kinds it judged, times the share of the answered items of
those kinds it covered. A ``--limit`` smoke test that answered mostly closed items therefore
does not spread an open-answer judge's cost over the closed items of the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.notation import bad, bounded_number, settings

PRICE_KEYS = ("input", "output")
TOKENS_PER_IMAGE = 85.0
"""Prompt estimates: OpenAI's base cost of one image at low detail; high-detail tiles cost more."""
DEFAULT_OUTPUT_TOKENS = 64
"""Prompt estimates: output tokens of an answer when the model spec sets no ``max_tokens``."""
REASONING_OUTPUT_TOKENS = 512
"""Chain-of-thought answers reason before the letter: several hundred tokens, not a letter's few."""


def answer_tokens(max_tokens: str | None, reasoning: bool = False) -> float:
    """Output tokens of one answer: the model spec's ``max_tokens`` (an upper bound), else 64
    (512 when the strategy asks for reasoning)."""
    if max_tokens and max_tokens.isdigit():
        return float(max_tokens)
    return float(REASONING_OUTPUT_TOKENS if reasoning else DEFAULT_OUTPUT_TOKENS)


MAX_PRICE = 1_000_000.0
"""USD per 1M tokens: far above any model's price, low enough that no cost overflows."""
INPUT_KEYS = ("prompt_tokens", "input_tokens")
OUTPUT_KEYS = ("completion_tokens", "output_tokens")


@dataclass(frozen=True)
class Price:
    input: float
    """USD per 1M input (prompt) tokens."""
    output: float
    """USD per 1M output (completion) tokens."""

    def of(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def parse_price(text: str) -> Price:
    """``input=USD_PER_1M,output=USD_PER_1M`` → Price (``core.notation``'s settings)."""
    expected = "input=USD_PER_1M,output=USD_PER_1M"
    values = {
        key: bounded_number(
            raw, "--price", text, key, low=0, high=MAX_PRICE, unit=" USD per 1M tokens"
        )
        for key, raw in settings(text, "--price", expected, PRICE_KEYS)
    }
    missing = [key for key in PRICE_KEYS if key not in values]
    if missing:
        raise bad("--price", text, f"missing {', '.join(missing)}=USD_PER_1M")
    return Price(values["input"], values["output"])


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int, int]:
    """(input, output) tokens of one usage mapping (OpenAI or Anthropic-style names)."""
    usage = usage or {}

    def first(keys: Sequence[str]) -> int:
        for key in keys:
            if isinstance(usage.get(key), (int, float)):
                return int(usage[key])
        return 0

    return first(INPUT_KEYS), first(OUTPUT_KEYS)


@dataclass
class TokenCount:
    lines: int = 0
    with_usage: int = 0
    input: int = 0
    output: int = 0
    cached_input: int = 0
    cached_output: int = 0

    def add(self, usage: Mapping[str, Any] | None, cached: bool) -> None:
        self.lines += 1
        tokens_in, tokens_out = usage_tokens(usage)
        if tokens_in or tokens_out:
            self.with_usage += 1
        if cached:
            self.cached_input += tokens_in
            self.cached_output += tokens_out
        else:
            self.input += tokens_in
            self.output += tokens_out

    def to_json(self, price: Price) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "with_usage": self.with_usage,
            "input": self.input,
            "output": self.output,
            "total": self.input + self.output,
            "cached": {"input": self.cached_input, "output": self.cached_output},
            "cost": price.of(self.input, self.output),
        }


def judgement_lines(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every line of every judge stage (the calls it paid for): ``runs.judgements``'s
    :func:`~medlens.runs.judgements.call_lines`."""
    from medlens.runs.judgements import call_lines

    return call_lines(run_dir)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and Student-t interval of the mean (the point itself when n < 2 or no spread)."""
    import numpy as np
    from scipy import stats

    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if data.size < 2 or float(data.std(ddof=1)) == 0.0:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, data.size - 1)) * float(
        data.std(ddof=1) / math.sqrt(data.size)
    )
    return mean, mean - half, mean + half


def _projection(per_item: Sequence[float], n: int) -> dict[str, Any] | None:
    if not per_item:
        return None
    mean, lo, hi = mean_interval(per_item)
    return {
        "per_item": mean,
        "cost": mean * n,
        "ci": [max(0.0, lo * n), hi * n],
        "sample": len(per_item),
    }


def _model_tokens(
    records: Mapping[str, Mapping[str, Any]], price: Price
) -> tuple[TokenCount, dict[str, float]]:
    """Token counts of the records, and the cost of each record that reports usage."""
    count = TokenCount()
    per_item: dict[str, float] = {}
    for rid, record in records.items():
        count.add(record.get("usage"), bool(record.get("cached")))
        tokens_in, tokens_out = usage_tokens(record.get("usage"))
        if tokens_in or tokens_out:
            per_item[rid] = price.of(tokens_in, tokens_out)
    return count, per_item


def _judge_tokens(run_dir: Path, price: Price) -> tuple[dict[str, TokenCount], dict[str, float]]:
    """Token counts per judge, and the judge cost of each judged item (all judges, repeats)."""
    judges: dict[str, TokenCount] = {}
    per_item: dict[str, float] = {}
    for name, lines in judgement_lines(run_dir).items():
        count = judges.setdefault(name, TokenCount())
        for line in lines:
            count.add(line.get("usage"), bool(line.get("cached")))
            item = str(line.get("id"))
            per_item[item] = per_item.get(item, 0.0) + price.of(*usage_tokens(line.get("usage")))
    return judges, per_item


def run_cost(run_dir: Path | str, price: Price, scale_to: int | None = None) -> dict[str, Any]:
    """Tokens, billed cost and the projected cost of `scale_to` items (default: the benchmark)."""
    from medlens.runs.view import RunView

    store = RunView(run_dir)
    model, per_item = _model_tokens(store.records(), price)
    judges, judge_per_item = _judge_tokens(store.path, price)
    n = scale_to if scale_to is not None else int(store.run["spec"]["benchmark"]["n_items"])
    model_json = model.to_json(price)
    judges_json = {name: count.to_json(price) for name, count in judges.items()}
    judge_cost = sum(j["cost"] for j in judges_json.values())
    kinds = {item.id: item.kind for item in store.items()}
    model_projection = _projection(list(per_item.values()), n)
    judge_projection = _judge_projection(judge_per_item, kinds, store.records(), scale_to)
    return {
        "run": store.path.name,
        "price": {"input": price.input, "output": price.output, "unit": "USD per 1M tokens"},
        "tokens": {"model": model_json, "judges": judges_json},
        "cost": model_json["cost"] + judge_cost,
        "cost_by": {"model": model_json["cost"], "judges": judge_cost},
        "projected": {
            "items": n,
            "model": model_projection,
            "judges": judge_projection,
            "total": _total(model_projection, judge_projection),
            "method": "N × mean per-item cost (judges: the items they cover among the N); "
            "Student-t 95% interval of the mean; total: the sum, its interval the sum of bounds",
        },
    }


def _judge_projection(
    per_item: Mapping[str, float],
    kinds: Mapping[str, str],
    records: Mapping[str, Any],
    scale_to: int | None,
) -> dict[str, Any] | None:
    """The judges' cost over the items they would cover among the N (see the module doc)."""
    if not per_item:
        return None
    covered_kinds = sorted({kinds[i] for i in per_item if i in kinds})
    answered = sum(1 for i in records if kinds.get(i) in covered_kinds)
    share = len(per_item) / answered if answered else 1.0
    of_kinds: float = sum(1 for kind in kinds.values() if kind in covered_kinds)
    if scale_to is not None:
        of_kinds = scale_to * of_kinds / len(kinds) if kinds else scale_to
    covers = min(1.0, share) * of_kinds
    projection = _projection(list(per_item.values()), 1)
    assert projection is not None
    return {
        "per_item": projection["per_item"],
        "cost": projection["per_item"] * covers,
        "ci": [c * covers for c in projection["ci"]],
        "sample": projection["sample"],
        "covers": {"items": round(covers, 1), "sample": len(per_item), "kinds": covered_kinds},
    }


def _total(*parts: dict[str, Any] | None) -> dict[str, Any] | None:
    present = [part for part in parts if part is not None]
    if not present:
        return None
    return {
        "cost": sum(p["cost"] for p in present),
        "ci": [sum(p["ci"][0] for p in present), sum(p["ci"][1] for p in present)],
        "sample": max(p["sample"] for p in present),
    }


def estimate_prompt_cost(
    prompts: Iterable[str],
    price: Price,
    *,
    output_tokens_per_item: float,
    chars_per_token: float = 4.0,
    tokens_per_image: float = 0.0,
    images_per_prompt: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Cost estimate before any call (``run --dry-run --price``): prompt characters ÷
    `chars_per_token` (+ `tokens_per_image` per image) as input, `output_tokens_per_item` as
    output. It is an estimate from stated assumptions, not a tokenizer count."""
    if chars_per_token <= 0:
        raise SpecError(f"chars_per_token {chars_per_token:g} must be positive")
    texts = list(prompts)
    images = list(images_per_prompt) if images_per_prompt is not None else [0] * len(texts)
    if len(images) != len(texts):
        raise ValueError("images_per_prompt must have one count per prompt")
    input_tokens = sum(len(t) for t in texts) / chars_per_token + tokens_per_image * sum(images)
    output_tokens = output_tokens_per_item * len(texts)
    return {
        "items": len(texts),
        "tokens": {"input": input_tokens, "output": output_tokens},
        "cost": price.of(input_tokens, output_tokens),
        "assumptions": {
            "chars_per_token": chars_per_token,
            "tokens_per_image": tokens_per_image,
            "output_tokens_per_item": output_tokens_per_item,
        },
    }


def strategy_estimate(
    estimate: Mapping[str, Any], requests: int, paths_read: int
) -> dict[str, Any]:
    """`estimate` (one request per item) scaled to a strategy's `requests` per item, where the
    last request also reads `paths_read` earlier answers as input (ensemble refinement's K
    paths, each assumed as long as an answer)."""
    tokens, items = estimate["tokens"], estimate["items"]
    answer = float(estimate["assumptions"]["output_tokens_per_item"])
    scaled = {
        "input": tokens["input"] * requests + answer * paths_read * items,
        "output": tokens["output"] * requests,
    }
    return {**estimate, "tokens": scaled, "requests_per_item": requests}


def cost_lines(result: Mapping[str, Any]) -> list[str]:
    """What `medlens cost` prints."""
    model = result["tokens"]["model"]
    lines = [
        f"model tokens: input {model['input']:,}, output {model['output']:,} "
        f"({model['with_usage']} of {model['lines']} records report usage; cached not billed: "
        f"input {model['cached']['input']:,}, output {model['cached']['output']:,})",
    ]
    for name, judge in result["tokens"]["judges"].items():
        lines.append(
            f"judge {name} tokens: input {judge['input']:,}, output {judge['output']:,} "
            f"(cost ${judge['cost']:.4f})"
        )
    lines.append(
        f"cost: ${result['cost']:.4f} (model ${result['cost_by']['model']:.4f}, "
        f"judges ${result['cost_by']['judges']:.4f})"
    )
    projected = result["projected"]
    total = projected["total"]
    if total is None:
        lines.append(
            "projection: no record reports token usage (baselines, or a backend without usage)"
        )
    else:
        lo, hi = total["ci"]
        lines.append(
            f"projected for {projected['items']:,} items: ${total['cost']:.2f} "
            f"(95% CI ${lo:.2f}–${hi:.2f}, from {total['sample']} items with usage)"
        )
    return lines
