"""The model side: pure Python, no GPU, no CuPy, no matplotlib.

  units      unit conversions (the only place 1e9 and 1e3 appear) and integer helpers
  arch       per-SM limits by compute capability (CUDA programming guide tables)
  occupancy  the theoretical-occupancy calculator
  precision  one record per GEMM precision (FP32, BF16, FP16, TF32): spellings, roof, bytes, layout
  problem    a GEMM problem M x N x K
  traffic    the analytic GMEM/SMEM traffic model, and the traffic Nsight Compute counts
  roofs      ceilings per memory level and compute unit, floors, ridge point, the verdict as data
  peaks      per-SM per-clock rates of every precision and memory level, with their sources
  waves      blocks over block slots: the last wave's fill and the share of the GPU kept busy
  presets    datasheet figures of GPUs one may not have at hand
  device_file  a GPU its user describes (`--gpu mygpu.toml`), checked like a preset
  device     the GPU as data (peaks, limits), from a preset or from readings
  verify     the correctness gate: a kernel's output against the reference
  timing     a timing as recorded (samples, median, spread), the L2 modes, the launch timeout
"""
