"""Values a reference computes from numbers alone, kept on the CPU while its forward runs on the
meta device (`workload.problem.work`), which holds shapes and no values.

A mask is rarely made from the inputs: `arange(T)[:, None] >= arange(T)`, a `tril` with a prefix
written in (`m[:, :P] = True`, a prefix language model), a fill value kept in a one-element buffer.
`masks.MaskTracker` reads the triangles and bands it knows by their geometry, at any size; what
it does not, it reads from these values: the share of a mask that is true, the number a tensor
holds.

A tensor has a *shadow*, a CPU tensor of the same shape and values, when it is made by a factory of
values (`VALUE_FACTORIES`: ones, zeros, full, arange, eye and their `_like` and `new_` forms; the
numbers or lists given to `torch.tensor`, through `set`), by an uninitialised factory (`EMPTY`, up
to `MAX_EMPTY` elements: taken as zeros, for a mask then written into it whole, as BLOOM writes its
causal mask into `torch.empty`), or by an op every one of whose tensor operands has one (a CPU
tensor, holding values, is its own). The op is run again on the shadows; views of a shadow are views
of it, so a write through a view of a mask (`m[:, :P] = True`) writes its shadow too. A random op
(`RANDOM`) makes none, and an op that writes into a tensor with a shadow from operands that have
none (`m.add_(x)`, `m.uniform_()`) takes the shadow of every tensor over that storage away. No
shadow is made over `MAX_ELEMENTS` elements, or beyond `MAX_BYTES` in all (a mask of a 16K sequence,
2^28 elements, is read by its geometry alone), nor by a convolution or attention (`NEVER`), nor by a
matrix product of more than `MAX_PRODUCT` multiply-adds: a constant's product costs the CPU time,
and no mask is made so. An op with no meta kernel, whose output's shape its inputs' values decide
(`bincount`, `nonzero`), is answered from its operands' shadows where each has one (`answer`): one
draw's shape, for a forward read with its inputs drawn.
"""

from __future__ import annotations

from .regions import storage_key

VALUE_FACTORIES = ("ones", "zeros", "full", "arange", "scalar_tensor", "eye", "linspace", "ones_like", "zeros_like",
                   "full_like", "new_ones", "new_zeros", "new_full", "tril_indices", "triu_indices")
RANDOM = ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "uniform", "normal",
          "bernoulli", "random", "exponential", "cauchy", "log_normal", "geometric", "multinomial", "dropout",
          "native_dropout")
