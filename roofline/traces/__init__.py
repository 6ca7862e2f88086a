"""Traces of programs as they ran (no replay), read into kernels and collectives.

  kineto      PyTorch profiler traces (Kineto's Chrome trace JSON, one per rank): every kernel with
              its start, duration, GPU and stream, and each NCCL kernel's collective and message
  ops         who launched each kernel of a trace: its op (the outermost dispatcher op around the
              launch), forward, backward (owned by the forward op its autograd node differentiates)
              or optimizer, its module where the trace names one; GPU time summed by op
  nvtx        who launched each kernel of a profile, from the NVTX ranges Nsight Compute recorded
              around its launch (`profile --ops`): op, phase and module, read as `ops` reads a trace
  join        a trace joined to a profile of the same step (`profile --import --trace`): each
              launch owned as the trace's kernel it lines up with
  hlo         who launched each kernel of a JAX (XLA) program: the HLO instruction its launch lines
              up with, and the jax op, phase and named_scope path of that instruction's metadata
  nccl_tests  nccl-tests' printed output (`all_reduce_perf`, ...): per message size the time, algbw
              and busbw, the reference a program's collectives are read against
"""
