"""roofline: roofline and occupancy analysis of real CUDA kernels.

Modules, one concept each:
  arch        per-compute-capability SM limits (CUDA programming guide tables)
  presets     datasheet figures of GPUs one may not have at hand
  device      the GPU as a dataclass: NVML peaks, CUDA attributes, or a preset
  occupancy   the theoretical-occupancy calculator
  model       the analytic GMEM/SMEM traffic model and roofline floors
  registry    the SGEMM ladder: one entry per kernel in kernels/
  timing      CUDA-event timing as data
  runner      compile, verify against cuBLAS, time
  results     the results JSON: build, write atomically, load and validate
  report      rich tables for the terminal
  plot        the roofline chart
"""

__version__ = "0.1.0"
