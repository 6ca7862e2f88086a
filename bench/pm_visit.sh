#!/bin/bash
# One visit of the device machine for kernels' counters over time (a kernel's roofline over time):
# each ladder kernel named launched once under ncu with the PmSampling sections and roofline's
# whole-kernel metrics; per precision and size, the launches' aligned series (bench/pm_series.py)
# into $OUT/pm-DTYPE-SIZE.json.gz as each finishes (PM_REPORTS=1: the reports too, as .tgz;
# PM_INFO=1: what this ncu offers for PM sampling, in $OUT/pm-ncu.txt). After bench/gpu_visit.sh's
# set-up (PYTHONPATH).
#   bash bench/pm_visit.sh "bf16 8192" "fp32 4096 warptiling smem_tiling"
set -u
if [ -n "${PM_INFO:-}" ]; then
  { ncu --version; ncu --list-sections; ncu --help | grep -i -A3 "pm-sampling"; } > $OUT/pm-ncu.txt 2>&1
fi
metrics=$(python3 -c "from roofline.nsight.metrics import COLLECT; print(','.join(COLLECT))")
profile() {  # NAME KERNEL-REGEX COMMAND...: one launch under ncu with PM sampling, into $d/NAME.ncu-rep
  local name=$1 regex=$2; shift 2
  ( time timeout 120 ncu --clock-control none --section PmSampling --section PmSampling_WarpStates \
      --section SpeedOfLight --metrics "$metrics" -k "regex:$regex" --launch-count 1 \
      -o $d/$name -f "$@" ) > $d/$name.log 2>&1
}
for job in "$@"; do
  set -- $job; dtype=$1; size=$2; shift 2
  d=/tmp/pm-$dtype-$size; mkdir -p $d
  python3 bench/pm_probe.py $dtype $size $d "$@" > $d/commands.tsv 2> $d/probe.err
  while IFS=$'\t' read -r name kernel command; do
    readarray -t argv < <(python3 -c "import json,sys; print('\n'.join(json.loads(sys.argv[1])))" "$command")
    profile $name "^$kernel\$" "${argv[@]}"
  done < $d/commands.tsv
  if [ "$dtype" != fp32 ]; then  # cuBLAS's kernel for the same problem, through PyTorch
    t=$([ "$dtype" = tf32 ] && echo float32 || echo bfloat16)
    profile cublas "nvjet|gemm|cutlass" python3 -c "import torch; torch.backends.cuda.matmul.allow_tf32 = True; a = torch.randn($size, $size, dtype=torch.$t, device='cuda'); b = a @ a; torch.cuda.synchronize()"
  else
    profile cublas "gemm|sgemm|cutlass|nvjet" python3 -c "import torch; torch.backends.cuda.matmul.allow_tf32 = False; a = torch.randn($size, $size, device='cuda'); b = a @ a; torch.cuda.synchronize()"
  fi
  python3 bench/pm_series.py $OUT/pm-$dtype-$size.json.gz "ladder kernels at $size^3 in $dtype, one launch each under ncu --section PmSampling on an H200 (bench/pm_visit.sh)" $d/*.ncu-rep > $d/series.log 2>&1
  [ -z "${PM_REPORTS:-}" ] || tar czf $OUT/pm-$dtype-$size.tgz -C /tmp pm-$dtype-$size
done