EMPTY = ("empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided")  # taken as zeros, up to MAX_EMPTY
PRODUCTS = ("mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "einsum", "tensordot")
NEVER = ("convolution", "_convolution", "conv1d", "conv2d", "conv3d", "_scaled_dot_product_flash_attention",
         "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "_flash_attention_forward")
MAX_ELEMENTS = 1 << 26  # one shadow's elements at most (an 8,192 x 8,192 mask)
MAX_PRODUCT = 1 << 30  # multiply-adds a product of shadows may take on the CPU at most (a second or so)
MAX_BYTES = 2 << 30  # all shadows' bytes at most
MAX_EMPTY = 1 << 24  # an uninitialised tensor's elements at most for a shadow (a mask written into it; not a weight)


class Shadows:
    """The CPU values of the tensors made from numbers alone (module docstring), by tensor id. `note`
    is called with every op the forward (and the constructor) runs, `get` gives a tensor's values or
    None."""

    def __init__(self) -> None:
        self.values: dict[int, object] = {}
        self.drawn: set[int] = set()  # shadows of a drawn input's values, or made from one: for control flow alone
        self._storages: dict[int, int | None] = {}  # a shadowed tensor's storage, for writes into it
        self._alive: list = []  # every tensor shadowed, kept so that no id is reused while the forward runs
        self.bytes = 0

    def get(self, t, drawn: bool = False):
        """The values of tensor `t` as a CPU tensor, or None where they are not known; with `drawn`, those
        of one draw of the inputs too (`set(..., drawn=True)`: what a branch on them takes, `.item()`), not
        what every draw holds, so never a mask's share."""
        import torch

        if not isinstance(t, torch.Tensor):
            return None
        if id(t) in self.values:
            return self.values[id(t)] if drawn or id(t) not in self.drawn else None
        if type(t) is torch.Tensor and t.device.type == "cpu":  # a CPU tensor holds its values
            return t
        return None

    def set(self, t, value, drawn: bool = False) -> None:
        """Tensor `t` holds `value` (a CPU tensor of its shape, or a Python number); `drawn`: in one draw
        of the inputs alone (`get`)."""
        import torch

        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value, dtype=t.dtype)
        size = value.numel() * value.element_size()
        if value.numel() > MAX_ELEMENTS or tuple(value.shape) != tuple(t.shape) or \
                (id(t) not in self.values and self.bytes + size > MAX_BYTES):
            return
        if id(t) not in self.values:
            self.bytes += size
        self.values[id(t)] = value
        self._storages[id(t)] = storage_key(t)
        self._alive.append(t)
        if drawn:
            self.drawn.add(id(t))
        else:
            self.drawn.discard(id(t))

    def note(self, func, args: tuple, kwargs: dict, out) -> None:
        """Op `func` (an `OpOverload`) ran on `args`, `kwargs` and gave `out` on the meta device: its
        result's shadow made where it can be, and the shadows of what it wrote without one taken."""
        import torch

        try:
            self._note(func, args, kwargs, out)
        except Exception:  # noqa: BLE001 - an op the CPU cannot run as the meta device did: no shadow
            try:
                touched = _written(func, args, kwargs)
            except Exception:  # noqa: BLE001 - an operator with no schema (a higher-order one): its outputs alone
                touched = []
            for t in touched + [o for o in _leaves(out) if isinstance(o, torch.Tensor)]:
                self._drop(t)

    def _note(self, func, args: tuple, kwargs: dict, out) -> None:
        import torch
        from torch.utils._pytree import tree_flatten

        name = func._overloadpacket.__name__
        base = name[:-1] if name.endswith("_") else name
        outs = [o for o in _leaves(out) if isinstance(o, torch.Tensor)]
        if outs and all(type(o) is torch.Tensor and o.device.type == "cpu" for o in outs):
            return  # its result holds its values (run again, an in-place op would write twice)
        written = _written(func, args, kwargs)
        size = sum(o.numel() for o in outs)
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        costly = base in NEVER or (base in PRODUCTS and first is not None and first.dim() >= 1
                                   and size * int(first.shape[-1]) > MAX_PRODUCT)
        if base in RANDOM or costly or size > MAX_ELEMENTS or self.bytes > MAX_BYTES or \
                (base in EMPTY and size > MAX_EMPTY):
            for t in written:
                self._drop(t)
            return
        leaves, spec = tree_flatten((args, kwargs))
        drawn = False  # made of a drawn input's values (`get`)
        if base in VALUE_FACTORIES or base in EMPTY:  # values from numbers: of a tensor operand, its shape alone
            leaves = [torch.empty(x.shape, dtype=x.dtype) if isinstance(x, torch.Tensor) else x for x in leaves]
        else:
            tensors = [x for x in leaves if isinstance(x, torch.Tensor)]
            drawn = any(id(x) in self.drawn for x in tensors)
            shadows = [self.get(x, drawn=True) for x in tensors]
            if not tensors or any(s is None for s in shadows):
                for t in written:
                    self._drop(t)
                return
            held = iter(shadows)
            leaves = [next(held) if isinstance(x, torch.Tensor) else x for x in leaves]
        got = _on_cpu(func, leaves, spec)
        if base in EMPTY:  # what memory held: zeros, for a mask written into it whole (BLOOM's `torch.empty`, then [:, 0:] =)
            got.zero_()
        got_leaves = [g for g in _leaves(got) if isinstance(g, torch.Tensor)]
        if len(got_leaves) != len(outs):
            raise ValueError("the CPU gave a different number of tensors")
        for o, g in zip(outs, got_leaves):
            self.set(o, g, drawn)

    def answer(self, func, args: tuple, kwargs: dict):
        """Op `func`, which has no meta kernel (its output's shape is decided by its inputs' values:
        `bincount`, `nonzero`), answered on the meta device from the shadows of its operands, one
        draw's included: its result's shape and type, on the meta device, each output holding the
        CPU result as its shadow, marked drawn (one draw's answer, never a mask's share). None where an
        operand has no shadow, the op writes into one, or the CPU cannot run it."""
        import torch
        from torch.utils._pytree import tree_flatten, tree_map

        leaves, spec = tree_flatten((args, kwargs))
        tensors = [x for x in leaves if isinstance(x, torch.Tensor)]
        shadows = [self.get(x, drawn=True) for x in tensors]
        if not tensors or any(s is None for s in shadows) or func._schema.is_mutable:
            return None
        held = iter(shadows)
        try:
            got = _on_cpu(func, [next(held) if isinstance(x, torch.Tensor) else x for x in leaves], spec)
        except Exception:  # noqa: BLE001 - the CPU cannot run it either: no answer
            return None
        out = tree_map(lambda g: torch.empty_strided(g.shape, g.stride(), dtype=g.dtype, device="meta")
                       if isinstance(g, torch.Tensor) else g, got)
        for o, g in zip(_leaves(out), _leaves(got)):
            if isinstance(o, torch.Tensor):
                self.set(o, g, drawn=True)
        return out

    def _drop(self, t) -> None:
        key = storage_key(t)
        for i in [i for i, k in self._storages.items() if i == id(t) or (key is not None and k == key)]:
            value = self.values.pop(i, None)
            if value is not None:
                self.bytes -= value.numel() * value.element_size()
            del self._storages[i]
            self.drawn.discard(i)


def _on_cpu(func, leaves: list, spec):
    """Op `func` run on the CPU on its arguments' leaves (`leaves`, flattened by `spec`: the shadows in
    place of its tensors), any device it names the CPU. Raises what the op raises."""
    import torch
    from torch.utils._pytree import tree_unflatten

    cpu = torch.device("cpu")
    args, kwargs = tree_unflatten([cpu if isinstance(x, torch.device) else x for x in leaves], spec)
    if "device" in kwargs:
        kwargs["device"] = cpu
    return func(*args, **kwargs)


def _leaves(x) -> list:
    from torch.utils._pytree import tree_leaves

    return tree_leaves(x)


def _written(func, args: tuple, kwargs: dict) -> list:
    """The tensors op `func` writes into (its schema's mutable arguments: `self` of an in-place op, `out=`)."""
    import torch

    found = []
    for i, arg in enumerate(func._schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = args[i] if i < len(args) and not arg.kwarg_only else kwargs.get(arg.name)
        found += [v for v in _leaves(value) if isinstance(v, torch.Tensor)]
    return found
