"""Which slices of a 3D volume a question shows, as spec options: part of the benchmark's spec.

``slices=N`` (default 5), ``pick=uniform|middle|I,J,K`` (default ``uniform``: the centres of N
equal bins of the cut axis, so the first and last slices, usually empty, are not taken;
``middle``: N neighbouring slices around the centre; a list: those indices), ``plane=stack|
axial|coronal|sagittal`` (default ``stack``: the volume's own slice axis as stored),
``window=auto|LEVEL,WIDTH|soft-tissue|lung|bone|brain`` (default ``auto``: the volume's own
minimum and maximum) and ``order=ascending|descending`` (the images' order in the request, by
slice index). The options live in the canonical spec, the chosen indices in each item's
``meta["slices"]`` and in each image's name, so two runs that saw other slices or another window
never share a fingerprint, a cache entry or a content hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medlens.core.errors import InputError, SpecError
from medlens.core.items import ImageRef
from medlens.core.specs import Spec
from medlens.core.volume_images import Rendering, check_rendering, slice_axis, volume_shape

OPTIONS = ("slices", "pick", "plane", "window", "order")
DEFAULT_SLICES = 5
ORDERS = ("ascending", "descending")
PICKS = ("uniform", "middle")


@dataclass(frozen=True)
class Slicing:
    """The slicing spec of a volume benchmark."""

    count: int
    pick: str
    """``uniform``, ``middle`` or explicit indices ``I,J,K``."""
    rendering: Rendering
    order: str

    def indices(self, depth: int) -> list[int]:
        """The slice indices for a volume `depth` slices deep, in request order."""
        if self.pick not in PICKS:
            chosen = [int(p) for p in self.pick.split(",")]
        elif self.pick == "middle":
            n = min(self.count, depth)
            start = max(0, min(depth - n, depth // 2 - n // 2))
            chosen = list(range(start, start + n))
        else:
            n = min(self.count, depth)
            chosen = sorted({int((i + 0.5) * depth / n) for i in range(n)})
        return sorted(chosen, reverse=self.order == "descending")

    def options(self) -> dict[str, str]:
        """The slicing as spec options, defaults included (the canonical spec records them)."""
        return {"slices": str(self.count), "pick": self.pick, "plane": self.rendering.plane,
                "window": self.rendering.window, "order": self.order}  # fmt: skip

    def meta(self, indices: Sequence[int]) -> dict[str, str]:
        return {"slices": ",".join(map(str, indices)), "plane": self.rendering.plane,
                "window": self.rendering.window, "slice_order": self.order}  # fmt: skip


def parse_slicing(spec: Spec) -> Slicing:
    """The slicing options of `spec` (defaults filled in); SpecError naming a bad option."""
    try:
        count = int(spec.option("slices") or DEFAULT_SLICES)
    except ValueError:
        raise SpecError(
            f"{spec.name}: slices={spec.option('slices')!r} is not a whole number"
        ) from None
    if count < 1:
        raise SpecError(f"{spec.name}: slices must be at least 1")
    pick = spec.option("pick") or "uniform"
    if pick not in PICKS and not all(p.strip().isdigit() for p in pick.split(",")):
        raise SpecError(
            f"{spec.name}: pick={pick!r} is not uniform, middle or a list of indices I,J,K"
        )
    order = spec.option("order") or "ascending"
    if order not in ORDERS:
        raise SpecError(f"{spec.name}: order={order!r} is not one of {', '.join(ORDERS)}")
    try:
        rendering = check_rendering(
            spec.option("plane") or "stack", spec.option("window") or "auto"
        )
    except SpecError as exc:
        raise SpecError(f"{spec.name}: {exc}") from None
    return Slicing(count, pick, rendering, order)


def volume_slices(volume: Path, relative: str, slicing: Slicing, source: Path,
                  where: str) -> tuple[tuple[ImageRef, ...], list[int]]:  # fmt: skip
    """The images of one question on `volume`: one lazy ImageRef per chosen slice."""
    from medlens.core.errors import ItemError

    plane = slicing.rendering.plane
    try:
        depth = volume_shape(str(volume), plane)[slice_axis(str(volume), plane)]
    except ItemError as exc:
        raise InputError(source, where, str(exc)) from None
    indices = slicing.indices(depth)
    outside = [i for i in indices if not 0 <= i < depth]
    if outside:
        raise InputError(
            source, where, f"slice(s) {outside} outside the volume's 0..{depth - 1} ({relative})"
        )
    entry = slicing.rendering.entry()
    refs = tuple(
        ImageRef(source="volume", path=str(volume), offset=index, entry=entry,
                 name=f"{relative}#{plane}[{index}]@{slicing.rendering.window}")
        for index in indices
    )  # fmt: skip
    return refs, indices
