"""roofline: roofline and occupancy analysis of real CUDA kernels.

Layers, each a subpackage; imports run one way, from the top of this list down:

  cli           the Typer app: mounts each command's room; `__main__` runs it as `python -m roofline`
  console       the terminal: interrupts, Click's usage errors in one line (and the old spellings'
                answers), the rich console, how an outcome is shown (stderr lines, exit codes)
  commands      one room per command: its signature, its work, its view
  api           the library's facade: read, run, profile, import_report, grade (`roofline.read`, ...)
  outcome       what a command returns (document, view, notes, warnings, failures)
  documents     the registry of document kinds: how each loads, shows, draws, compares, prints
  collect       a run, sweep or tile search turned into a results document
  grading       a graded run turned into a grade file's entry
  render        tables, sentences and charts from typed data
  analysis      decisions over results documents: work, compare, check, whatif, project, comms
  results       the results documents as typed models, and their files
  nsight        Nsight Compute: every report form read, and ncu run
  measure       needs a GPU or NVRTC: timing, compiling, running, ceilings, counters, energy
  traces        programs as they ran: PyTorch profiler traces, nccl-tests' output
  ladder        the kernel families, their sources and tiles, the user's kernels, the listing
  workload      kernels of any signature and callables, declared
  model         pure: units, arch limits, occupancy, problems, traffic, roofs, peaks, devices

and beside them `errors` (the two failures the command line maps to exit codes), `files`
(output paths checked up front, atomic writes, the per-user cache), `progress` (how long jobs
report their steps), `defaults` (the values the command line's help shows, importing nothing),
`extras` (how to install an optional part), `declarations` (a .cu file's `// roofline` lines,
read once for every reader), `build_options` (how a user's kernel file is compiled: the
compiler asked for and its options), `child` (every process roofline starts of its own, one
protocol) and `provenance` (the `tool` a written file records: the version and a fingerprint of
the source).
"""

__version__ = "0.1.0"

_LIBRARY = ("read", "run", "profile", "import_report", "grade")  # `roofline.api`, loaded on first use


def __getattr__(name: str):
    """`roofline.read`, `run`, `profile`, `import_report` and `grade` (`roofline.api`), imported
    when first asked for: importing roofline itself loads nothing of the library."""
    if name in _LIBRARY:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LIBRARY])
