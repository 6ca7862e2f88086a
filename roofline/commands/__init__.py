"""The commands, one room each: a command's module holds its Typer signature (`command`, mounted
by `roofline.cli` with its `MOUNT`), the work it orchestrates, and its view (`view`: what it
returns as a `roofline.outcome.Outcome`). A room imports Typer, the console and the defaults at
its top and the library inside its functions, so that `roofline --help` loads none of it.

Rooms: run · profile · grade · comms · tune · plot · show · occupancy · device · kernels · new ·
compare · whatif · project · check · schema; and two modules they share: gemm (the GEMM problems,
the user's kernel files and the precision a command names) and reading (which files each reading
command takes, and reading them).
"""
