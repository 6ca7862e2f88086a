"""Workloads: kernels of any signature and Python callables, declared (`spec`), with arithmetic
over their named sizes (`expr`); run and graded by `measure.graded`."""
