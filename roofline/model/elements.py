"""The element types a workload's buffers hold: how a spec spells them, their size, the C type a
kernel takes them as, and NumPy's name for them (CuPy's and PyTorch's match it, but for bfloat16,
which NumPy lacks: its buffers are drawn and compared as float32 and stored as the top 16 bits)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Element:
    """One element type: `name` as a spec writes it, `nbytes` per element, `c_type` as a kernel's
    pointer names it, `numpy` NumPy's dtype name ('bfloat16' has none: see the module), `floating`."""

    name: str
    nbytes: int
    c_type: str
    numpy: str
    floating: bool


ELEMENTS: dict[str, Element] = {e.name: e for e in (
    Element("f64", 8, "double", "float64", True),
    Element("f32", 4, "float", "float32", True),
    Element("f16", 2, "__half", "float16", True),
    Element("bf16", 2, "__nv_bfloat16", "bfloat16", True),
    Element("i64", 8, "long long", "int64", False),
    Element("i32", 4, "int", "int32", False),
    Element("u32", 4, "unsigned int", "uint32", False),
    Element("i16", 2, "short", "int16", False),
    Element("i8", 1, "signed char", "int8", False),
    Element("u8", 1, "unsigned char", "uint8", False),
)}
ALIASES = {"float64": "f64", "double": "f64", "float32": "f32", "float": "f32", "fp32": "f32", "float16": "f16",
           "half": "f16", "fp16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32", "int": "i32",
           "uint32": "u32", "int16": "i16", "int8": "i8", "uint8": "u8"}


def element(name: str, where: str = "dtype") -> Element:
    """The element type `name` spells ('f32', 'float32', 'bf16', ...). Raises UsageError naming
    `where` and the valid names otherwise."""
    key = ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    if key not in ELEMENTS:
        raise UsageError(f"{where}: unknown element type {name!r}; valid: {', '.join(ELEMENTS)}")
    return ELEMENTS[key]
