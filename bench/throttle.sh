#!/usr/bin/env bash
# The timing under power capping, on a CUDA machine with roofline installed: the sampling's cost,
# three BF16 ladder runs at 8192^3 made one after another, and the FP32 ladder at 4096^3 (the
# files issue 31's figures come from). Writes into the folder given (default plots/).
#   bash bench/throttle.sh [OUT_DIR] [overhead|bf16|fp32|energy|all]
set -uo pipefail
out="${1:-plots}"
part="${2:-all}"
py="${PYTHON:-python3}"
mkdir -p "$out"
if [ "$part" = overhead ] || [ "$part" = all ]; then
    "$py" bench/sampling_overhead.py --out "$out/sampling-overhead-h200.json"
fi
if [ "$part" = bf16 ] || [ "$part" = all ]; then
    for i in 1 2 3; do
        SECONDS=0
        roofline run --ladder tensor --size 8192 --out "$out/results-h200-bf16-8192-run$i.json"
        echo "run$i: $SECONDS s"
    done
fi
if [ "$part" = fp32 ] || [ "$part" = all ]; then
    SECONDS=0
    roofline run --all --size 4096 --out "$out/results-h200.json"
    echo "fp32 run --all 4096: $SECONDS s"
fi
if [ "$part" = energy ] || [ "$part" = all ]; then
    roofline run --ladder tensor --size 8192 --energy --out "$out/results-h200-bf16-8192-energy.json"
fi
