"""A workload's buffers on the GPU: drawn, poisoned, copied, compared, and handed to a kernel, a
reference or a callable in the form each takes.

Buffers are CuPy arrays. BF16, which CuPy lacks, is held as uint16 words (the top half of an FP32
word, rounded to nearest even) and read as FP32 wherever values are compared or computed. Outputs
are poisoned before every checked launch: floating buffers with NaN (an element left unwritten
stays NaN), integer ones with the type's largest value. Needs CuPy and a GPU.
"""

from __future__ import annotations

from ..model.elements import Element
from ..workload.spec import Arg, Workload

BF16_NAN = 0x7FC0


def cupy_dtype(el: Element):
    """The CuPy dtype a buffer of `el` is held in (uint16 for BF16)."""
    import cupy
    return cupy.uint16 if el.name == "bf16" else cupy.dtype(el.numpy)


def to_bf16_bits(x):
    """FP32 array `x` rounded to BF16 (nearest even), as uint16 words."""
    import cupy
    bits = cupy.ascontiguousarray(x, dtype=cupy.float32).view(cupy.uint32)
    rounded = (bits + cupy.uint32(0x7FFF) + ((bits >> 16) & cupy.uint32(1))) >> 16
    return rounded.astype(cupy.uint16)


def from_bf16_bits(words):
    """uint16 BF16 words as an FP32 array."""
    import cupy
    return (words.astype(cupy.uint32) << 16).view(cupy.float32)


def values(arr, arg: Arg):
    """A buffer's values in a form arithmetic takes: FP32 for BF16 words, else the array itself."""
    return from_bf16_bits(arr) if arg.element.name == "bf16" else arr


def draw(arg: Arg, shape: tuple[int, ...], rng, out=None):
    """Arg `arg`'s input values of `shape` from CuPy RandomState `rng` (its `draw`), written into
    `out` in place when given (the same buffer, new values), else a new array."""
    import cupy
    d = arg.draw
    if d.kind == "ones":
        x = cupy.ones(shape, dtype=cupy.float64)
    elif d.kind == "zeros":
        x = cupy.zeros(shape, dtype=cupy.float64)
    elif d.kind == "uniform":
        x = rng.uniform(d.low, d.high, size=shape)
    elif d.kind == "randint":
        x = rng.randint(int(d.low), int(d.high), size=shape).astype(cupy.float64)
    else:
        x = rng.standard_normal(size=shape)
    x = to_bf16_bits(x) if arg.element.name == "bf16" else x.astype(cupy_dtype(arg.element))
    if out is None:
        return cupy.ascontiguousarray(x)
    out[...] = x
    return out


def poison(arr, arg: Arg) -> None:
    """Fill output `arr` with NaN (BF16: its NaN word) or, for an integer type, its largest value."""
    import cupy
    if arg.element.name == "bf16":
        arr.fill(BF16_NAN)
    elif arg.element.floating:
        arr.fill(cupy.nan)
    else:
        arr.fill(cupy.iinfo(arr.dtype).max)


def allocate(workload: Workload, seed: int) -> dict:
    """Every buffer of `workload` at its sizes: inputs drawn with `seed`, outputs (out) poisoned,
    in-out buffers drawn. 'return' outputs get none (the callable makes them)."""
    import cupy
    rng = cupy.random.RandomState(seed)
    out = {}
    for a in workload.args:
        if not a.buffer or a.role == "return":
            continue
        shape = a.dims(workload.sizes)
        if a.reads:
            out[a.name] = draw(a, shape, rng)
        else:
            out[a.name] = cupy.empty(shape, dtype=cupy_dtype(a.element))
            poison(out[a.name], a)
    return out


def redraw(workload: Workload, arrays: dict, seed: int) -> None:
    """New input values into the same buffers (same addresses) with `seed`; outputs poisoned."""
    import cupy
    rng = cupy.random.RandomState(seed)
    for a in workload.args:
        if a.name not in arrays:
            continue
        if a.reads:
            draw(a, arrays[a.name].shape, rng, arrays[a.name])
        else:
            poison(arrays[a.name], a)


def scalar(arg: Arg, sizes: dict[str, int]):
    """A scalar argument's value as the NumPy scalar a kernel takes (BF16 as its uint16 word)."""
    import numpy as np
    v = arg.value.value(sizes)
    if arg.element.name == "bf16":
        bits = np.array([v], dtype=np.float32).view(np.uint32)[0]
        return np.uint16((int(bits) + 0x7FFF + ((int(bits) >> 16) & 1)) >> 16)
    if not arg.element.floating and v != int(v):
        from ..errors import UsageError
        raise UsageError(f"arg {arg.name}: {arg.value.text!r} is {v:g}, not an integer for {arg.element.name}")
    return np.dtype(arg.element.numpy).type(v)


def to_torch(arr, arg: Arg | None = None):
    """A CuPy array as a PyTorch tensor sharing its memory (BF16 words as torch.bfloat16)."""
    import cupy
    import torch
    if arg is not None and arg.element.name == "bf16":
        return torch.as_tensor(arr.view(cupy.int16), device="cuda").view(torch.bfloat16)
    return torch.as_tensor(arr, device="cuda")


def from_any(x, arg: Arg | None = None):
    """A reference's or callable's array (CuPy, NumPy, PyTorch, or anything with
    __cuda_array_interface__ or __dlpack__) as a CuPy array of values (BF16 and FP16 as FP32).
    Raises TypeError for something that is not an array."""
    import cupy
    if hasattr(x, "detach") and hasattr(x, "dtype") and "torch" in type(x).__module__:
        import torch
        x = x.detach()
        if x.dtype in (torch.bfloat16, torch.float16):
            x = x.float()
        if x.dtype == torch.bool:
            x = x.to(torch.uint8)
        return cupy.asarray(x.contiguous()) if x.is_cuda else cupy.asarray(x.numpy())
    if isinstance(x, (int, float)):
        return cupy.asarray(x, dtype=cupy.float64)
    try:
        arr = cupy.asarray(x)
    except Exception:
        raise TypeError(f"a {type(x).__name__}, not an array") from None
    if arr.dtype == object:
        raise TypeError(f"a {type(x).__name__}, not an array of numbers")
    return arr
