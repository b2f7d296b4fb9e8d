"""Peer reading modes: each peer tool's prompt, answer reading and per-item score, so one
prediction file gives every peer's number (``--extract lmms-eval|evalscope|medevalkit|
multimedeval``, ``--prompt`` of the same name; ``medlens explain`` shows why two readings
differ). One module per peer, each citing the peer's files and the commit it follows:

- ``lmms_eval``: SLAKE, MedQA
- ``evalscope``: SLAKE, PubMedQA, MedMCQA
- ``medevalkit``: SLAKE, VQA-RAD, PathVQA, PubMedQA, MedQA, MedMCQA
- ``multimedeval``: SLAKE (English), VQA-RAD, PathVQA, PubMedQA, MedQA, MedMCQA

A peer × dataset pair the peer does not have is refused with one line
(:func:`check_supported`), never read with another dataset's rules. Part of ``extract``:
imports ``core`` and ``extract`` only.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.extract.peers.common import PeerReading, dataset_of, lang_of, unsupported

PEER_MODES: tuple[str, ...] = ("lmms-eval", "evalscope", "medevalkit", "multimedeval")
_MODULES = {
    "lmms-eval": "medlens.extract.peers.lmms_eval",
    "evalscope": "medlens.extract.peers.evalscope",
    "medevalkit": "medlens.extract.peers.medevalkit",
    "multimedeval": "medlens.extract.peers.multimedeval",
}


def peer_module(mode: str) -> ModuleType:
    if mode not in _MODULES:
        raise SpecError(f"unknown peer mode {mode!r} (known: {', '.join(PEER_MODES)})")
    return importlib.import_module(_MODULES[mode])


def is_peer_mode(mode: str) -> bool:
    return mode in _MODULES


def check_supported(mode: str, items: Iterable[Item], flag: str = "--extract") -> None:
    """Refuse a peer on a dataset it has no task for (one line, naming the first such item)."""
    module = peer_module(mode)
    for item in items:
        dataset = dataset_of(item)
        if dataset not in module.SUPPORTED:
            problem = unsupported(mode, dataset, module.SUPPORTED)
            raise SpecError(f"{flag} {mode}: {problem}; item {item.id!r} is from {dataset or '?'}")
        if dataset == "pubmedqa" and item.kind == "choice":
            raise SpecError(
                f"{flag} {mode}: the peer reads PubMedQA as yes/no/maybe, not as lettered "
                f"options; item {item.id!r} is from pubmedqa:…?format=choice (drop format=choice)"
            )
        if mode == "multimedeval" and dataset == "slake" and lang_of(item) != "en":
            raise SpecError(
                f"{flag} {mode}: MultiMedEval reads SLAKE's English questions only "
                f"(vqa.py:170-174); item {item.id!r} is {lang_of(item)!r} (use slake:DIR?lang=en)"
            )


def read_as(item: Item, text: str | None, mode: str) -> PeerReading:
    """The peer's verdict on one output (an errored item has no output: not read here)."""
    return peer_module(mode).read(item, text or "")


def peer_prompt(item: Item, mode: str) -> str:
    return peer_module(mode).prompt(item)


__all__ = ["PEER_MODES", "PeerReading", "check_supported", "is_peer_mode", "peer_prompt", "read_as"]
