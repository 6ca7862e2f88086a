# A candidate (ModelNew) for KernelBench level3/1_MLP.py: each layer's GEMM by cuBLAS (torch.mm),
# bias and ReLU fused in one Triton pass.
#   roofline run KernelBench/level3/1_MLP.py examples/kernelbench/level3_1_MLP_triton.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_relu(y_ptr, b_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = y_ptr + row.to(tl.int64) * n_cols + cols
    v = tl.load(p, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(p, tl.maximum(v, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers, current = [], input_size
        for size in layer_sizes:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        for lin in linears[:-1]:
            y = torch.mm(x, lin.weight.t())
            m, n = y.shape
            _bias_relu[(m, triton.cdiv(n, 1024))](y, lin.bias, n, BLOCK=1024)
            x = y
        return torch.addmm(linears[-1].bias, x, linears[-1].weight.t())
