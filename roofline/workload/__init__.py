"""Workloads: kernels of any signature and Python callables, declared (`spec`: a .cu file's
`// roofline` lines, read by `roofline.declarations` as the GEMM reader reads them, or a TOML
spec file), with arithmetic over their named sizes (`expr`); run and graded by `measure.graded`
(in `measure.graded_child`). Problems in a kernel benchmark's format (`problem`: a PyTorch `Model`
with `get_inputs()` and `get_init_inputs()`, a candidate's `ModelNew`), their shapes, work and
compulsory bytes read from the reference itself on PyTorch's meta device, each byte a source's
ops read counted once (`regions`), a causal mask written out counting the products it keeps
(`masks`), read by its geometry or from its values where they are made of numbers alone
(`shadows`). GPU MODE's tasks (`gpumode`: `reference.py` with `generate_input` and `ref_kernel`,
`task.yml`'s cases, a submission's `custom_kernel`) read as such problems, a problem per case; a
file written for a GPU read without one (`off_gpu`)."""
