"""The model side: pure Python, no GPU, no CuPy, no matplotlib.

  units      unit conversions (the only place 1e9 and 1e3 appear) and integer helpers
  arch       per-SM limits by compute capability (CUDA programming guide tables)
  occupancy  the theoretical-occupancy calculator
  precision  one record per GEMM precision (FP32, BF16, FP16, TF32): spellings, roof, bytes, layout
  problem    a GEMM problem M x N x K
  traffic    the analytic GMEM/SMEM traffic model, and the traffic Nsight Compute counts
  dram       the DRAM bytes of a tiled GEMM: the panels each wave of its grid reads against the L2
  roofs      ceilings per memory level and compute unit, floors, ridge point, the verdict as data,
             measured ceilings at least what a file saw
  peaks      per-SM per-clock rates of every precision and memory level, with their sources
  waves      blocks over block slots: the last wave's fill and the share of the GPU kept busy
  timeline   a kernel's run as intervals of sampled counters (each unit's share of its peak, the SMs
             busy, the clock, FLOPs and bytes), its phases (fill, steady, drain, tail wave)
  presets    datasheet figures of GPUs one may not have at hand
  device_file  a GPU its user describes (`--gpu mygpu.toml`), checked like a preset
  device     the GPU as data (peaks, limits), from a preset or from readings
  verify     the correctness gate: a kernel's output against the reference
  timing     a timing as recorded (samples, median, spread), the L2 modes, the launch timeout
  energy     a kernel's energy as recorded: joules per launch over loops of launches, the board's
             power, and with its work GFLOP and bytes per joule
  launch     a user kernel's launch in text: the grid as an expression in M, N and K (whitelisted,
             never eval'd), the block shape, the block and thread tiles
  elements   a workload's element types: their spellings, sizes, C types and NumPy's names
  formulas   the work of the kernels people write (softmax, norms, scans, GEMMs, attention): FLOPs
             per precision and compulsory bytes, each with where its count comes from
  sol        a kernel's speed of light: the least time its work and compulsory bytes allow on a
             GPU, and how close a measured time comes to it (share, score)
  integrity  the integrity flags of a graded kernel: why a time or an answer cannot be taken at
             face value, their thresholds and evidence
  collectives  NCCL's collectives: which one a kernel is, the bytes it moves, its algorithm and
             bus bandwidth (nccl-tests' definitions)
  links      NVLink's bandwidth per direction per GPU: the ceiling of a collective's bus bandwidth
  overlap    intervals on one GPU's timeline: their union and how much of one others cover (the
             exposed part of a collective)
"""
