"""The ReasonEval backend on tiny checkpoints of ReasonEval's two architectures, built here.

ReasonEval-7B is a Mistral model and ReasonEval-34B a Llama model, each with a linear `score_head`
over [negative, neutral, positive] saved beside the base weights (`model.*`, `score_head.*`); the
7B config names the head `score_dimension`/`use_bias`, the 34B `score_dim`/`bias`. The test builds a
randomly initialised model of each layout (2 layers, hidden size 32) with a word-level tokenizer
that adds a BOS token, saves it as a checkpoint folder, scores a solution through
`mathlens.analyze.maple.reasoneval.score_solution`, and compares with ReasonEval's published
procedure computed here from the in-memory model: one sequence made of the prompt and the steps
each followed by the pad token as a separator, separators removed, the head read at the token
before each separator, softmax, step validity p_neutral + p_positive, step redundancy p_neutral,
solution validity the minimum and redundancy the maximum. No real ReasonEval weights are used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
safetensors_torch = pytest.importorskip("safetensors.torch")

from mathlens.analyze.maple import reasoneval  # noqa: E402
from mathlens.analyze.maple.reasoneval import PROMPT, score_solution  # noqa: E402

pytestmark = pytest.mark.slow

QUESTION = "what is 2 plus 3 times 4"
STEPS = ["first 3 times 4 is 12", "then 2 plus 12 is 14", "so the answer is 14"]


def _tokenizer(folder: Path) -> Any:
    words = sorted({w for t in [PROMPT.format(question=QUESTION), *STEPS] for w in t.split()})
    vocab = {"[UNK]": 0, "<s>": 1, "[PAD]": 2, **{w: i + 3 for i, w in enumerate(words)}}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tok.post_processor = tokenizers.processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                                bos_token="<s>")
    fast.save_pretrained(str(folder))
    return fast


def _checkpoint(folder: Path, arch: str) -> tuple[Any, Any, Any]:
    """Save a tiny random checkpoint of `arch` ("7B": Mistral, "34B": Llama); the tokenizer, base and head."""
    folder.mkdir()
    tokenizer = _tokenizer(folder)
    torch.manual_seed(0 if arch == "7B" else 1)
    common = {"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 128,
              "pad_token_id": 2, "bos_token_id": 1}
    if arch == "7B":
        config = transformers.MistralConfig(**common)
        base = transformers.MistralModel(config)
        extra = {"architectures": ["ReasonEval_7B"], "score_dimension": 3, "use_bias": False}
    else:
        config = transformers.LlamaConfig(**common)
        base = transformers.LlamaModel(config)
        extra = {"architectures": ["ReasonEval_34B"], "score_dim": 3, "bias": True}
    head = torch.nn.Linear(32, 3, bias=arch == "34B")
    torch.nn.init.normal_(head.weight, std=0.5)  # spread the probabilities so steps differ clearly
    base.eval()
    tensors = {f"model.{k}": v.contiguous() for k, v in base.state_dict().items()}
    tensors.update({f"score_head.{k}": v.contiguous() for k, v in head.state_dict().items()})
    safetensors_torch.save_file(tensors, str(folder / "model.safetensors"))
    config.save_pretrained(str(folder))
    data = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**data, **extra}))
    return tokenizer, base, head


def _published_procedure(tokenizer: Any, base: Any, head: Any) -> tuple[list[list[float]], float, float]:
    """Step probabilities and solution scores the way ReasonEval's example code computes them."""
    sep = tokenizer.pad_token
    ids = tokenizer(PROMPT.format(question=QUESTION) + " " + " ".join(s + " " + sep for s in STEPS))["input_ids"]
    sep_id = tokenizer.pad_token_id
    kept: list[int] = []
    read_at: list[int] = []
    for tid in ids:
        if tid == sep_id:
            read_at.append(len(kept) - 1)  # the token before the separator: the step's last token
        else:
            kept.append(tid)
    with torch.no_grad():
        hidden = base(input_ids=torch.tensor([kept]), attention_mask=torch.ones(1, len(kept)))[0]
        probs = torch.softmax(head(hidden[0, read_at, :]), dim=-1).tolist()
    validity = [p[1] + p[2] for p in probs]
    redundancy = [p[1] for p in probs]
    return probs, min(validity), max(redundancy)


