#!/bin/bash
# One visit of the device machine for kernels over their runs (docs/timeline.md): three public models'
# training steps (examples/ops/step.py) profiled with --timeline, the same step without it for the
# cost, and the op profiles with a trace beside them (profile --import REPORT --trace TRACE: each
# op's time in the program). Each model's files go into $OUT/tl-MODEL.tgz as it finishes.
#   bash bench/timeline_visit.sh [MODEL ...]   (after bench/gpu_visit.sh's set-up: PYTHONPATH; ncu_report
#                                              2025.4 or newer importable: pip install --target the wheel)
# PLAIN=0 leaves out the profile without --timeline (the cost), OPS=0 the trace and the op profile.
set -u
models=${*:-gcn llama resnet}
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
python3 -c "import ncu_report; print('timelines' if hasattr(ncu_report.IAction, 'timelines') else 'NO timelines')" \
  > "$OUT/ncu_report.txt" 2>&1
for m in $models; do
  d=/tmp/tl-$m; mkdir -p $d
  {
    t0=$(now)
    python3 -m roofline profile --no-profile-from-start --timeline --report $d/$m.ncu-rep --out $d/$m.json \
      -- python3 examples/ops/step.py $m
    echo "wall $(since $t0) s: profile with --timeline"
    python3 -m roofline show $d/$m.json
    python3 -m roofline plot $d/$m.json --kind timeline --out $d/$m-timeline.png
    if [ "${PLAIN:-1}" != 0 ]; then
      t0=$(now)
      python3 -m roofline profile --no-profile-from-start --out $d/$m-plain.json -- python3 examples/ops/step.py $m
      echo "wall $(since $t0) s: profile without it"
    fi
    if [ "${OPS:-1}" != 0 ]; then
      python3 examples/ops/step.py $m --trace $d/$m-trace.json.gz
      python3 -m roofline profile --import $d/$m.ncu-rep --trace $d/$m-trace.json.gz --out $d/$m-program.json
      python3 -m roofline show $d/$m-program.json --by op
    fi
  } > $d/$m.log 2>&1
  rm -f $d/$m.ncu-rep
  tar czf "$OUT/tl-$m.tgz" -C /tmp tl-$m
done
