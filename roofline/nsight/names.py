"""Names people recognise for profiled kernels, from the demangled names Nsight Compute prints.

A kernel is named by its function, without return type, namespaces, template arguments or
parameters ('void at::native::<unnamed>::cunn_SoftMaxForward<4, float>(T3 *, ...)' ->
'cunn_SoftMaxForward'), except where that name says nothing:

- Library wrappers whose function is generic (CUTLASS's `cutlass::Kernel`, `Kernel2`,
  `device_kernel`, cuBLAS's `kernel`) are named by their template argument when it is one name:
  'void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)' ->
  'cutlass_80_simt_sgemm_256x128_8x4_nn_align1'.
- Kernels templated on a functor or lambda (PyTorch's elementwise, reduction, copy and
  foreach kernels) carry, in brackets, the first two names among their template arguments that
  are neither numbers, scalar types nor launch plumbing:
  'vectorized_elementwise_kernel [GeluCUDAKernelImpl]', 'elementwise_kernel [direct_copy_kernel_cuda]',
  'reduce_kernel [sum_functor]', 'multi_tensor_apply_kernel [BinaryOpScalarFunctor, multiplies]';
  a generic wrapper whose argument is not one name likewise, with the CuTe tile shape where its
  name has one ('device_kernel [GemmUniversal 128x256x64]').
The demangled name itself is always kept beside the label (`nsight.launches.Launch.demangled`).
"""

from __future__ import annotations

import re

WRAPPERS = {"Kernel", "Kernel2", "device_kernel", "kernel", "generic_kernel"}
# argument heads that only carry a functor further in (PyTorch's launch plumbing)
PLUMBING = {"gpu_kernel_impl", "gpu_kernel_impl_nocast", "gpu_kernel_with_index", "AUnaryFunctor", "BUnaryFunctor",
            "BinaryFunctor", "ReduceOp", "func_wrapper_t", "opmath_gpu_kernel_with_scalars", "Flash_fwd_params"}
# type names that say nothing about what a kernel does
TYPES = {"int", "unsigned", "long", "short", "char", "float", "double", "bool", "void", "signed", "Half", "BFloat16",
         "half", "__half", "__nv_bfloat16", "__nv_fp8_e4m3", "__nv_fp8_e5m2", "complex", "array", "Array", "tuple",
         "pair", "integral_constant", "C", "Int", "Shape", "Stride", "Layout", "OffsetCalculator",
         "TrivialOffsetCalculator", "LoadWithCast", "StoreWithCast", "LoadWithoutCast", "StoreWithoutCast",
         "type", "T", "Params", "Arguments", "enable_if", "integer_sequence", "index_sequence", "OpaqueType",
         "policy_hub"}
SKIPPED = re.compile(r".*Metadata|Policy\d*")  # kernel-argument structs and tuning policies
OPEN, CLOSE = "<([{", ">)]}"
LITERAL = re.compile(r"(\(\w+\))?[-+]?\d+[uUlL]*|true|false")  # a template argument that is a value


def _normalise(name: str) -> str:
    """`name` with its anonymous namespaces as one word, '_anon'. Some exports drop the '<' of
    '<unnamed>' (Windows ones, and ncu's CSV and text of PyTorch's foreach kernels on Linux:
    'void unnamed>::multi_tensor_apply_kernel<unnamed>::TensorListMetadata<1>, unnamed>::...'),
    so an 'unnamed>' right after a name is a template's '<' and a lost one."""
    text = name.strip().replace("(anonymous namespace)", "_anon")
    text = re.sub(r"(?<=\w)<unnamed>", "<_anon", text)  # 'kernel<unnamed>::': the template's '<', the other lost
    text = re.sub(r"(?<![\w<])unnamed>", "_anon", text)  # ' unnamed>::': the '<' lost
    return text.replace("<unnamed>", "_anon")


def _matching_open(text: str, close_at: int) -> int | None:
    """Index of the bracket that opens the one closing at `close_at`, or None."""
    depth = 0
    for i in range(close_at, -1, -1):
        ch = text[i]
        if ch in CLOSE and not (ch == ">" and i > 0 and text[i - 1] == "-"):
            depth += 1
        elif ch in OPEN:
            depth -= 1
            if depth == 0:
                return i
    return None


def split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside every bracket pair."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in OPEN:
            depth += 1
        elif ch in CLOSE and not (ch == ">" and i > 0 and text[i - 1] == "-"):
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [x for x in out if x]


def parts(demangled: str) -> tuple[str, list[str]]:
    """A kernel's qualified function name and its top-level template arguments:
    'void at::k<4, F<float>>(int)' -> ('at::k', ['4', 'F<float>']). Names that are not C++
    signatures come back whole, with no arguments."""
    text = _normalise(demangled)
    text = re.sub(r"\s+const$", "", text)
    if text.endswith(")"):
        start = _matching_open(text, len(text) - 1)
        if start:
            text = text[:start].rstrip()
    args: list[str] = []
    if text.endswith(">"):
        start = _matching_open(text, len(text) - 1)
        if start:
            args = split_top(text[start + 1:-1])
            text = text[:start].rstrip()
    depth, cut = 0, -1
    for i, ch in enumerate(text):  # the qualified name follows the last space outside brackets
        if ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            cut = i
    return text[cut + 1:].strip(), args


