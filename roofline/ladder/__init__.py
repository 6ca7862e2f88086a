"""The SGEMM ladder: kernel families (one entry per kernel of roofline/kernels/), their CUDA sources, and
the choice of the tunable kernel's tile. Pure Python: compiling and running are `measure`'s.

  families  one `Family` per kernel: template, parameter names, launch shape, traffic model,
            minimum architecture; `KernelSpec` = a family at one tile
  sources   the .cu sources, with local includes inlined
  tiles     where the autotuned kernel's tile comes from (flag, tuned cache, built-in, default)
"""
