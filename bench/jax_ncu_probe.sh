#!/bin/bash
# Which ncu setting lets a JAX step live under Nsight Compute (docs/profiling.md, "A JAX program that
# crashes under ncu"): examples/ops/jax_step.py under plain ncu three times each way, following child
# processes or not, with ncu's cache control and replay mode changed. One line per try: exit code,
# seconds, launches profiled. After bench/gpu_visit.sh's set-up (PYTHONPATH); writes $OUT/jax_ncu_probe.txt.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
o=${OUT:?set OUT}/jax_ncu_probe.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$o" 2>&1
ncu --version | tail -1 >> "$o"
try() { local tag=$1 tp=$2; shift 2; for i in 1 2 3; do local t0=$SECONDS
  timeout 60 ncu --clock-control none --target-processes "$tp" --profile-from-start off -o /tmp/probe -f "$@" \
    python3 examples/ops/jax_step.py > "/tmp/$tag.log" 2>&1
  echo "$tag try $i: rc=$? in $((SECONDS - t0)) s $(grep -c '==PROF== Profiling' "/tmp/$tag.log") profiled" >> "$o"; done; }
try children all
try own-process application-only
try children-no-cache-control all --cache-control none
try children-application-replay all --replay-mode application
