"""One training step of a small transformer language model built from Flax's own layers
(`flax.linen`: Embed, LayerNorm, MultiHeadDotProductAttention, Dense; 4 blocks, width 1024, 16
heads, batch 8 of 1024 tokens, BF16), for `roofline profile` to attribute to XLA's ops and the
Flax modules Flax names them by (`Block_2/MultiHeadDotProductAttention_0/query`): loss and
gradients under one `jax.jit`, plain SGD. Warm-up steps first (compilation), then one step between
cudaProfilerStart and cudaProfilerStop (CuPy's runtime). Needs jax and flax. With `scan`, the
blocks are one `nn.scan` (an XLA while loop whose body runs once per block).

    roofline profile --no-profile-from-start --out flax.json -- python examples/ops/flax_step.py [scan]
"""

import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX takes GPU memory as it needs it, not 75 % at start


def main():
    try:
        import flax.linen as nn
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        print(f"flax_step: needs jax and flax ({exc})", file=sys.stderr)
        return 3
    import cupy

    class Block(nn.Module):
        width: int
        heads: int

        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm(dtype=jnp.bfloat16)(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, dtype=jnp.bfloat16)(
                y, y, mask=nn.make_causal_mask(jnp.ones(x.shape[:2])))
            y = nn.LayerNorm(dtype=jnp.bfloat16)(x)
            y = nn.Dense(4 * self.width, dtype=jnp.bfloat16)(y)
            return x + nn.Dense(self.width, dtype=jnp.bfloat16)(nn.gelu(y))

    class Scanned(nn.Module):
        width: int
        heads: int

        @nn.compact
        def __call__(self, x, _):
            return Block(self.width, self.heads)(x), None

    class LM(nn.Module):
        vocab: int = 8192
        width: int = 1024
        heads: int = 16
        depth: int = 4
        scan: bool = False

        @nn.compact
        def __call__(self, tokens):
            embed = nn.Embed(self.vocab, self.width, dtype=jnp.bfloat16)
            x = embed(tokens)
            if self.scan:
                blocks = nn.scan(Scanned, variable_axes={"params": 0}, split_rngs={"params": True},
                                 length=self.depth)
                x, _ = blocks(self.width, self.heads)(x, None)
            else:
                for _ in range(self.depth):
                    x = Block(self.width, self.heads)(x)
            return embed.attend(nn.LayerNorm(dtype=jnp.bfloat16)(x))

    model = LM(scan=sys.argv[1:] == ["scan"])
    key = jax.random.PRNGKey(0)
    tokens = jax.random.randint(key, (8, 1024), 0, model.vocab)
    params = model.init(key, tokens)

    def loss(params, tokens):
        logits = model.apply(params, tokens[:, :-1]).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1))

    @jax.jit
    def step(params, tokens):
        value, grads = jax.value_and_grad(loss)(params, tokens)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-4 * g, params, grads), value

    for _ in range(3):
        params, value = step(params, tokens)
    value.block_until_ready()
    start = time.perf_counter()
    cupy.cuda.runtime.profilerStart()
    params, value = step(params, tokens)
    value.block_until_ready()
    cupy.cuda.runtime.profilerStop()
    print(f"flax: one step in {1e3 * (time.perf_counter() - start):.1f} ms (wall, host), loss {float(value):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
