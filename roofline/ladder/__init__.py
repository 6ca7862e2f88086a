"""The SGEMM ladder: kernel families (one entry per kernel of roofline/kernels/), their CUDA sources, and
the choice of the tunable kernel's tile. Pure Python: compiling and running are `measure`'s.

  families  one `Family` per kernel: template, parameter names, launch shape, traffic model,
            minimum architecture; `KernelSpec` = a family at one tile
  sources   the .cu sources, with local includes inlined
  tiles     where the autotuned kernel's tile comes from (flag, tuned cache, built-in, default)
  dispatch  tile_by_shape's and split_k's choice per problem and GPU
  upgrade   what an older results file lacks and only the families can work out, filled in
  listing   the ladder (or the user's kernels) listed at one size for a target (`roofline kernels`)
  user      the user's own GEMM kernel: its file's `// roofline` lines (read by
            `roofline.declarations`, once, with the workload reader's), its launch and model
"""
