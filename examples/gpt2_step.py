"""A GPT-2 (124 M parameters, Hugging Face transformers) training step in BF16, for `roofline profile`.

    roofline profile --no-profile-from-start --out gpt2.json -- python examples/gpt2_step.py

The model is built from its configuration with random weights (nothing is downloaded); every
kernel comes from PyTorch, cuBLAS and transformers. As in transformer_bf16.py, warm-up steps run
first and exactly one step is marked with cudaProfilerStart/Stop. Needs torch and transformers.
"""

from __future__ import annotations

import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = GPT2LMHeadModel(GPT2Config(n_positions=max(1024, args.seq))).to(dev, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    tokens = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), device=dev)

    def step() -> torch.Tensor:
        loss = model(input_ids=tokens, labels=tokens).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch.cuda.profiler.start()
    loss = step()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"one GPT-2 BF16 training step: batch {args.batch} x {args.seq} tokens, loss {loss.item():.3f}, "
          f"{1e3 * (time.perf_counter() - t0):.1f} ms")


if __name__ == "__main__":
    main()
