"""Optional ReasonEval backend for solution validity and redundancy.

The MAPLE seed takes v and r from ReasonEval (Xia et al., 2024): a 7B (Mistral) or 34B (Llama)
model with a 3-way head over [negative, neutral, positive] read at the last token of every step.
A step's validity is p_neutral + p_positive and its redundancy p_neutral; a solution's validity is
the minimum over its steps and its redundancy the maximum.

The weights cannot be fetched by mathlens: the user gives a local folder holding the checkpoint
(config.json, tokenizer, weights), and `torch` + `transformers` must be installed. Input follows
ReasonEval's format, "Question:\\n{q}\\nAnswer:\\nLet's think step by step.\\n" followed by the steps;
we tokenize the prompt and each step separately and read the head at each step's last token,
which matches the separator-token layout of the original code up to tokenization at step joins.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mathlens.errors import UserError

PROMPT = "Question:\n{question}\nAnswer:\nLet's think step by step.\n"

_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class ReasonEvalScores:
    """Per-step and solution-level scores from ReasonEval."""

    step_validity: tuple[float, ...]
    step_redundancy: tuple[float, ...]
    validity: float
    redundancy: float


def check_path(path: Path | str | None) -> Path:
    """The checkpoint folder, or a `UserError` that says what is missing."""
    if path is None or str(path).strip() == "":
        raise UserError(
            "the ReasonEval backend needs a local checkpoint folder: pass --reasoneval PATH "
            "(the weights are not downloaded by mathlens)"
        )
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UserError(f"ReasonEval checkpoint folder {folder} does not exist")
    if not (folder / "config.json").is_file():
        raise UserError(f"{folder} has no config.json: not a ReasonEval checkpoint folder")
    return folder


def solution_scores(probs: Sequence[Sequence[float]]) -> ReasonEvalScores:
    """ReasonEval's step and solution scores from per-step [negative, neutral, positive] probabilities."""
    if not probs:
        raise ValueError("no steps to score")
    validity = tuple(float(p[1] + p[2]) for p in probs)
    redundancy = tuple(float(p[1]) for p in probs)
    return ReasonEvalScores(validity, redundancy, min(validity), max(redundancy))


def _load(folder: Path) -> tuple[Any, Any]:
    try:
        import torch
        from torch import nn
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise UserError("the ReasonEval backend needs torch and transformers installed") from exc
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    dim = int(config.get("score_dimension", config.get("score_dim", 3)))
    bias = bool(config.get("use_bias", config.get("bias", False)))
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    base = AutoModel.from_pretrained(str(folder), local_files_only=True, torch_dtype=torch.float32)
    head = nn.Linear(base.config.hidden_size, dim, bias=bias)
    # The head's weights sit in the checkpoint under "score_head.*"; AutoModel ignores them.
    state = _head_state(folder)
    if not state:
        raise UserError(f"{folder}: no score_head weights found in the checkpoint")
    head.load_state_dict(state)
    base.eval()
    head.eval()
    return tokenizer, (base, head)


def _head_state(folder: Path) -> dict[str, Any]:
    import torch

    out: dict[str, Any] = {}
    for file in sorted(folder.glob("*.safetensors")):
        from safetensors.torch import load_file

        tensors = load_file(str(file))
        out.update({k.split("score_head.", 1)[1]: v for k, v in tensors.items() if "score_head." in k})
    for file in sorted(folder.glob("*.bin")):
        tensors = torch.load(str(file), map_location="cpu", weights_only=True)
        out.update({k.split("score_head.", 1)[1]: v for k, v in tensors.items() if "score_head." in k})
    return out


def score_solution(path: Path | str | None, question: str, steps: Sequence[str]) -> ReasonEvalScores:
    """Validity and redundancy of `steps` by the ReasonEval checkpoint at `path`."""
    folder = check_path(path)
    if not steps:
        raise ValueError("no steps to score")
    with _LOCK:
        if str(folder) not in _LOADED:
            _LOADED[str(folder)] = _load(folder)
        tokenizer, (base, head) = _LOADED[str(folder)]
    import torch

    ids: list[int] = list(tokenizer(PROMPT.format(question=question))["input_ids"])
    ends: list[int] = []
    for step in steps:
        ids.extend(tokenizer(step.strip(), add_special_tokens=False)["input_ids"])
        ends.append(len(ids) - 1)
    with torch.no_grad():
        tensor = torch.tensor([ids])
        hidden = base(input_ids=tensor, attention_mask=torch.ones_like(tensor))[0]
        probs = torch.softmax(head(hidden[0, ends, :]), dim=-1).tolist()
    return solution_scores(probs)