def _last(qualified: str) -> str:
    pieces = [p for p in split_top(qualified, ":") if p]
    return pieces[-1] if pieces else qualified


def short_name(demangled: str) -> str:
    """A kernel's function name without return type, namespaces, template arguments or
    parameters: 'void native::vectorized_elementwise_kernel<4, ...>(int, ...)' ->
    'vectorized_elementwise_kernel'. Names that are not C++ signatures come back as they are."""
    qualified, _ = parts(demangled)
    return _last(qualified) or demangled.strip()


def _head(arg: str) -> tuple[str, str]:
    """An argument's name (up to its first bracket) and the inside of its template brackets."""
    arg = re.sub(r"^(void|const|struct|class|typename)\s+", "", arg.strip())
    depth = 0
    for i, ch in enumerate(arg):
        if ch in "<([" and depth == 0:
            inner = ""
            if ch == "<":
                j = i
                for k in range(i, len(arg)):
                    depth += arg[k] == "<"
                    depth -= arg[k] == ">"
                    if depth == 0:
                        j = k
                        break
                inner = arg[i + 1:j]
            return arg[:i].strip(), inner
    return arg.strip(), ""


def _compact(inner: str) -> str:
    """Template arguments shortened to their last names: 'c10::BFloat16, 1, 1, 0' -> 'BFloat16,1,1,0'."""
    return ",".join(_last(_head(a)[0]) or a for a in split_top(inner))


def informative(args: list[str], detailed: bool = False) -> list[str]:
    """The names in template arguments that say what a kernel computes, in order: functors,
    lambdas' enclosing functions, kernel types; numbers, scalar types and launch plumbing
    skipped (plumbing looked into). `detailed` keeps each name's own template arguments,
    shortened ('FillFunctor<BFloat16>')."""
    out: list[str] = []
    for arg in args:
        head, inner = _head(arg)
        name = _last(head)
        if not name or re.fullmatch(r"[-+]?\(?\w*\)?\s*[-+]?[\d.]+[uUlLfF]*|true|false|T\d+", name) or \
                re.fullmatch(r"\(\w+\)[-\d]+", arg.strip()):
            continue
        if name in PLUMBING:
            out += informative(split_top(inner), detailed)
        elif name not in TYPES and not name.endswith("_t") and not name.startswith(("operator", "_anon")) \
                and not SKIPPED.fullmatch(name) and re.fullmatch(r"[A-Za-z_]\w*", name):
            out.append(f"{name}<{_compact(inner)}>" if detailed and inner.strip() else name)
    return out


def _tile(text: str) -> str:
    """A CuTe tile shape in a kernel's name ('128x256x64'): the first triple of cute::C<N> with
    an extent of 16 or more (the smaller ones are cluster shapes)."""
    for m in re.finditer(r"tuple<\s*cute::C<(\d+)>,\s*cute::C<(\d+)>,\s*cute::C<(\d+)>\s*>", text):
        if max(int(x) for x in m.groups()) >= 16:
            return "x".join(m.groups())
    return ""


def label(demangled: str, detail: int = 0) -> str:
    """The name a table or chart shows for a kernel (this module's rules): its function's name,
    a generic wrapper's template argument instead, a functor-templated kernel's functor in
    brackets after it. More `detail` tells apart kernels that differ only in template
    arguments: 1 keeps the functors' own arguments ('[FillFunctor<BFloat16>]'), 2 also the
    kernel's ('vectorized_elementwise_kernel<4> [FillFunctor<float>]')."""
    qualified, args = parts(demangled)
    base = _last(qualified) or demangled.strip()
    numbers = [re.sub(r"^\(\w+\)", "", a.strip()) for a in args if LITERAL.fullmatch(a.strip())]
    if detail >= 2 and numbers:
        base += "<" + ",".join(numbers) + ">"
    found = informative(args, detail >= 1)
    first = args[0].strip() if args else ""
    if base in WRAPPERS and re.fullmatch(r"[A-Za-z_]\w*", first) and first not in TYPES:
        return first
    tile = _tile(demangled) if base in WRAPPERS else ""
    inside = ", ".join(found[:2]) + (f" {tile}" if tile else "")
    return f"{base} [{inside}]" if found else base


def unique_labels(demangled: list[str]) -> dict[str, str]:
    """A label for each distinct demangled name, different kernels never sharing one: kernels
    whose `label`s collide get more detail (their template arguments), and those still alike
    ' #2', ' #3' in the order given."""
    names = list(dict.fromkeys(demangled))
    out = {n: label(n) for n in names}
    for detail in (1, 2):
        groups: dict[str, list[str]] = {}
        for n in names:
            groups.setdefault(out[n], []).append(n)
        for members in groups.values():
            if len(members) > 1:
                for n in members:
                    out[n] = label(n, detail)
    seen: dict[str, int] = {}
    for n in names:
        seen[out[n]] = seen.get(out[n], 0) + 1
        if seen[out[n]] > 1:
            out[n] = f"{out[n]} #{seen[out[n]]}"
    return out
