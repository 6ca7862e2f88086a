"""A file written for a GPU read on a machine without one (the meta device, or the CPU): what it
sends to a CUDA device kept where it is read (`kept_off_cuda`), and the CUDA random generators it
makes made on the host (`host_generators`). The shapes and types it makes are the same."""

from __future__ import annotations

import contextlib


def kept_off_cuda(target: str):
    """A PyTorch function mode under which a tensor sent to a CUDA device (`Tensor.cuda`, `Tensor.to`
    with a CUDA device, a factory's `device=` naming one) goes to device `target` instead: the
    reference's work is read without a GPU, and without the GPU's memory."""
    import torch
    from torch.overrides import TorchFunctionMode

    def on_cuda(d) -> bool:
        return isinstance(d, (str, torch.device)) and torch.device(d).type == "cuda"

    class KeptOffCuda(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0].to(target)
            if on_cuda(kwargs.get("device")):
                kwargs["device"] = target
            if func is torch.Tensor.to:
                args = tuple(target if i and on_cuda(a) else a for i, a in enumerate(args))
            return func(*args, **kwargs)

    return KeptOffCuda()


@contextlib.contextmanager
def host_generators(on: bool):
    """While `on`: `torch.Generator(device="cuda")` makes a host generator (the draw is read on the
    meta device or the CPU: a CUDA generator would need a GPU, and draws on neither)."""
    import torch

    if not on:
        yield
        return
    made = torch.Generator

    class HostGenerator(made):
        def __new__(cls, device="cpu"):
            return made.__new__(made, device="cpu" if torch.device(device).type == "cuda" else device)

        def __init__(self, *args, **kwargs):
            pass

    torch.Generator = HostGenerator
    try:
        yield
    finally:
        torch.Generator = made
