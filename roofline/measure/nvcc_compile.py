"""Compiling a user's kernel file with nvcc, the CUDA toolkit's compiler, as its author compiles it:
the whole file (host code, `main`, host globals, <stdio.h> and <assert.h> included), of which only
the device code ends up in the binary.

Which nvcc (`find_nvcc`): the one $ROOFLINE_NVCC names ('off': none, so NVRTC compiles), else
`nvcc` on the PATH, else $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, /usr/local/cuda/bin/nvcc.
Its version is what `nvcc --version` says ('Cuda compilation tools, release 13.0, V13.0.88':
13.0.88).

The command (`command`), run in the working folder:

    nvcc -cubin -arch=sm_XY -o DIR/NAME.cubin -Xptxas -v -keep -keep-dir DIR -IFOLDER OPTIONS DIR/NAME.roofline.cu

`sm_XY` is the kernel's target on the GPU (`UserKernel.target`: sm_90a on an sm_90 GPU for a
tensor-core precision, as the NVRTC path compiles it), FOLDER the kernel file's, OPTIONS the
file's and the command line's (`build_options`), DIR a temporary folder. The program compiled is
a small file that includes the kernel file by its absolute path (so its own includes and error
lines stay its own) and then names the entry twice in host code:

    void *roofline_entry_reference[] = {(void *)&ENTRY,
                                        (void *)&roofline_entry_probe<decltype(&ENTRY), &ENTRY>};

Naming a kernel template's instance in host code is how nvcc instantiates it, as a launch in
`main` would; the probe, an empty kernel template whose arguments are the entry, is how the
entry's mangled name is found without NVRTC's name expressions: the cubin's kernels are listed
by ptxas's report (`-Xptxas -v`: "Compiling entry function '_Z1kILi64EEvPf'"), and demangled
(`cu++filt` beside nvcc, else `c++filt`), the probe's reads
`void roofline_entry_probe<void (*)(float*), &(void k<64>(float*))>()`: the entry is the kernel
whose own demangled name is the one inside `&(...)`. An `extern "C"` kernel is found by its
name; without a demangler, a plain name (no template, no namespace) by the start of its mangled
name, or the one kernel there is.

ptxas's report gives the registers, shared and local memory (`nvrtc_compile.parse_ptxas_log`);
the PTX kept in DIR its `__launch_bounds__` (`nvrtc_compile.max_threads`). A file that does not
compile is one RunError: the first error lines of nvcc's output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from ..errors import RunError, UsageError
from ..ladder.user import UserKernel, missing_entry
from .nvrtc_compile import KernelResources, compiler_lines, max_threads, newer_target, parse_ptxas_log, variant_hint

NVCC_VARIABLE = "ROOFLINE_NVCC"  # the nvcc to use, or 'off' for none
TOOLKIT_FOLDERS = ("/usr/local/cuda",)  # looked in after $CUDA_HOME and $CUDA_PATH
COMPILE_TIMEOUT_S = 600
PROBE = "roofline_entry_probe"
_VERSION = re.compile(r"release (\d+\.\d+), V(\d+(?:\.\d+)+)")
_RELEASE = re.compile(r"release (\d+\.\d+)")
_ENTRY_FUNCTION = re.compile(r"Compiling entry function '([^']+)'")
_ERROR = re.compile(r"\b(error|fatal)\b", re.IGNORECASE)


def turned_off() -> bool:
    """Whether $ROOFLINE_NVCC is 'off' (or empty): no nvcc, NVRTC compiles."""
    chosen = os.environ.get(NVCC_VARIABLE)
    return chosen is not None and chosen.strip().lower() in ("", "off")


def find_nvcc() -> str | None:
    """The nvcc to compile with (see the module), None where there is none. Raises UsageError
    when $ROOFLINE_NVCC names a file that is not an executable."""
    chosen = os.environ.get(NVCC_VARIABLE)
    if turned_off():
        return None
    if chosen is not None:
        path = os.path.expanduser(chosen.strip())
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise UsageError(f"${NVCC_VARIABLE} names {chosen!r}, which is no executable file; name nvcc's path, or "
                             "'off' to compile with NVRTC")
        return path
    found = shutil.which("nvcc")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), *TOOLKIT_FOLDERS]
    for root in filter(None, roots):
        path = os.path.join(root, "bin", "nvcc")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def nvcc_version(nvcc: str) -> str:
    """The version of the nvcc at `nvcc` ('13.0.88'), from `nvcc --version`. Raises RunError when
    it does not run or says no version."""
    try:
        stat = os.stat(nvcc)
    except OSError as exc:
        raise RunError(f"nvcc at {nvcc} cannot be read: {exc.strerror}") from None
    return _version(nvcc, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=None)
def _version(nvcc: str, size: int, mtime_ns: int) -> str:
    try:
        proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunError(f"nvcc at {nvcc} does not run: {exc}") from None
    text = proc.stdout + proc.stderr
    found = _VERSION.search(text)
    if found:
        return found.group(2)
    found = _RELEASE.search(text)
    if proc.returncode == 0 and found:
        return found.group(1)
    last = (text.strip().splitlines() or ["no output"])[-1]
    raise RunError(f"nvcc at {nvcc} says no version (`nvcc --version`: {last})")


def builds_for(nvcc: str, arch: str) -> bool:
    """Whether the nvcc at `nvcc` builds for `arch` ('sm_70', 'sm_90a'): its `--list-gpu-arch`
    names the target's compute_XX (CUDA 13 dropped sm_70 and sm_72, for one). True where the list
    cannot be had (an nvcc older than 11.0 has no such option): its own error then says."""
    try:
        stat = os.stat(nvcc)
    except OSError:
        return True
    listed = _targets(nvcc, stat.st_size, stat.st_mtime_ns)
    number = re.match(r"sm_(\d+)", arch)
    return listed is None or number is None or f"compute_{number.group(1)}" in listed


@lru_cache(maxsize=None)
def _targets(nvcc: str, size: int, mtime_ns: int) -> frozenset[str] | None:
    try:
        proc = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    listed = frozenset(re.findall(r"compute_\d+", proc.stdout))
    return listed if proc.returncode == 0 and listed else None


def nvcc_identity(nvcc: str) -> list:
    """What decides nvcc's output besides its input, for a cache key: its path, size, modification
    time and version."""
    stat = os.stat(nvcc)
    return [os.path.realpath(nvcc), stat.st_size, stat.st_mtime_ns, nvcc_version(nvcc)]


@dataclass(frozen=True)
class NvccBuild:
    """One kernel compiled by nvcc: the `cubin` (bytes), the entry's `lowered` (mangled) name in it,
    ptxas's report (`log`), the PTX nvcc kept (`ptx`, '' where none was found), the nvcc version."""

    cubin: bytes
    lowered: str
    log: str
    ptx: str
    version: str

    @property
    def compiler(self) -> str:
        """Which compiler built it, as records say it: 'nvcc 13.0.88'."""
        return f"nvcc {self.version}"


