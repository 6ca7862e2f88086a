"""One training step of a model from a public library, for `roofline profile` to attribute to ops
and modules: warm-up steps first, then one step between cudaProfilerStart and cudaProfilerStop.

    roofline profile --no-profile-from-start --out llama.json -- python examples/ops/step.py llama
    python examples/ops/step.py llama --trace llama-trace.json.gz    # the same step, PyTorch's profiler

Models (random weights, nothing downloaded): `llama` (Hugging Face transformers' LlamaForCausalLM,
2 layers, hidden 1024, BF16, batch 4 x 256 tokens, AdamW), `resnet` (torchvision's ResNet-18, BF16
autocast, batch 32 at 224x224, SGD), `gcn` (PyTorch Geometric's GCNConv, 2 layers on a random
graph of 50,000 nodes and 500,000 edges, Adam). The loss is a module (`nn.CrossEntropyLoss`, as
torchvision's reference training script writes it), so its kernels have a module to be owned by.
"""

import argparse
import time

import torch


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=2,
                         num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=512)
    model = LlamaForCausalLM(config).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (4, 256), device="cuda")

    def step():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def resnet():
    import torchvision

    model = torchvision.models.resnet18().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = torch.nn.CrossEntropyLoss()
    x = torch.randn(32, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (32,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def gcn():
    from torch_geometric.nn import GCNConv

    class GCN(torch.nn.Module):
        def __init__(self, dim_in, hidden, classes):
            super().__init__()
            self.conv1 = GCNConv(dim_in, hidden)
            self.conv2 = GCNConv(hidden, classes)

        def forward(self, x, edge_index):
            x = torch.relu(self.conv1(x, edge_index))
            return self.conv2(x, edge_index)

    nodes, edges = 50_000, 500_000
    x = torch.randn(nodes, 128, device="cuda")
    edge_index = torch.randint(0, nodes, (2, edges), device="cuda")
    y = torch.randint(0, 16, (nodes,), device="cuda")
    model = GCN(128, 256, 16).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = torch.nn.CrossEntropyLoss()

    def step():
        loss = criterion(model(x, edge_index), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


MODELS = {"llama": llama, "resnet": resnet, "gcn": gcn}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--trace", help="record the step with PyTorch's profiler into this .json.gz instead")
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    step = MODELS[args.model]()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    if args.trace:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_modules=True,
                     with_stack=True) as prof:
            step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(args.trace)
    else:
        torch.cuda.profiler.start()
        step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    print(f"{args.model}: one step in {1e3 * (time.perf_counter() - start):.1f} ms (wall, host)")


if __name__ == "__main__":
    main()
