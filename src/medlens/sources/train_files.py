"""Finding a release's train split beside the evaluated file (the few-shot exemplars of MedQA, MedMCQA)."""

from __future__ import annotations

from medlens.core.errors import SpecError
from medlens.core.specs import Spec


def train_file_beside(spec: Spec, evaluated: str, loader: str) -> Spec:
    """The spec of the release's train file next to the evaluated one (``test`` → ``train``).

    `evaluated` is the file the loader reads for `spec` (a folder spec resolves to it first).
    """
    from pathlib import Path

    path = Path(evaluated)
    stem = path.name
    for word in ("test", "dev"):
        if word in stem:
            train = path.with_name(stem.replace(word, "train", 1))
            break
    else:
        raise SpecError(f"--strategy few-shot: cannot tell the train file beside {path}")
    if not train.is_file():
        raise SpecError(
            f"--strategy few-shot: {loader} exemplars come from the train file {train}, "
            "which does not exist (give another split with --exemplars SPEC)"
        )
    return Spec(spec.name, str(train), dict(spec.options))