def command(nvcc: str, target: str, folder: str, options: tuple[str, ...], out: str, program: str) -> list[str]:
    """nvcc's command line (see the module): a cubin for `target` ('sm_90') written to `out`,
    ptxas's report, the intermediate files kept in `folder` (a temporary one), the kernel file's
    `folder` and `options` (nvcc's spelling), the `program` compiled last."""
    tmp = os.path.dirname(out)
    return [nvcc, "-cubin", f"-arch={target}", "-o", out, "-Xptxas", "-v", "-keep", "-keep-dir", tmp, f"-I{folder}",
            *options, program]


def wrapper(path: Path, entry: str) -> str:
    """The program nvcc compiles for kernel `entry` of file `path` (see the module). Raises
    UsageError for a path an #include cannot name (a double quote or a line break in it)."""
    text = os.fsdecode(os.fsencode(path))
    if '"' in text or "\n" in text or "\r" in text:
        raise UsageError(f"{path}: nvcc cannot include a file whose path holds a double quote or a line break; "
                         "rename it, or compile with NVRTC ({compiler} nvrtc)", mentions=["compiler"])
    return (f'#include "{text}"\n'
            f"template <typename RooflineType, RooflineType RooflineEntry> __global__ void {PROBE}() {{}}\n"
            f"void *roofline_entry_reference[] = {{(void *)&{entry}, "
            f"(void *)&{PROBE}<decltype(&{entry}), &{entry}>}};\n")


def build(spec: UserKernel, arch: str, nvcc: str) -> NvccBuild:
    """`spec` compiled by the nvcc at `nvcc` for GPU target `arch` (at the kernel's own target,
    `spec.target(arch)`), once per file text, entry, target, options and nvcc in a process.
    Raises RunError with nvcc's first error lines when it does not compile, when the entry is
    no kernel of the file, or when nvcc does not run; UsageError for a file that cannot be read."""
    version = nvcc_version(nvcc)
    return _build(spec.path, spec.name, spec.source_text(), spec.entry.strip(), spec.target(arch),
                  spec.build.options, nvcc, version)


