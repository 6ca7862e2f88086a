"""The commands, one room each: a command's module holds its Typer signature (`command`, mounted
by `roofline.cli` with its `MOUNT`; `RENAMED`: its old flags and their new spellings), the work it
orchestrates, and its view (`view`: what it returns as a `roofline.outcome.Outcome`). A room
imports Typer, the console and the defaults at its top and the library inside its functions, so
that `roofline --help` loads none of it.

run        the GEMM ladders and your GEMM kernels; graded kernels and callables; --tune
grade      run's graded part: kernels of any signature and callables against their speed of light
tune       run --tune's tile search of the autotuned kernel
profile    a program under Nsight Compute, or a report made elsewhere (--import)
comms      communication across ranks from profiler traces
plot       any file's chart
show       any file's tables and verdicts
occupancy  theoretical occupancy of a block configuration (the model alone)
device     a GPU's peaks, ceilings and limits
kernels    the ladder's model and resources for a target, offline
new        a starter kernel
compare    two files of one kind; with --max-drop, the regression gate
whatif     each kernel at a fraction of its roof
project    the same work on another GPU
schema     the JSON Schema of a kind of document
gemm       shared by run and kernels: the GEMM sizes (--size, --sweep), the user's kernel files and
           their launch (--declare), the precision of a run
"""
