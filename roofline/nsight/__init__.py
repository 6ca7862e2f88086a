"""Nsight Compute's reports in every form people have, read into one document of launches; and
ncu itself, run. Along the data's path:

  run       ncu and the tools beside it run (profiling, a binary report exported, c++filt):
            the one module that runs ncu
  compression  reports kept gzip-, xz- or bzip2-compressed, unpacked
  binary    the `.ncu-rep`, through NVIDIA's `ncu_report` (in a child Python process), else ncu's
            export
  dialect   the CSV dialect: encodings, separators, decimal marks, units
  pages     the raw and details pages of a CSV export
  text      ncu's text output (`ncu ./app`, `ncu -i REPORT`), as the details page it prints
  rows      one row per launch, whatever the form
  sampling  a launch's counters sampled over its run (PM sampling), read from a binary report
  checks    damaged figures: the launch left out, the others read
  metrics   the vocabulary: which metrics give each figure, in every spelling
  names     kernel names people recognise
  launches  rows as launches with roofline figures, and launches grouped into kernels
  device    the GPU a report names, or the one --gpu gives
  reader    `read(path, gpu)`: one report, read whole

`read` and `Report` are the package's face: `from roofline import nsight; nsight.read(path)`.
"""

from .reader import NoLaunches, Report, read, read_rows

__all__ = ["NoLaunches", "Report", "read", "read_rows"]
