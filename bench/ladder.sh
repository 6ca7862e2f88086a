#!/usr/bin/env bash
# Reproduce the committed GPU results in one run: measured ceilings, the tile search, the ladder at
# 4096^3 with Nsight Compute counters, the size sweep, and the charts. Run from the repository
# root on a CUDA machine with roofline installed; NAME tags the files (default: h200).
#   bash bench/ladder.sh [NAME]
set -euo pipefail
name="${1:-h200}"
export PYTHONUNBUFFERED=1
roofline device --measure
roofline tune --size 4096 --out "plots/tune-$name.json"
roofline run --all --profile --out "plots/results-$name.json"
roofline run --all --sizes 128,256,512,1024,2048,4096,8192 --out "plots/sweep-$name.json"
roofline plot --results "plots/results-$name.json" --out "plots/roofline-$name.png"
roofline plot --results "plots/results-$name.json" --measured --out "plots/roofline-measured-$name.png"
roofline plot --results "plots/sweep-$name.json" --kind sweep --out "plots/sweep-$name.png"
