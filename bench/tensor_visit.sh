#!/bin/bash
# One device visit that remakes the tensor ladders' files of plots/ (and the FP32 ladder's counters)
# on the GPU it lands on, each written into $OUT/plots/ as it finishes and packed into $OUT/plots.tgz
# after every step (a call stopped at its limit returns what was done). Names carry the GPU's tag
# (h200, h100, ... as bench/ladder.sh takes it). After bench/gpu_visit.sh's set-up (PYTHONPATH
# holding the carried wheels and the checkout). Steps (default all, in this order):
#   counters  the tensor ladders at 8192^3 and the FP32 ladder at 4096^3 with --profile
#   runs      the BF16 ladder at 8192^3 three times and once with --energy
#   sweeps    the BF16 and TF32 ladders at 2048, 4096, 8192; the WMMA fixture beside the ladder
#   pm        the wgmma rungs and cuBLAS at 8192^3 under PM sampling (bench/pm_visit.sh), its reports
#   bash bench/tensor_visit.sh [STEP ...]
set -u
export PYTHONUNBUFFERED=1 COLUMNS=200
command -v roofline >/dev/null 2>&1 || roofline() { python3 -m roofline "$@"; }
tag=$(python3 -c "
from roofline.measure.nvml import from_nvml
from roofline.model.presets import find_preset, name_key
d = from_nvml(); p = find_preset(d.name)
print(p.aliases[0] if p and p.aliases else name_key(d.name))") || exit 2
dir=${OUT:?set OUT}/plots; mkdir -p "$dir"
pack() { tar czf "$OUT/plots.tgz" -C "$OUT" plots; }
step() { local name=$1; shift; local t0=$SECONDS
  "$@" > "$dir/$name.txt" 2>&1; echo "rc=$? took $((SECONDS - t0)) s" >> "$dir/$name.txt"; pack; }
for s in ${@:-counters runs sweeps pm}; do
  case $s in
    counters)
      step counters-bf16-8192 roofline run --ladder tensor --size 8192 --profile --out "$dir/counters-$tag-bf16-8192.json"
      step counters-tf32-8192 roofline run --ladder tensor --dtype tf32 --size 8192 --profile \
        --out "$dir/counters-$tag-tf32-8192.json"
      step counters-fp32-4096 roofline run --all --size 4096 --profile --out "$dir/counters-$tag-fp32-4096.json" ;;
    runs)
      for i in 1 2 3; do
        step run$i roofline run --ladder tensor --size 8192 --out "$dir/results-$tag-bf16-8192-run$i.json"
      done
      step energy roofline run --ladder tensor --size 8192 --energy --out "$dir/results-$tag-bf16-8192-energy.json" ;;
    sweeps)
      step sweep-bf16 roofline run --ladder tensor --sweep 2048,4096,8192 --out "$dir/results-$tag-bf16.json"
      step sweep-tf32 roofline run --ladder tensor --dtype tf32 --sweep 2048,4096,8192 --out "$dir/results-$tag-tf32.json"
      step wmma roofline run tests/fixtures/kernels/wmma_bf16.cu --all --ladder tensor --size 4096 \
        --out "$dir/results-$tag-bf16-wmma.json" ;;
    pm)
      step pm env PM_REPORTS=1 OUT=/tmp bash bench/pm_visit.sh "bf16 8192"
      cp /tmp/pm-bf16-8192.tgz "$OUT/" 2>/dev/null ;;
    *) echo "bench/tensor_visit.sh: unknown step '$s' (counters runs sweeps pm)" >&2; exit 2 ;;
  esac
done
