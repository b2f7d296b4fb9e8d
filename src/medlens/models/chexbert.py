"""A learned CheXpert labeller loaded from a local folder (``medlens chexpert RUN --labeler PATH``).

The folder holds what CheXbert (Smit et al. 2020) needs, all local, nothing downloaded:

- the BERT encoder's ``config.json`` and tokenizer files (``bert-base-uncased`` saved with
  ``save_pretrained``, for the published checkpoint);
- one PyTorch checkpoint (``*.pth`` / ``*.pt``; CheXbert's own is ``chexbert.pth``) whose state
  dict (at the top level or under ``model_state_dict``, keys optionally prefixed ``module.``
  by ``DataParallel``) has ``bert.*`` encoder weights and ``linear_heads.{0..13}.{weight,bias}``:
  13 heads of 4 classes (blank, positive, negative, uncertain) and a last head of 2 (blank,
  positive) for "No Finding", in CheXbert's condition order (:data:`CONDITIONS`).

Each report is truncated to the encoder's 512 tokens (CheXbert's own limit); the [CLS] hidden
state goes through every head and the arg-max class becomes a CheXpert label (1 / 0 / -1, blank
→ not mentioned), the shape ``scoring.chexpert.chexpert_labels`` returns, so every F1 of
``scoring.label_f1`` reads either labeller alike. Weights are loaded with ``weights_only=True``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.extras import require_extra

CONDITIONS: tuple[str, ...] = (
    "Enlarged Cardiomediastinum", "Cardiomegaly", "Lung Opacity", "Lung Lesion", "Edema",
    "Consolidation", "Pneumonia", "Atelectasis", "Pneumothorax", "Pleural Effusion",
    "Pleural Other", "Fracture", "Support Devices", "No Finding",
)  # fmt: skip
"""CheXbert's head order (``src/constants.py`` of the CheXbert repository)."""

_CLASS_LABEL = {1: 1, 2: 0, 3: -1}
"""Head class → CheXpert label (class 0 is "blank": the report does not mention it)."""
MAX_TOKENS = 512
BATCH = 16


class LearnedLabeler:
    """CheXbert-shaped encoder + 14 heads, on CPU, in evaluation mode."""

    def __init__(self, path: str) -> None:
        require_extra("--labeler", "hf", ("torch", "transformers"))
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise InputError(str(folder), None, "--labeler: no such model folder")
        self.path = str(folder)
        self.name = f"learned ({self.path})"
        self.tokenizer, self.encoder, self.heads = _load(folder)

    def labels(self, texts: Sequence[str]) -> list[dict[str, int]]:
        """CheXpert labels (1 / 0 / -1; unmentioned findings absent) of each report."""
        out: list[dict[str, int]] = []
        for start in range(0, len(texts), BATCH):
            out.extend(self._batch(list(texts[start : start + BATCH])))
        return out

    def _batch(self, texts: list[str]) -> list[dict[str, int]]:
        import torch

        encoded = self.tokenizer(
            [t or "" for t in texts], padding=True, truncation=True,
            max_length=MAX_TOKENS, return_tensors="pt",
        )  # fmt: skip
        with torch.inference_mode():
            hidden = self.encoder(
                input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]
            ).last_hidden_state[:, 0, :]
            classes = [head(hidden).argmax(dim=-1).tolist() for head in self.heads]
        return [
            {c: _CLASS_LABEL[k[row]] for c, k in zip(CONDITIONS, classes, strict=True) if k[row]}
            for row in range(len(texts))
        ]


def _load(folder: Path) -> tuple[Any, Any, Any]:
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    checkpoint = _checkpoint_file(folder)
    try:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        problem = f"--labeler: no encoder config/tokenizer ({first})"
        raise InputError(str(folder), None, problem) from None
    encoder = AutoModel.from_config(config, add_pooling_layer=False)
    heads = torch.nn.ModuleList(
        [torch.nn.Linear(config.hidden_size, 4) for _ in CONDITIONS[:-1]]
        + [torch.nn.Linear(config.hidden_size, 2)]
    )
    state = _state_dict(checkpoint)
    _load_part(encoder, state, "bert.", checkpoint)
    _load_part(heads, state, "linear_heads.", checkpoint)
    encoder.eval()
    heads.eval()
    return tokenizer, encoder, heads


def _checkpoint_file(folder: Path) -> Path:
    found = sorted([*folder.glob("*.pth"), *folder.glob("*.pt")])
    if len(found) != 1:
        problem = "no *.pth/*.pt checkpoint" if not found else f"{len(found)} checkpoints"
        raise InputError(str(folder), None, f"--labeler: {problem} (expected one: chexbert.pth)")
    return found[0]


def _state_dict(checkpoint: Path) -> dict[str, Any]:
    import torch

    try:
        loaded = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a file that is not a checkpoint
        problem = f"not a PyTorch checkpoint ({type(exc).__name__})"
        raise InputError(str(checkpoint), None, problem) from None
    state = loaded.get("model_state_dict", loaded) if isinstance(loaded, dict) else None
    if not isinstance(state, dict):
        raise InputError(str(checkpoint), None, "expected a state dict")
    return {key.removeprefix("module."): value for key, value in state.items()}


def _load_part(module: Any, state: dict[str, Any], prefix: str, checkpoint: Path) -> None:
    part = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
    missing, unexpected = _mismatch(module.state_dict().keys(), part)
    if missing or unexpected:
        shown = ", ".join(sorted(missing)[:3] or sorted(unexpected)[:3])
        what = "missing" if missing else "unexpected"
        raise InputError(str(checkpoint), f"keys {prefix}*", f"{what} weights ({shown})")
    try:
        module.load_state_dict(part)
    except RuntimeError as exc:  # a shape mismatch: another encoder size
        first = str(exc).strip().splitlines()[-1].strip()
        problem = f"weights do not fit ({first})"
        raise InputError(str(checkpoint), f"keys {prefix}*", problem) from None


def _mismatch(expected: Iterable[str], part: dict[str, Any]) -> tuple[set[str], set[str]]:
    wanted = {k for k in expected if not k.endswith("position_ids")}
    given = {k for k in part if not k.endswith("position_ids")}
    return wanted - given, given - wanted
