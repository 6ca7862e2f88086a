#!/usr/bin/env bash
# Reproduce the committed GPU results: measured ceilings, the tile search, the ladder at 4096^3
# with Nsight Compute counters, the size sweep, and the charts. Run from the repository root on a
# CUDA machine with roofline installed; NAME tags the files (default: h200); STEP picks a part
# (tune, ladder, sweep, charts, user; default all of them, in that order). `user` runs the test
# suite's own-style kernel (tests/fixtures/kernels/tiled_f4.cu) beside the ladder and draws it.
#   bash bench/ladder.sh [NAME] [STEP]
set -euo pipefail
name="${1:-h200}"
step="${2:-all}"
export PYTHONUNBUFFERED=1 COLUMNS=140
if [ "$step" = all ] || [ "$step" = tune ]; then
    roofline device --measure
    roofline tune --size 4096 --out "plots/tune-$name.json"
fi
if [ "$step" = all ] || [ "$step" = ladder ]; then
    roofline run --all --profile --out "plots/results-$name.json"
fi
if [ "$step" = all ] || [ "$step" = sweep ]; then
    roofline run --all --sizes 128,256,512,1024,2048,4096,8192 --out "plots/sweep-$name.json"
fi
if [ "$step" = all ] || [ "$step" = charts ]; then
    roofline plot --results "plots/results-$name.json" --out "plots/roofline-$name.png"
    roofline plot --results "plots/results-$name.json" --measured --out "plots/roofline-measured-$name.png"
    roofline plot --results "plots/sweep-$name.json" --kind sweep --out "plots/sweep-$name.png"
fi
if [ "$step" = all ] || [ "$step" = user ]; then
    roofline run --source tests/fixtures/kernels/tiled_f4.cu --all --out "plots/user-kernel-$name.json"
    roofline plot --results "plots/user-kernel-$name.json" --out "plots/user-kernel-$name.png"
fi
