"""Record a PyTorch Adam trajectory of the 8-D sense model for tests/engine/data/.

attnsim's engine must follow the same trajectory as torch.optim.Adam from the same initial
parameters. The tests compare against this recording so they run without PyTorch installed.
Run (with torch installed): python tools/make_torch_reference.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch

from attnsim.engine.training import MODELS, init_params

OUT = (
    Path(__file__).resolve().parents[1] / "tests" / "engine" / "data" / "adam_torch_reference.json"
)
STEPS = 40


def main() -> None:
    spec = MODELS["sense-8d"]
    ds = spec.dataset
    start = init_params(len(ds.vocab), spec.d, len(ds.classes), seed=spec.seed, zero_bias=False)
    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in start.items()}
    opt = torch.optim.Adam(params.values(), lr=spec.lr)
    losses = []
    for step in range(STEPS):
        tokens, label = ds.sentences[step % len(ds.sentences)]
        ids = torch.tensor(ds.encode(tokens))
        X = params["emb"][ids]
        Q, K, V = X @ params["Wq"], X @ params["Wk"], X @ params["Wv"]
        A = torch.softmax(Q @ K.T / math.sqrt(spec.d), dim=-1)
        h = (A @ V)[-1]
        logits = h @ params["cls_W"] + params["cls_b"]
        loss = torch.nn.functional.cross_entropy(logits.unsqueeze(0), torch.tensor([label]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    record = {
        "torch": torch.__version__,
        "model": spec.name,
        "lr": spec.lr,
        "steps": STEPS,
        "initial": {k: v.tolist() for k, v in start.items()},
        "losses": losses,
        "final": {k: v.detach().numpy().tolist() for k, v in params.items()},
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT} (final loss {losses[-1]:.6g}, {np.mean(losses):.4g} mean)")


if __name__ == "__main__":
    main()
