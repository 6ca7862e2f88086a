# A candidate (ModelNew) for KernelBench level2/12_Gemm_Multiply_LeakyReLU.py: the GEMM by cuBLAS
# (torch.mm), bias, scale and LeakyReLU fused in one Triton pass over its output.
#   roofline run KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py examples/kernelbench/level2_12_Gemm_Multiply_LeakyReLU_triton.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_leaky(y_ptr, b_ptr, n_rows, n_cols, mult, slope, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = y_ptr + row.to(tl.int64) * n_cols + cols
    v = (tl.load(p, mask=mask) + tl.load(b_ptr + cols, mask=mask)) * mult
    tl.store(p, tl.where(v >= 0, v, v * slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.mm(x, self.gemm.weight.t())
        m, n = y.shape
        _scale_leaky[(m, triton.cdiv(n, 1024))](y, self.gemm.bias, m, n, self.multiplier, self.negative_slope, BLOCK=1024)
        return y
