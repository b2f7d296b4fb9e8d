"""``demo``: the embedded benchmark, built at first use from images shipped in dependencies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from medlens.errors import InputError, SpecError
from medlens.items import Benchmark, Item
from medlens.specs import Spec, check_options

DESCRIPTION = (
    "medlens embedded demo: questions at image/box/mask/contour level about medical images "
    "shipped in pydicom and scikit-image (CT, MR, NM, ultrasound, fundus, IHC, microscopy, ECG)"
)


def data_dir() -> Path:
    """Where built data lives: ``$MEDLENS_DATA``, else the user data directory."""
    configured = os.environ.get("MEDLENS_DATA")
    if configured:
        # Absolute, because items carry their image paths into run directories.
        return Path(configured).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_data_dir("medlens"))


def demo_dir() -> Path:
    """The demo's cache folder, built first if it is missing."""
    from medlens.builder.demo import DEMO_FOLDER
    from medlens.builder.folder import ITEMS_FILE

    folder = data_dir() / DEMO_FOLDER
    if not (folder / ITEMS_FILE).is_file():
        build_demo(folder)
    return folder


def build_demo(folder: Path) -> Path:
    """Build the demo benchmark into ``folder`` (atomically; a few seconds)."""
    from medlens.builder.demo import demo_drafts
    from medlens.builder.folder import write_folder

    try:
        return write_folder(demo_drafts(), folder)
    except OSError as exc:
        raise InputError(
            folder, None, f"cannot build the demo benchmark here ({exc}); set MEDLENS_DATA"
        ) from None


def load_demo(spec: Spec) -> Benchmark:
    """Open the embedded demo benchmark (``demo``; no argument, no options)."""
    if spec.argument:
        raise SpecError(f"demo takes no argument (got {spec.argument!r}); write just 'demo'")
    check_options(spec, set())
    folder = demo_dir()

    def iter_items() -> Iterator[Item]:
        from medlens.builder.folder import read_folder

        return read_folder(folder)

    return Benchmark(
        name="demo",
        spec=spec.canonical(),
        split="val",
        has_answers=True,
        iter_items=iter_items,
        description=DESCRIPTION,
    )
