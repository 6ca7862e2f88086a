"""The measuring side: everything that needs a GPU, a driver or NVRTC. CuPy is
imported inside functions only, so importing these modules stays cheap.

  nvml           the GPU in this machine: NVML peaks and CUDA per-SM limits
  timing         CUDA-event timing as data
  nvrtc_compile  one kernel compiled through NVRTC for any target, no GPU needed: ptxas's report
                 (registers, local and shared memory), dynamic shared memory, the launch check
  compile_pool   each kernel compiled in a process of its own, forked from one server per process
  compile_cache  compiled figures kept, in the process and on disk
  compile        compiling for this GPU through CuPy
  runner         compile, verify against cuBLAS, time: the generic launcher of every kernel
  ceilings       what this GPU sustains: DRAM, L2, shared memory, FP32, FP16 tensor (cached per GPU)
  counters       hardware counters of one ladder or user kernel through Nsight Compute (run
                 --profile; ncu is run and read by `nsight`)
  tuning         the autotuned kernel's tile search
"""
