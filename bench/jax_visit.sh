#!/bin/bash
# One visit of the device machine for a JAX program's ops: examples/ops/jax_step.py profiled with
# ops on (ncu --nvtx: XLA's own ranges where it emits them, TF_ENABLE_NVTX_RANGES), with XLA's
# optimized HLO dumped beside it (each fusion's metadata names the jax op and named_scope), packed
# into $OUT/jax.tgz. After bench/gpu_visit.sh's set-up (PYTHONPATH).
set -u
d=/tmp/ops-jax; mkdir -p $d/xla
{
  python3 -c "import jax, jaxlib; print(jax.__version__, jaxlib.__version__, jax.devices())"
  XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_dump_to=$d/xla --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$" TF_ENABLE_NVTX_RANGES=1 \
    TF_ENABLE_NVTX_RANGES_DETAILED=1 python3 -m roofline profile --no-profile-from-start --report $d/jax.ncu-rep \
    --out $d/jax.json -- python3 examples/ops/jax_step.py
  python3 bench/nvtx_stacks.py $d/jax.ncu-rep $d/jax-nvtx.json.gz "examples/ops/jax_step.py, profiled on an $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) by bench/jax_visit.sh"
  python3 -m roofline show $d/jax.json
} > $d/jax.log 2>&1
rm -f $d/jax.ncu-rep
find $d/xla -name "*after_optimizations*" -o -name "*.txt" | head -50 >> $d/jax.log
tar czf $OUT/jax.tgz -C /tmp ops-jax
