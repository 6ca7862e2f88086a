"""The measuring side: everything that needs a GPU, a driver or NVRTC. CuPy is
imported inside functions only, so importing these modules stays cheap.

  nvml             the GPU in this machine: NVML peaks and CUDA per-SM limits
  timing           CUDA-event timing as data; the L2 flush; the hold ahead of timed bursts
  rounds           kernels and their reference timed alike, in rounds, each sample with its clock
  waiting          a launch waited for up to its time; past it, `LaunchTimeout` ends the process
  pipeline         what every timed Subject (ladder rung, user GEMM kernel, workload kernel,
                   callable) goes through in either path: the one call of the rounds (`time_items`)
  nvrtc_compile    one kernel compiled through NVRTC for any target, no GPU needed: ptxas's report
                   (registers, local and shared memory), dynamic shared memory, the launch check
  nvcc_compile     a user's kernel file compiled whole by the CUDA toolkit's nvcc: its cubin, the
                   entry's mangled name in it, ptxas's report
  toolchain        which compiler builds a kernel (NVRTC; nvcc for a user's file where a toolkit
                   is found, or as its settings ask) and the figures it gives
  compile_pool     each kernel compiled in a process of its own, forked from one server per process
                   (a `roofline.child`)
  compile_cache    compiled figures kept, in the process and on disk
  compile          compiling for this GPU (through CuPy, or nvcc's cubin loaded by CuPy)
  reference        cuBLAS, the reference of every GEMM, and the inputs it and the kernels share
  tma              the tensor maps the wgmma rungs load through (the CUDA driver, through ctypes)
  runner           compile, verify against cuBLAS, time: the ladder's kernels in this process
  isolated         a user's GEMM kernel compiled, verified and timed in a child process
                   (`roofline.child`), its faults and hangs its own
  buffers          a workload's buffers: drawn, poisoned with NaN, as a kernel, a reference or a
                   callable takes them
  graded           a workload's kernel or callable built, checked on several draws, timed, its
                   integrity flags' evidence
  candidate        a kernel benchmark's candidate (ModelNew) against its reference on several draws:
                   outputs compared, and the flags of a view handed back, an input written, a lazy or
                   narrower output, a replayed answer (on the GPU, or the CPU)
  problem_grade    a problem's reference and candidates checked and timed on the GPU, each call on
                   inputs of its own (`run problem.py new.py`)
  problem_child    a problem's reference or one candidate graded in a process of its own, its answer
                   carrying a token the parent drew
  sums             the sums a check compares two outputs by, in one pass over both on the GPU
  activity         the kernels a timed call launched, on any stream or thread, from CUPTI's activity
                   records (cupti-python), beside its events
  l2_persist       the L2's persisting lines reset, the set-aside put back to 0 and the streams'
                   access policy windows taken off ahead of each timed call, so no line outlives
                   the flush (through the driver)
  graded_child     each graded workload in a child process (`roofline.child`), and once under ncu
                   for a graded `run --profile`
  ceilings         what this GPU sustains: DRAM, L2, shared memory, FP32, FP16 tensor (cached per GPU)
  energy           a kernel's energy from NVML's total energy counter, in loops, in rounds
  energy_ceilings  the board's power at several loads, fitted to energy per FLOP and per byte
  counters         hardware counters of one ladder or user kernel through Nsight Compute (run
                   --profile; ncu is run and read by `nsight`; the launch a `roofline.child`)
  tuning           the autotuned kernel's tile search
"""
