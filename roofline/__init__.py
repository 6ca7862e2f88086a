"""roofline: roofline and occupancy analysis of real CUDA kernels.

Layers, each a subpackage; imports run one way, from the top of this list down:

  cli       the Typer app: declarations only, each command one api call and its outcome
  console   the terminal: interrupts, Click's usage errors in one line, the rich console, how an
            outcome is shown (notes, warnings and errors on stderr, exit codes)
  outcome   what a command returns (document, view, notes, warnings, failures), per command
  api       one function per command: takes plain values, returns typed data; checks the values
  render    tables, sentences and charts from typed data (text, tables, chart, *_chart)
  analysis  decisions over results documents: work, compare, check, whatif, project
  results   the results document as typed models: schema, profile, convert (from a run or a
            profile), store (files)
  nsight    Nsight Compute: every report form read into launches and a GPU (`nsight.read`),
            and ncu run (`nsight.run`, the one module of it that starts ncu)
  measure   needs a GPU or NVRTC: nvml, timing, rounds (kernels and cuBLAS timed together), energy,
            energy_ceilings, nvrtc_compile, compile_pool, compile_cache, compile, runner, isolated (a user's
            kernel in a process of its own), ceilings, counters (run --profile), tuning
  ladder    the SGEMM kernel families, their sources, where the tunable tile comes from, and
            the user's own kernels (user)
  model     pure: units, arch limits, occupancy, problem, traffic, roofs, peaks (per precision),
            presets, device, device_file, verify, launch (a user kernel's grid expression, block
            and tiles), timing (a timing as recorded)

and beside them `errors` (the two failures the command line maps to exit codes), `files`
(output paths checked up front, atomic writes, the per-user cache), `progress` (how long jobs
report their steps) and `defaults` (the values the command line's help shows, importing nothing,
so that `roofline --help` loads none of the library).
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
