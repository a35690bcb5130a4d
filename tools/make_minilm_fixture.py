"""Record HuggingFace transformers' all-MiniLM-L6-v2 outputs for tests/data/.

The NumPy engine (attnsim.engine.models.minilm) must agree with the reference implementation;
the tests compare against these recordings so that they run without torch or transformers.

- tests/data/minilm_reference.npz: for a few short texts, the token ids, every layer's attention
  weights (eager attention) and the last hidden state; for the first text also the residual
  stream entering each layer and the last hidden state with one head's output zeroed.
- tests/data/minilm_tokens.npz: the ids of ten texts from transformers' pure-Python
  ``BertTokenizer`` (vocab.txt), an implementation independent of tokenizer.json, untruncated.

Run once, with the model installed (``attnsim models install``) and torch and transformers in
the environment: python tools/make_minilm_fixture.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from transformers import BertModel, BertTokenizer, BertTokenizerFast

from attnsim.engine.models.files import model_dir

OUT = Path(__file__).resolve().parents[1] / "tests" / "data"

FORWARD_TEXTS = (
    "The cat sat on the mat.",
    "Paris is the capital of France.",
    "I deposited cash at the river bank.",
)
ABLATED_HEAD = (2, 5)  # (layer, head), counting from 0

TOKEN_TEXTS = (
    "Hello, world!",
    "Attention is all you need.",
    "The café's crème brûlée costs €4.50 — naïve?",
    "   Extra   spaces\tand\ttabs\nand newlines   ",
    "don't can't won't it's 1984 3.14159 1,000,000",
    "東京 is Tokyo; 北京 is Beijing.",
    "unbelievably antidisestablishmentarianism hyperparameterization",
    "Emoji 🙂 and symbols ©®™ ∑∫√",
    "MiXeD CaSe WoRdS and ALLCAPS",
    # more than the 128 tokens that tokenizer.json truncates to
    " ".join(f"word{i} and the number {i * 7} again" for i in range(30)),
)


def main() -> None:
    directory = model_dir("minilm") / "model"
    torch.manual_seed(0)
    model = BertModel.from_pretrained(
        str(directory), attn_implementation="eager", add_pooling_layer=False
    ).eval()
    slow = BertTokenizer(str(directory / "vocab.txt"), do_lower_case=True)
    fast = BertTokenizerFast.from_pretrained(str(directory))

    ref: dict[str, np.ndarray] = {"texts": np.array(FORWARD_TEXTS)}
    with torch.no_grad():
        for i, text in enumerate(FORWARD_TEXTS):
            ids = slow.encode(text)
            out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
            ref[f"ids_{i}"] = np.array(ids, dtype=np.int64)
            ref[f"weights_{i}"] = np.stack([a[0].numpy() for a in out.attentions]).astype("f4")
            ref[f"hidden_{i}"] = out.last_hidden_state[0].numpy().astype("f4")
            if i == 0:  # the stream entering each layer, once: it is the largest array
                entering = out.hidden_states[:-1]
                ref["residual_0"] = np.stack([h[0].numpy() for h in entering]).astype("f4")
        # transformers 5 ignores ``head_mask``: zero the head's slice of the concatenated head
        # outputs where the attention's output projection reads them
        layer, head = ABLATED_HEAD
        d_head = model.config.hidden_size // model.config.num_attention_heads

        def zero_head(_module, inputs):
            z = inputs[0].clone()
            z[..., head * d_head : (head + 1) * d_head] = 0.0
            return (z,)

        dense = model.encoder.layer[layer].attention.output.dense
        handle = dense.register_forward_pre_hook(zero_head)
        out = model(torch.tensor([ref["ids_0"].tolist()]))
        handle.remove()
        if np.allclose(out.last_hidden_state[0].numpy(), ref["hidden_0"]):
            raise SystemExit("zeroing the head changed nothing: the hook did not run")
        ref["ablated_head"] = np.array(ABLATED_HEAD, dtype=np.int64)
        ref["ablated_hidden_0"] = out.last_hidden_state[0].numpy().astype("f4")
    np.savez_compressed(OUT / "minilm_reference.npz", **ref)

    tokens: dict[str, np.ndarray] = {"texts": np.array(TOKEN_TEXTS)}
    for i, text in enumerate(TOKEN_TEXTS):
        ids = slow.encode(text, truncation=False)
        if ids != fast(text, truncation=False)["input_ids"]:
            raise SystemExit(f"the two reference tokenizers disagree on text {i}: {text!r}")
        tokens[f"ids_{i}"] = np.array(ids, dtype=np.int64)
    np.savez_compressed(OUT / "minilm_tokens.npz", **tokens)
    for name in ("minilm_reference.npz", "minilm_tokens.npz"):
        print(OUT / name, (OUT / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
