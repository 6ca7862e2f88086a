# A candidate (ModelNew) for KernelBench level1/19_ReLU.py, in inline CUDA (torch's load_inline):
# float4 loads in a grid-stride loop.
#   roofline run KernelBench/level1/19_ReLU.py examples/kernelbench/level1_19_ReLU_cuda.py
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
__global__ void relu4(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
        y[i] = v;
    }
}
torch::Tensor relu(torch::Tensor x, int64_t blocks) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.numel() % 4 == 0);
    auto y = torch::empty_like(x);
    long long n4 = x.numel() / 4;
    relu4<<<(unsigned)blocks, 256>>>((const float4*)x.data_ptr<float>(), (float4*)y.data_ptr<float>(), n4);
    return y;
}
"""
ext = load_inline(name="relu_vec4", cpp_sources="torch::Tensor relu(torch::Tensor x, int64_t blocks);", cuda_sources=source,
                  functions=["relu"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):  # 16 blocks of 256 threads per SM, each thread looping over the float4s
        return ext.relu(x.contiguous(), 16 * torch.cuda.get_device_properties(x.device).multi_processor_count)
