#!/bin/bash
# One visit of the device machine for the operator roofline (docs/profiling.md): three public models'
# training steps (examples/ops/step.py: Hugging Face Llama, torchvision ResNet, PyTorch Geometric GCN)
# profiled with their ops and modules recorded, the same step recorded by PyTorch's profiler and read
# beside the report (each op's time in the program), and one profile without ops for the cost of
# attribution. Each model's files go into $OUT/MODEL.tgz as it finishes.
#   bash bench/ops_visit.sh [MODEL ...]      (after bench/gpu_visit.sh's set-up: PYTHONPATH; COST_MODEL=gcn)
set -u
models=${*:-gcn llama resnet}
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
python3 -c "import torch, torchvision, transformers, torch_geometric; print(torch.__version__, transformers.__version__, torch_geometric.__version__)" > "$OUT/versions.txt" 2>&1
for m in $models; do
  d=/tmp/ops-$m; mkdir -p $d
  {
    t0=$(now)
    python3 -m roofline profile --no-profile-from-start --report $d/$m.ncu-rep --out $d/$m.json -- python3 examples/ops/step.py $m
    echo "wall $(since $t0) s: profile with ops"
    python3 examples/ops/step.py $m --trace $d/$m-trace.json.gz
    python3 -m roofline profile --import $d/$m.ncu-rep --trace $d/$m-trace.json.gz --out $d/$m-program.json
    python3 -m roofline show $d/$m.json --by op
    python3 -m roofline show $d/$m-program.json --by op
    python3 -m roofline show $d/$m.json --by module
    python3 bench/nvtx_stacks.py $d/$m.ncu-rep $d/$m-nvtx.json.gz "examples/ops/step.py $m, profiled on an $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) by bench/ops_visit.sh"
  } > $d/$m.log 2>&1
  rm -f $d/$m.ncu-rep  # ~100 MB: the stacks above and the profile hold what the tests read
  tar czf "$OUT/$m.tgz" -C /tmp ops-$m
done
m=${COST_MODEL:-gcn}  # the profile without ops, for the cost of attribution ('none': skipped)
[ "$m" = none ] || {
  t0=$(now)
  python3 -m roofline profile --no-ops --no-profile-from-start --out /tmp/plain.json -- python3 examples/ops/step.py $m
  echo "wall $(since $t0) s: profile without ops"
} > "$OUT/cost-$m.log" 2>&1
