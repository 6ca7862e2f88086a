#!/usr/bin/env bash
# Reproduce the committed GPU results: measured ceilings, the tile search, the ladder at 4096^3
# with Nsight Compute counters, the size sweep, and the charts. Run from the repository root on a
# CUDA machine with roofline installed; STEP picks a part
# (tune, ladder, sweep, shapes, charts, user, profile; default all of them, in that order). `shapes`
# runs the ladder at four shapes that are not cubes (tall, deep, shallow, ragged). `user` runs the
# test suite's own-style kernel (tests/fixtures/kernels/tiled_f4.cu) beside the ladder and draws
# it; `profile` profiles one BF16 training step of examples/transformer_bf16.py (PyTorch needed)
# and draws it. `agreement` (not part of all: about five minutes) profiles the ladder through
# `roofline profile -- roofline run` and checks it against `roofline run --profile`.
#   bash bench/ladder.sh [NAME|auto] [STEP]
# NAME tags the files; without one (or with `auto`) it is this GPU's preset name (h200, a100-sxm4-80gb,
# ...) or, for a GPU without a preset, its name in lower case; with no GPU to ask, the script refuses.
set -euo pipefail
name="${1:-auto}"
step="${2:-all}"
case "$step" in
    all|tune|ladder|sweep|shapes|charts|user|profile|agreement) ;;
    *) echo "bench/ladder.sh: unknown step '$step'; steps: all tune ladder sweep shapes charts user profile agreement" >&2
       exit 2 ;;
esac
if [ "$name" = auto ]; then
    name="$("${PYTHON:-python3}" - <<'PY'
import sys
from roofline.measure.nvml import gpu_available
from roofline.model.presets import find_preset, name_key
if not gpu_available():
    sys.exit("bench/ladder.sh: no GPU to take the name from; give one: bash bench/ladder.sh NAME [STEP]")
import pynvml
pynvml.nvmlInit()
gpu = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
preset = find_preset(gpu)
print(preset.aliases[0] if preset and preset.aliases else name_key(gpu))
PY
)" || exit 2
    echo "bench/ladder.sh: files tagged '$name' (this GPU)"
fi
export PYTHONUNBUFFERED=1 COLUMNS=140
if [ "$step" = all ] || [ "$step" = tune ]; then
    roofline device --measure
    roofline run --tune --size 4096 --out "plots/tune-$name.json"
fi
if [ "$step" = all ] || [ "$step" = ladder ]; then
    roofline run --all --profile --out "plots/results-$name.json"
fi
if [ "$step" = all ] || [ "$step" = sweep ]; then
    roofline run --all --sweep 128,256,512,1024,2048,4096,8192 --out "plots/sweep-$name.json"
fi
if [ "$step" = all ] || [ "$step" = shapes ]; then
    roofline run --all --sweep 8192x1024x4096,1024x1024x16384,4096x4096x512,3000x3000x3000 \
        --out "plots/shapes-$name.json"
fi
if [ "$step" = all ] || [ "$step" = charts ]; then
    roofline plot "plots/results-$name.json" --out "plots/roofline-$name.png"
    roofline plot "plots/results-$name.json" --measured --out "plots/roofline-measured-$name.png"
    roofline plot "plots/sweep-$name.json" --kind sweep --out "plots/sweep-$name.png"
    roofline plot "plots/shapes-$name.json" --kind sweep --out "plots/shapes-$name.png"
    roofline plot "plots/tune-$name.json" --out "plots/tune-$name.png"
fi
if [ "$step" = all ] || [ "$step" = user ]; then
    roofline run tests/fixtures/kernels/tiled_f4.cu --all --out "plots/user-kernel-$name.json"
    roofline plot "plots/user-kernel-$name.json" --out "plots/user-kernel-$name.png"
fi
if [ "$step" = all ] || [ "$step" = profile ]; then
    start=$(date +%s)
    roofline profile --no-profile-from-start --out "plots/profile-$name-transformer.json" \
        -- "${PYTHON:-python3}" examples/transformer_bf16.py
    echo "the profile took $(( $(date +%s) - start )) s"
    roofline plot "plots/profile-$name-transformer.json" --out "plots/profile-$name-transformer.png"
fi
if [ "$step" = agreement ]; then
    tmp="$(mktemp -d)"
    regex="$("${PYTHON:-python3}" -c "from roofline.ladder import families, tiles
print('^(' + '|'.join(sorted({s.kernel_name for s in families.select(None, tiles.resolve(None, None))})) + ')$')")"
    roofline run --all --size 2048 --profile --out "$tmp/run-profile.json" >/dev/null
    roofline profile --kernel-regex "$regex" --launch-count 3000 --out "$tmp/profile.json" \
        -- roofline run --all --size 2048 --out "$tmp/under-ncu.json" >/dev/null
    "${PYTHON:-python3}" bench/profile_agreement.py "$tmp/run-profile.json" "$tmp/profile.json"
fi
