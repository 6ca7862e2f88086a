#!/bin/bash
# One visit of the device machine for kernels' counters over time (issue: a kernel's roofline over
# time): what ncu offers for PM sampling on this GPU, then each ladder kernel named launched once under
# ncu with the PmSampling sections and roofline's whole-kernel metrics, the reports packed into
# $OUT/pm-DTYPE-SIZE.tgz as each precision finishes. After bench/gpu_visit.sh's set-up (PYTHONPATH).
#   bash bench/pm_visit.sh "bf16 8192" "fp32 4096 warptiling smem_tiling"
set -u
ncu --version > $OUT/pm-ncu.txt 2>&1
ncu --list-sections >> $OUT/pm-ncu.txt 2>&1
ncu --help 2>&1 | grep -i -A3 "pm-sampling" >> $OUT/pm-ncu.txt
sections=$(dirname "$(readlink -f "$(which ncu)")")/sections
ls "$sections" >> $OUT/pm-ncu.txt 2>&1
for s in PmSampling PmSampling_WarpStates; do echo "== $s.section"; cat "$sections/$s.section"; done >> $OUT/pm-ncu.txt 2>&1
metrics=$(python3 -c "from roofline.nsight.metrics import COLLECT; print(','.join(COLLECT))")
for job in "$@"; do
  set -- $job; dtype=$1; size=$2; shift 2
  d=/tmp/pm-$dtype-$size; mkdir -p $d
  python3 bench/pm_probe.py $dtype $size $d "$@" > $d/commands.tsv 2> $d/probe.err
  while IFS=$'\t' read -r name kernel command; do
    readarray -t argv < <(python3 -c "import json,sys; print('\n'.join(json.loads(sys.argv[1])))" "$command")
    ( time timeout 120 ncu --clock-control none --section PmSampling --section PmSampling_WarpStates \
        --section SpeedOfLight --metrics "$metrics" -k "regex:^$kernel\$" --launch-count 1 \
        -o $d/$name -f "${argv[@]}" ) > $d/$name.log 2>&1
    python3 -m roofline profile --import $d/$name.ncu-rep --out $d/$name.json >> $d/$name.log 2>&1
  done < $d/commands.tsv
  if [ "$dtype" = bf16 ]; then  # cuBLAS's kernel for the same problem, through PyTorch
    ( time timeout 120 ncu --clock-control none --section PmSampling --section PmSampling_WarpStates \
        --section SpeedOfLight --metrics "$metrics" -k "regex:nvjet|gemm|cutlass" --launch-count 1 \
        -o $d/cublas -f python3 -c "import torch; a = torch.randn($size, $size, dtype=torch.bfloat16, device='cuda'); b = a @ a; torch.cuda.synchronize()" ) > $d/cublas.log 2>&1
  fi
  tar czf $OUT/pm-$dtype-$size.tgz -C /tmp pm-$dtype-$size
done
