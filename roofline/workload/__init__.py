"""Workloads: kernels of any signature and Python callables, declared (`spec`: a .cu file's
`// roofline` lines, read by `roofline.declarations` as the GEMM reader reads them, or a TOML
spec file), with arithmetic over their named sizes (`expr`); run and graded by `measure.graded`
(in `measure.graded_child`)."""
