"""A small transformer's training step in BF16, for `roofline profile`.

    roofline profile --no-profile-from-start --out profile.json -- python examples/transformer_bf16.py

Builds a decoder-style transformer (PyTorch's TransformerEncoder with a causal mask, pre-norm,
GELU), runs a few warm-up steps (cuBLAS and cuDNN pick their kernels, the allocator settles), then
marks exactly one training step (forward, loss, backward, AdamW) with cudaProfilerStart/Stop so
that a profiler started with profiling off records that step alone. `--fused-adamw` takes AdamW's
fused kernel instead of its multi-tensor ones: the same step with one change, for `roofline compare`. PyTorch is needed to run it;
roofline itself does not depend on it.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn


def build(d_model: int, heads: int, layers: int, vocab: int) -> nn.Module:
    """Embedding, `layers` pre-norm encoder layers (causal mask at call time), final norm, vocab head."""
    layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
    return nn.ModuleDict({
        "embed": nn.Embedding(vocab, d_model),
        "blocks": nn.TransformerEncoder(layer, layers, enable_nested_tensor=False),
        "norm": nn.LayerNorm(d_model),
        "head": nn.Linear(d_model, vocab, bias=False),
    })


def step(model: nn.ModuleDict, opt: torch.optim.Optimizer, tokens: torch.Tensor, mask: torch.Tensor) -> float:
    """One training step on `tokens` (batch x seq+1 token ids): next-token cross-entropy, backward, AdamW."""
    x = model["embed"](tokens[:, :-1])
    x = model["blocks"](x, mask=mask, is_causal=True)
    logits = model["head"](model["norm"](x))
    loss = nn.functional.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--fused-adamw", action="store_true",
                        help="AdamW's fused kernel instead of its multi-tensor (foreach) kernels")
    args = parser.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = build(args.d_model, args.heads, args.layers, args.vocab).to(dev, torch.bfloat16)
    opt = (torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True) if args.fused_adamw
           else torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True))
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=dev)
    mask = nn.Transformer.generate_square_subsequent_mask(args.seq, device=dev, dtype=torch.bfloat16)
    for _ in range(args.warmup):
        step(model, opt, tokens, mask)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch.cuda.profiler.start()
    loss = step(model, opt, tokens, mask)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    ms = 1e3 * (time.perf_counter() - t0)
    params = sum(p.numel() for p in model.parameters())
    print(f"one BF16 training step: {params / 1e6:.1f} M parameters, batch {args.batch} x {args.seq} tokens, "
          f"loss {loss.item():.3f}, {ms:.1f} ms")


if __name__ == "__main__":
    main()
