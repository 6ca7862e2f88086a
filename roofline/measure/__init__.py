"""The measuring side: everything that needs a GPU, a driver, NVRTC or Nsight Compute. CuPy is
imported inside functions only, so importing these modules stays cheap.

  nvml      the GPU in this machine: NVML peaks and CUDA per-SM limits
  progress  how long jobs report their steps
  timing    CUDA-event timing as data
  offline   compiling through NVRTC for any target, no GPU needed (registers, shared memory)
  compile   compiling for this GPU through CuPy
  runner    compile, verify against cuBLAS, time: the generic launcher of every kernel
  ceilings  the DRAM bandwidth and FP32 rate this GPU sustains (cached per GPU)
  counters  hardware counters through Nsight Compute
  tuning    the autotuned kernel's tile search
"""
