"""Decisions over results documents, read from the file alone (`results`).

  work           what a kernel's work and reading are, in any file; kernels matched across files
  compare        what changed between two files, kernel by kernel
  check          whether that fails a gate (`compare --max-drop`)
  grade_changes  two grade files: compare and gate, entry by entry
  whatif         each kernel at a fraction of its roof; fusion
  project        the same work on another GPU
  comms          every rank's step: exposed communication, bus bandwidth, ranks side by side
  owners         a profile's GPU time, work and floors by the op or the module that launched its kernels
  problems       problems in a kernel benchmark's format: their work, bytes and speed of light on a GPU"""
