"""The ladders' CUDA sources: one kernel per `.cu` file, shared code in `.cuh` headers. Read as
text by `roofline.ladder.sources` and compiled at run time; nothing here is Python."""
