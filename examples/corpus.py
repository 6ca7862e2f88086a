"""Small steps of real programs whose kernels come from libraries no one on this project wrote,
for the corpus of Nsight Compute reports (`bash bench/ncu_corpus.sh`): each program warms up,
then runs one step between cudaProfilerStart and cudaProfilerStop (profile it with
`--profile-from-start off`). Models are built from small configurations with random weights:
nothing is downloaded.

    python examples/corpus.py NAME        # one of the names `python examples/corpus.py --list` prints

Programs: llama (Hugging Face Llama, BF16, forward and backward), bert (FP32, TF32 off, forward
and backward), vit (FP16 autocast forward), t5 (BF16 forward and backward), resnet (torchvision
ResNet-18, channels-last AMP forward and backward), timm (a timm ConvNeXt forward in FP32),
compiled (a torch.compile'd MLP block: Inductor's Triton kernels), attention (scaled dot-product
attention in BF16, forward and backward: cuDNN or flash kernels), fp8 (torch._scaled_mm in
FP8 e4m3: cuBLASLt), adamw (the fused AdamW step), jax (a JAX/XLA MLP gradient), numba (Numba
CUDA kernels in FP64), cupy (CuPy elementwise, reduction and cuFFT).
"""

from __future__ import annotations

import ctypes
import sys


def _profiled(step, sync, warmup: int = 2) -> None:
    """`step` run `warmup` times, then once between the driver's cuProfilerStart and Stop."""
    for _ in range(warmup):
        step()
    sync()
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuProfilerStart()
    step()
    sync()
    cuda.cuProfilerStop()


def _torch():
    import torch

    torch.manual_seed(0)
    return torch


def _train_with(model, loss) -> None:
    """One SGD step of `model` on `loss()` (forward, backward, update), profiled."""
    torch = _torch()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        loss().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    _profiled(step, torch.cuda.synchronize)


def _train(model, make_input, dtype=None):
    """A training step of `model` on the mean square of its output (under autocast to `dtype`)."""
    torch = _torch()
    model = model.cuda()

    def loss():
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            out = make_input()
            return out.float().square().mean() if torch.is_tensor(out) else out

    _train_with(model, loss)


def llama():
    torch = _torch()
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=4096, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512)
    model = LlamaForCausalLM(config).to(torch.bfloat16).cuda()
    ids = torch.randint(0, 4096, (2, 256), device="cuda")
    _train_with(model, lambda: model(input_ids=ids, labels=ids).loss)


def bert():
    torch = _torch()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=1024))
    ids = torch.randint(0, 8192, (4, 128), device="cuda")
    _train(model, lambda: model(input_ids=ids).last_hidden_state)


def vit():
    torch = _torch()
    from transformers import ViTConfig, ViTForImageClassification

    model = ViTForImageClassification(ViTConfig(image_size=96, patch_size=16, hidden_size=256, num_hidden_layers=2,
                                                num_attention_heads=4, intermediate_size=1024, num_labels=10))
    model = model.cuda().eval()
    x = torch.randn(8, 3, 96, 96, device="cuda")

    def step():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            model(pixel_values=x)

    _profiled(step, torch.cuda.synchronize)


def t5():
    torch = _torch()
    from transformers import T5Config, T5ForConditionalGeneration

    model = T5ForConditionalGeneration(T5Config(vocab_size=4096, d_model=256, d_kv=32, d_ff=1024, num_layers=2,
                                                num_decoder_layers=2, num_heads=8)).to(torch.bfloat16).cuda()
    ids = torch.randint(0, 4096, (2, 128), device="cuda")
    labels = torch.randint(0, 4096, (2, 64), device="cuda")
    # the labels shifted right behind the pad token (0), given: transformers 5's T5Config has no
    # decoder_start_token_id for the model to shift them by itself
    decoder_ids = torch.cat([torch.zeros_like(labels[:, :1]), labels[:, :-1]], dim=1)
    _train_with(model, lambda: model(input_ids=ids, decoder_input_ids=decoder_ids, labels=labels).loss)


