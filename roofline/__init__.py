"""roofline: roofline and occupancy analysis of real CUDA kernels.

Layers, each a subpackage; imports run one way, from the top of this list down:

  api       one function per command: takes plain values, returns typed data
  render    tables, sentences and charts from typed data (text, tables, chart, *_chart)
  results   the results document as typed models: schema, convert (from a run), store (files)
  measure   needs a GPU, NVRTC or Nsight Compute: nvml, timing, offline, compile, runner,
            ceilings, counters, tuning, progress
  ladder    the SGEMM kernel families, their sources, and where the tunable tile comes from
  model     pure: units, arch limits, occupancy, problem, traffic, roofs, presets, device, verify

and beside them `errors` (the two failures the command line maps to exit codes) and `files`
(output paths checked up front, atomic writes, the per-user cache).
"""

__version__ = "0.1.0"