@lru_cache(maxsize=None)
def _build(path: Path, name: str, text: str, entry: str, target: str, options: tuple[str, ...], nvcc: str,
           version: str) -> NvccBuild:
    """`build`, keyed on what decides its output (`text` is the file's, read by the caller)."""
    program_text = wrapper(path, entry)
    with tempfile.TemporaryDirectory(prefix="roofline-nvcc-") as tmp:
        program = os.path.join(tmp, f"{path.stem}.roofline.cu")
        out = os.path.join(tmp, f"{path.stem}.cubin")
        Path(program).write_bytes(program_text.encode("utf-8", "surrogateescape"))  # a name's bytes as they are
        argv = command(nvcc, target, str(path.parent), options, out, program)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=COMPILE_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RunError(f"{name}: nvcc {version} did not finish compiling {path.name} within "
                           f"{COMPILE_TIMEOUT_S} s") from None
        except OSError as exc:
            raise RunError(f"{name}: nvcc at {nvcc} does not run: {exc.strerror or exc}") from None
        log = proc.stderr + proc.stdout
        if proc.returncode != 0 or not os.path.isfile(out):
            raise _failure(name, path, entry, target, version, log, program, text)
        cubin = Path(out).read_bytes()
        ptx = "\n".join(p.read_text(errors="replace") for p in sorted(Path(tmp).glob("*.ptx")))
    lowered = _lowered(name, path, entry, _entries(log), nvcc)
    return NvccBuild(cubin, lowered, log, ptx, version)


def resources(spec: UserKernel, arch: str, nvcc: str) -> KernelResources:
    """ptxas's figures for `spec` compiled by nvcc for GPU target `arch` (`build`): registers,
    static shared memory and local memory in bytes, the `__launch_bounds__` limit, and which
    compiler. Raises RunError as `build` does, or when the report has no section for the entry."""
    done = build(spec, arch, nvcc)
    try:
        figures = parse_ptxas_log(done.log, done.lowered)
    except RunError as exc:
        raise RunError(f"{spec.name} for {spec.target(arch)}: {exc} (nvcc {done.version})") from None
    return replace(figures, max_threads_per_block=max_threads(done.ptx, done.lowered), compiler=done.compiler)


def _failure(name: str, path: Path, entry: str, target: str, version: str, log: str, program: str,
             text: str) -> RunError:
    """The RunError of a compile that failed: the entry not found, or nvcc's first error lines."""
    lines = [ln.rstrip() for ln in log.splitlines() if ln.strip()]
    errors = [ln for ln in lines if _ERROR.search(ln) and "detected in the compilation" not in ln]
    if errors and all(ln.startswith(program) for ln in errors):  # only the lines naming the entry failed
        return RunError(f"{name}: {missing_entry(path.name, entry, text)}")
    kept, theirs = [], False  # the program's own errors (and the lines they quote) follow from the file's
    for ln in lines:
        theirs = ln.startswith(program) or (theirs and ln[:1].isspace())
        if not theirs:
            kept.append(ln.replace(program, "roofline's reference to the entry"))
    if why := newer_target("\n".join(kept)):
        return RunError(f"{name} does not compile for {target} (nvcc {version}): it {why} (PTX instructions "
                        f"{target} does not have){variant_hint(target, log)}")
    first = next((i for i, ln in enumerate(kept) if _ERROR.search(ln)), 0)
    shown = compiler_lines("\n".join(kept[first:])) or ["no output"]
    hint = _wheel_hint(log)
    return RunError(f"{name} does not compile for {target} (nvcc {version}):\n" + "\n".join(f"  {ln}" for ln in shown)
                    + (f"\n  {hint}" if hint else ""))


_NO_HEADER = re.compile(r"fatal error: ([\w./+-]+\.(?:h|hpp|cuh)): No such file", re.MULTILINE)


def _wheel_hint(log: str) -> str | None:
    """For a header nvcc's toolkit lacks that an installed CUDA wheel holds (cuBLAS's, say), the
    option that finds it; None otherwise. nvcc is not given the wheels' folders itself: their
    runtime headers could be of another CUDA than nvcc's."""
    from .nvrtc_compile import wheel_folder_with

    missing = _NO_HEADER.search(log)
    folder = wheel_folder_with(missing.group(1)) if missing else None
    return (f"{missing.group(1)} is in the CUDA wheel at {folder}: compile with --compile-option=-I{folder} "
            "(or '// roofline options: -I ...')") if folder else None