@pytest.mark.parametrize("arch", ["7B", "34B"])
def test_backend_scores_a_tiny_checkpoint_as_reasoneval_does(tmp_path: Path, arch: str) -> None:
    folder = tmp_path / f"reasoneval-{arch}"
    tokenizer, base, head = _checkpoint(folder, arch)
    probs, v, r = _published_procedure(tokenizer, base, head)
    reasoneval._LOADED.clear()
    got = score_solution(folder, QUESTION, STEPS)
    assert len(got.step_validity) == len(STEPS)
    assert got.step_validity == pytest.approx(tuple(p[1] + p[2] for p in probs), abs=1e-5)
    assert got.step_redundancy == pytest.approx(tuple(p[1] for p in probs), abs=1e-5)
    assert got.validity == pytest.approx(v, abs=1e-5) and got.redundancy == pytest.approx(r, abs=1e-5)
    # The steps are scored apart: a random head gives them different probabilities, so reading the
    # wrong positions (or an unloaded, freshly initialised head) could not match the above.
    assert len({(round(a, 4), round(b, 4)) for a, b in zip(got.step_validity, got.step_redundancy, strict=True)}) == 3


def test_a_checkpoint_without_a_score_head_is_refused(tmp_path: Path) -> None:
    from mathlens.errors import UserError

    folder = tmp_path / "no-head"
    _checkpoint(folder, "7B")
    tensors = safetensors_torch.load_file(str(folder / "model.safetensors"))
    safetensors_torch.save_file({k: v for k, v in tensors.items() if not k.startswith("score_head.")},
                                str(folder / "model.safetensors"))
    reasoneval._LOADED.clear()
    with pytest.raises(UserError, match="no score_head weights"):
        score_solution(folder, QUESTION, STEPS)


def test_maple_takes_v_and_r_from_the_checkpoint(tmp_path: Path, mock_model: Any) -> None:
    """`--vr reasoneval --reasoneval PATH` in a MAPLE analysis: v and r of a wrong solution are the
    checkpoint's min/max over the solution's steps (as segmented by the flow analysis)."""
    import asyncio

    from mathlens.analyze.maple.pipeline import segment
    from mathlens.analyze.maple.results import MAPLE
    from mathlens.analyze.registry import run_one
    from mathlens.models.base import GenerateConfig
    from mathlens.runs.records import ItemSource, ModelEntry
    from mathlens.runs.runner import base_manifest, execute
    from mathlens.runs.store import RunStore

    folder = tmp_path / "ckpt"
    _checkpoint(folder, "7B")
    reasoneval._LOADED.clear()
    data = tmp_path / "math.jsonl"
    data.write_text(json.dumps({"problem": QUESTION, "answer": "14", "level": "Level 1", "subject": "Algebra",
                                "unique_id": "q1", "solution": "3 times 4 is 12 and 2 plus 12 is 14."}) + "\n")
    solution = "Step 1: first 3 times 4 is 12\nStep 2: then 2 plus 12 is 15\nFinal answer: 15"
    manifest = base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="mock/solver")],
                             generate=GenerateConfig(max_tokens=50), system_role="Solve it.")
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    asyncio.run(execute(store, manifest, {"mock/solver": mock_model(func=lambda m: solution, name="solver")}))
    no_errors = json.dumps({"erroneous_steps": [{"step": 2, "labels": ["calculation_error"], "reason": "15"}]})
    run_one(store, "maple", {"vr_source": "reasoneval", "reasoneval_path": str(folder), "reflect": False,
                             "boot": {"n_resamples": 50}}, judge="mock/judge",
            judge_options={"func": lambda m: no_errors}, no_cache=True)
    (sol,) = list(MAPLE.entries(store.root))
    expected = score_solution(folder, manifest_question(store), segment(solution))
    assert sol.status == "ok" and sol.vr_source == "reasoneval"
    assert sol.v == pytest.approx(expected.validity) and sol.r == pytest.approx(expected.redundancy)
    assert sol.v_basis == "min step validity" and sol.r_basis == "max step redundancy"


def manifest_question(store: Any) -> str:
    """The question text as the run's items hold it."""
    (q,) = store.questions().values()
    return str(q.prompt_text())
