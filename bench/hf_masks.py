"""Hugging Face transformers' own attention, masks and all, read by roofline.workload.problem on the
meta device, against FLOPs counted by hand: small GPT-2, Llama (alone, and given an attention_mask
of ones), Mistral (a 64-key sliding window) and BERT models (random weights, no download), each with
its eager attention (the mask written out by transformers' masking code) and its SDPA one. Needs transformers (`pip install transformers`).
    python bench/hf_masks.py
One line per model: roofline's FLOPs, the hand count, and whether they agree; exit 1 where one does not.
"""

import sys
import tempfile
from pathlib import Path

from roofline.workload import problem

B, T, HIDDEN, HEADS, LAYERS = 2, 256, 256, 4, 2
D = HIDDEN // HEADS
TOKENS = B * T
PROBLEM = '''import torch, torch.nn as nn
from transformers import {config}, {model}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = {config}({arguments})
        cfg._attn_implementation = "{attention}"
        self.m = {model}(cfg{extra})
    def forward(self, *xs):
        return self.m(*xs).last_hidden_state
def get_inputs():
    return [torch.randint(0, 1000, ({b}, {t}))]{mask}
def get_init_inputs():
    return []
'''
COMMON = f"hidden_size={HIDDEN}, intermediate_size=512, num_hidden_layers={LAYERS}, num_attention_heads={HEADS}, " \
         "vocab_size=1000, max_position_embeddings=512"


def kept(window: int | None) -> float:
    """The share of T x T (query, key) pairs a causal mask keeps, of a sliding window of `window` keys where given."""
    pairs = sum(min(i + 1, window) if window else i + 1 for i in range(T))
    return pairs / T ** 2


def attention(share: float) -> float:
    """Both products of every layer's attention, at `share` of their pairs."""
    return LAYERS * 2 * (2 * B * HEADS * T * T * D) * share


def linears(params_per_layer: int) -> float:
    return LAYERS * 2 * TOKENS * params_per_layer


CASES = {  # name: (config, model, arguments, extra, mask input, hand FLOPs)
    "gpt2": ("GPT2Config", "GPT2Model", f"n_embd={HIDDEN}, n_layer={LAYERS}, n_head={HEADS}, n_positions=512, "
             "vocab_size=1000", "", "",
             linears(3 * HIDDEN * HIDDEN + HIDDEN * HIDDEN + 2 * HIDDEN * 4 * HIDDEN) + attention(kept(None))),
    "llama": ("LlamaConfig", "LlamaModel", COMMON + ", num_key_value_heads=2", "", "",  # GQA: k and v of 2 heads
              linears(2 * HIDDEN * HIDDEN + 2 * HIDDEN * 128 + 3 * HIDDEN * 512) + attention(kept(None))),
    "llama+mask": ("LlamaConfig", "LlamaModel", COMMON + ", num_key_value_heads=2", "",  # a padding mask of ones
                   f" + [torch.ones({B}, {T}, dtype=torch.long)]",
                   linears(2 * HIDDEN * HIDDEN + 2 * HIDDEN * 128 + 3 * HIDDEN * 512) + attention(kept(None))),
    "mistral": ("MistralConfig", "MistralModel", COMMON + ", num_key_value_heads=2, sliding_window=64", "", "",
                linears(2 * HIDDEN * HIDDEN + 2 * HIDDEN * 128 + 3 * HIDDEN * 512) + attention(kept(64))),
    "bert": ("BertConfig", "BertModel", COMMON, ", add_pooling_layer=False",  # a padding mask of ones: no fill
             f" + [torch.ones({B}, {T}, dtype=torch.long)]",
             linears(4 * HIDDEN * HIDDEN + 2 * HIDDEN * 512) + attention(1.0)),
}


def main() -> int:
    wrong = 0
    with tempfile.TemporaryDirectory() as folder:
        for name, (config, model, arguments, extra, mask, hand) in CASES.items():
            for kind in ("eager", "sdpa"):
                path = Path(folder) / f"{name}_{kind}.py"
                path.write_text(PROBLEM.format(config=config, model=model, arguments=arguments, attention=kind,
                                               extra=extra, b=B, t=T, mask=mask))
                read = problem.work(problem.load(path))
                got = sum(read.work.flops.values())
                ok = abs(got - hand) <= 1e-9 * hand
                wrong += not ok
                print(f"{name:10} {kind:6} roofline {got:>16,.0f}  by hand {hand:>16,.0f}  {'agree' if ok else 'DIFFER'}"
                      + "".join(f"\n    {w}" for w in read.warnings))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
