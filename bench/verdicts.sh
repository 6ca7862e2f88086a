#!/bin/bash
# One visit of the device machine for the verdicts (docs/model.md), after bench/gpu_visit.sh's set-up
# (PYTHONPATH holding the carried wheels and the checkout): the tensor ladders at 8192^3 and the FP32
# ladder at 4096^3 with Nsight Compute's counters, each file under $OUT as it finishes, then
# bench/verdict_agreement.py on them (the roof named with and without the counters; modelled
# against counted DRAM bytes). The files replace plots/counters-h200-*.json once read.
#   bash bench/verdicts.sh
set -u
run() { timeout "${LIMIT:-900}" python3 -m roofline run "$@" >> "$OUT/verdicts.log" 2>&1; echo "rc=$? $*" >> "$OUT/verdicts.log"; }
run --ladder tensor --size 8192 --profile --out "$OUT/counters-h200-bf16-8192.json"
run --ladder tensor --dtype tf32 --size 8192 --profile --out "$OUT/counters-h200-tf32-8192.json"
run --all --size 4096 --profile --out "$OUT/counters-h200-fp32-4096.json"
python3 bench/verdict_agreement.py "$OUT"/counters-*.json > "$OUT/agreement.txt" 2>&1
echo "rc=$?" >> "$OUT/agreement.txt"