def _entries(log: str) -> list[str]:
    """The kernels ptxas compiled, by their names in the cubin, in its order."""
    return list(dict.fromkeys(_ENTRY_FUNCTION.findall(log)))


def demanglers(nvcc: str | None = None) -> list[str]:
    """The programs that demangle C++ names, in the order tried: cu++filt beside `nvcc`, cu++filt on
    the PATH, c++filt (binutils); [] where there is none."""
    found = []
    for folder in ([os.path.dirname(nvcc), os.path.dirname(os.path.realpath(nvcc))] if nvcc else []):
        path = os.path.join(folder, "cu++filt")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            found.append(path)
    found += [p for p in (shutil.which("cu++filt"), shutil.which("c++filt")) if p]
    return list(dict.fromkeys(found))


def demangle(names: list[str], exe: str) -> dict[str, str]:
    """The mangled ('_Z...') of `names` demangled by the program `exe` (one of `demanglers`); {}
    where it does not run or does not answer a line for each."""
    mangled = [n for n in dict.fromkeys(names) if n.startswith("_Z")]
    if not mangled:
        return {}
    try:
        proc = subprocess.run([exe], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out = proc.stdout.splitlines()
    return dict(zip(mangled, out)) if proc.returncode == 0 and len(out) == len(mangled) else {}


def _spaceless(text: str) -> str:
    return "".join(text.split())


def probe_target(demangled: str) -> str | None:
    """The entry's demangled name inside the probe's ('void roofline_entry_probe<void (*)(float*),
    &(void k<64>(float*))>()' -> 'void k<64>(float*)'); None where it does not read so."""
    text = demangled.strip()
    if PROBE not in text or not text.endswith(")>()"):
        return None
    body = text[:-3]  # ends with the ')' of '&(...)'
    depth = 0
    for i in range(len(body) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(body[i], 0)
        if depth == 0:
            return body[i + 1:-1] if i > 0 and body[i - 1] == "&" else None
    return None


def _lowered(name: str, path: Path, entry: str, entries: list[str], nvcc: str | None) -> str:
    """The cubin's name of kernel `entry` among the kernels ptxas compiled (see the module).
    Raises RunError when it is none of them, or cannot be told."""
    kernels = [n for n in entries if PROBE not in n]
    if entry in kernels:  # extern "C": its own name
        return entry
    probes = [n for n in entries if PROBE in n]
    tried = demanglers(nvcc)
    for exe in tried if probes else []:  # the first whose text of the probe reads (their spellings differ)
        names = demangle(entries, exe=exe)
        target = probe_target(names[probes[0]]) if probes[0] in names else None
        if target is None:
            continue
        hits = [n for n in kernels if _spaceless(names.get(n, "")) == _spaceless(target)]
        if len(hits) == 1:
            return hits[0]
        raise RunError(f"{name}: {entry!r} in {path.name} names no kernel nvcc compiled ({target}); an entry is a "
                       "__global__ function, or an instance of a __global__ template")
    base = entry.split("<", 1)[0].strip()
    marker = f"{len(base)}{base}"  # how a name outside any namespace starts its mangled form
    if re.fullmatch(r"[A-Za-z_]\w*", entry):  # a plain function: _Z5plainPfi, not a template's _Z5plainI...
        plain = [n for n in kernels if n.startswith(f"_Z{marker}") and not n.startswith(f"_Z{marker}I")]
        if len(plain) == 1:
            return plain[0]
    if len(kernels) == 1 and re.fullmatch(r"[A-Za-z_]\w*", base) and marker in kernels[0]:
        return kernels[0]
    if not kernels:
        raise RunError(f"{name}: nvcc compiled no kernel of {path.name}")
    if tried:
        raise RunError(f"{name}: which of the {len(kernels)} kernels of {path.name} is {entry!r} could not be read from "
                       f"their names as {', '.join(os.path.basename(t) for t in tried)} demangle them; declare the "
                       "kernel extern \"C\"")
    raise RunError(f"{name}: which of the {len(kernels)} kernels of {path.name} is {entry!r} takes a demangler, and "
                   "none was found: install binutils (c++filt) or put the CUDA toolkit's cu++filt on the PATH, or "
                   "declare the kernel extern \"C\"")