def resnet():
    torch = _torch()
    import torchvision

    model = torchvision.models.resnet18(num_classes=10).cuda().to(memory_format=torch.channels_last)
    x = torch.randn(16, 3, 64, 64, device="cuda").to(memory_format=torch.channels_last)
    _train(model, lambda: model(x), torch.float16)


def timm():
    torch = _torch()
    import timm as timm_models

    model = timm_models.create_model("convnext_atto", pretrained=False, num_classes=10).cuda().eval()
    x = torch.randn(8, 3, 96, 96, device="cuda")

    def step():
        with torch.no_grad():
            model(x)

    _profiled(step, torch.cuda.synchronize)


def compiled():
    torch = _torch()

    class Block(torch.nn.Module):
        def __init__(self, d=512):
            super().__init__()
            self.norm = torch.nn.LayerNorm(d)
            self.up = torch.nn.Linear(d, 4 * d)
            self.down = torch.nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    model = torch.compile(Block().cuda().to(torch.bfloat16))
    x = torch.randn(8, 256, 512, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        model(x).float().square().mean().backward()

    _profiled(step, torch.cuda.synchronize, warmup=3)


def attention():
    torch = _torch()
    import torch.nn.functional as F

    q, k, v = (torch.randn(4, 16, 1024, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))

    def step():
        F.scaled_dot_product_attention(q, k, v, is_causal=True).float().sum().backward()

    _profiled(step, torch.cuda.synchronize)


def fp8():
    torch = _torch()
    a = torch.randn(2048, 4096, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(2048, 4096, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")

    def step():
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    _profiled(step, torch.cuda.synchronize)


def adamw():
    torch = _torch()
    params = [torch.nn.Parameter(torch.randn(1024, 1024, device="cuda")) for _ in range(4)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-3, fused=True)
    _profiled(opt.step, torch.cuda.synchronize)


def jax():
    import os

    # XLA takes 75 % of the GPU up front by default: under ncu on the H200 that grab failed and the
    # process crashed, leaving the GPU out of memory for the programs after it; take it as needed
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax as jx
    import jax.numpy as jnp

    key = jx.random.PRNGKey(0)
    w1 = jx.random.normal(key, (512, 2048), jnp.float32)
    w2 = jx.random.normal(key, (2048, 512), jnp.float32)
    x = jx.random.normal(key, (256, 512), jnp.float32)

    def loss(w1, w2, x):
        return jnp.mean(jnp.tanh(x @ w1) @ w2)

    grad = jx.jit(jx.grad(loss, argnums=(0, 1)))
    _profiled(lambda: jx.block_until_ready(grad(w1, w2, x)), lambda: None)


def numba():
    import numpy as np

    if not hasattr(np, "row_stack"):  # NumPy 2.5 dropped it; numba-cuda 0.30 still overloads it on its first compile
        np.row_stack = np.vstack
    from numba import cuda

    @cuda.jit
    def axpy(a, x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * x[i] + y[i]

    @cuda.jit
    def poly(x, y):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            acc = 0.0
            for _ in range(64):
                acc = acc * v + 1.0
            y[i] = acc

    n = 1 << 22
    x = cuda.to_device(np.random.rand(n))
    y = cuda.to_device(np.random.rand(n))

    def step():
        axpy[n // 256, 256](2.0, x, y)
        poly[n // 256, 256](x, y)

    _profiled(step, cuda.synchronize)


def cupy():
    import cupy as cp

    x = cp.random.rand(1 << 22, dtype=cp.float32)
    y = cp.random.rand(1 << 22, dtype=cp.float32)
    square_diff = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "square_diff")

    def step():
        z = square_diff(x, y)
        z.sum()
        cp.fft.fft(x.reshape(1024, -1).astype(cp.complex64))

    _profiled(step, cp.cuda.Device().synchronize)


PROGRAMS = {f.__name__: f for f in (llama, bert, vit, t5, resnet, timm, compiled, attention, fp8, adamw, jax,
                                    numba, cupy)}


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in [*PROGRAMS, "--list"]:
        sys.exit(f"usage: python examples/corpus.py NAME (one of: {', '.join(PROGRAMS)}) | --list")
    if sys.argv[1] == "--list":
        print("\n".join(PROGRAMS))
    else:
        PROGRAMS[sys.argv[1]]()
