"""One launch of each kind of work a real program does, in every precision PyTorch offers, for
profiling with `roofline profile` or with Nsight Compute directly.

    roofline profile --no-profile-from-start --out precisions.json -- python examples/precisions.py

Runs matrix products through cuBLAS in FP32 (TF32 off), TF32, FP16, BF16, FP64, INT8 and FP8 where
the GPU has them, a layer norm, GELU and an add on BF16 tensors, attention
(`scaled_dot_product_attention`) and one Triton kernel, each once after a warm-up, between
cudaProfilerStart and cudaProfilerStop, so that a profiler started with profiling off sees only
these kernels: none of them is written by this project. `--only NAME[,NAME]` runs a subset
(names as printed). PyTorch (and Triton for its kernel) are needed to run it; roofline itself
depends on neither.
"""

from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F


def triton_softmax():
    """A row softmax written in Triton, or None where Triton is missing."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def softmax_rows(out_ptr, in_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * cols + offs, mask=offs < cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=offs < cols)

    def run(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        softmax_rows[(x.shape[0],)](out, x, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out

    return run


def workloads(dev: torch.device) -> dict:
    """Name -> a function doing one piece of work (its inputs made here, outside the profiled part)."""
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=dev, generator=g).to(dtype)

    n = 2048
    a32, b32 = rand(n, n), rand(n, n)
    a16, b16 = rand(n, n, dtype=torch.float16), rand(n, n, dtype=torch.float16)
    abf, bbf = rand(n, n, dtype=torch.bfloat16), rand(n, n, dtype=torch.bfloat16)
    a64, b64 = rand(512, 512, dtype=torch.float64), rand(512, 512, dtype=torch.float64)
    a8 = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
    b8 = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
    x = rand(8192, 1024)
    xbf = rand(8192, 4096, dtype=torch.bfloat16)
    ybf = rand(8192, 4096, dtype=torch.bfloat16)
    q, k, v = (rand(8, 16, 1024, 64, dtype=torch.bfloat16) for _ in range(3))
    ln = torch.nn.LayerNorm(1024, device=dev)

    def fp32():
        torch.backends.cuda.matmul.allow_tf32 = False
        return a32 @ b32

    def tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return a32 @ b32
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False

    out = {
        "sgemm_fp32": fp32,
        "gemm_tf32": tf32,
        "gemm_fp16": lambda: a16 @ b16,
        "gemm_bf16": lambda: abf @ bbf,
        "dgemm_fp64": lambda: a64 @ b64,
        "gemm_int8": lambda: torch._int_mm(a8, b8),
        "layer_norm": lambda: ln(x),
        "gelu_bf16": lambda: F.gelu(xbf),
        "add_bf16": lambda: xbf + ybf,
        "attention_bf16": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    }
    if torch.cuda.get_device_capability(dev) >= (8, 9) and hasattr(torch, "float8_e4m3fn"):
        a_f8 = rand(n, n).to(torch.float8_e4m3fn)
        b_f8 = rand(n, n).to(torch.float8_e4m3fn).t().contiguous().t()  # column-major, as cuBLASLt asks
        one = torch.ones((), device=dev)
        out["gemm_fp8"] = lambda: torch._scaled_mm(a_f8, b_f8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    softmax = triton_softmax()
    if softmax is not None:
        out["triton_softmax"] = lambda: softmax(x)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names of the pieces to run (default: all)")
    args = parser.parse_args()
    dev = torch.device("cuda")
    work = workloads(dev)
    names = [w for w in args.only.split(",") if w] or list(work)
    unknown = [w for w in names if w not in work]
    if unknown:
        sys.exit(f"precisions.py: unknown {', '.join(unknown)}; known: {', '.join(work)}")
    ran = []
    for name in names:  # warm-up: cuBLAS picks its kernels, Triton compiles, the allocator settles
        try:
            work[name]()
            ran.append(name)
        except Exception as exc:  # an op this GPU or this PyTorch lacks is left out, said once
            print(f"precisions.py: {name} left out ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})",
                  file=sys.stderr)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for name in ran:
        work[name]()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print("ran: " + ", ".join(ran))


if __name__ == "__main__":
    main()
