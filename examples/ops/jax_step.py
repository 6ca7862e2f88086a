"""One training step of a small JAX model, for `roofline profile` to attribute to XLA's ops: an
MLP of three dense layers (1024 -> 4096 -> 4096 -> 16, BF16, batch 8192) whose layers are
`jax.named_scope`s, its loss and gradients under one `jax.jit`, plain SGD. Warm-up steps first (compilation), then one step between
cudaProfilerStart and cudaProfilerStop (through CuPy's runtime, which JAX does not offer).

    roofline profile --no-profile-from-start --out jax.json -- python examples/ops/jax_step.py
"""

import os
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX takes GPU memory as it needs it, not 75 % at start

import jax
import jax.numpy as jnp


def init(key, sizes=(1024, 4096, 4096, 16)):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (a, b), jnp.bfloat16) / a ** 0.5, jnp.zeros((b,), jnp.bfloat16))
            for k, a, b in zip(keys, sizes[:-1], sizes[1:])]


def model(params, x):
    for i, (w, b) in enumerate(params):
        with jax.named_scope(f"layer{i}"):
            x = x @ w + b
            if i < len(params) - 1:
                x = jax.nn.gelu(x)
    return x


def loss(params, x, y):
    with jax.named_scope("loss"):
        logits = model(params, x).astype(jnp.float32)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    with jax.named_scope("sgd"):
        return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


def main():
    import cupy

    key = jax.random.PRNGKey(0)
    params = init(key)
    x = jax.random.normal(key, (8192, 1024), jnp.bfloat16)
    y = jax.random.randint(key, (8192,), 0, 16)
    for _ in range(3):
        params, value = step(params, x, y)
    value.block_until_ready()
    start = time.perf_counter()
    cupy.cuda.runtime.profilerStart()
    params, value = step(params, x, y)
    value.block_until_ready()
    cupy.cuda.runtime.profilerStop()
    print(f"jax: one step in {1e3 * (time.perf_counter() - start):.1f} ms (wall, host), loss {float(value):.4f}")


if __name__ == "__main__":
    main()
