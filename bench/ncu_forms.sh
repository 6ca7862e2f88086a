#!/usr/bin/env bash
# Profile one program no one on this project wrote (examples/precisions.py: cuBLAS matrix products
# in seven precisions, a layer norm, GELU, an add, attention, a Triton kernel) and export the
# profile in every form Nsight Compute writes, for the report reader's tests:
#   roofline.json/.ncu-rep        roofline profile (its own metric list)
#   full.ncu-rep                  ncu --set full, exported as
#     full-raw.csv                  --page raw (display units)      full-raw-base.csv  (--print-units base)
#     full-details.csv              --page details (the default)    full-details-base.csv
#     full-details-all.csv          --page details --print-details all (the sections' bodies too),
#                                   the metric rows of the sections a roofline reads kept
#     full-ncurep.json              and read by `roofline profile --import` through ncu's Python module
#   section.ncu-rep               ncu --section SpeedOfLight_RooflineChart, as section-raw.csv,
#                                 section-details.csv and section-ncurep.json likewise
#   metrics-stdout.csv            ncu --metrics <a short list> --csv, as printed: the program's own
#                                 output and ncu's ==PROF== lines before and among the table
#   metrics-raw-stdout.csv        the same with --page raw
# with each run's wall time and ncu's log (replay passes per kernel) in times.txt and *.log.
#   bash bench/ncu_forms.sh OUTDIR [precisions.py options, e.g. --only gemm_bf16,gelu_bf16]
set -uo pipefail
out="${1:?usage: bash bench/ncu_forms.sh OUTDIR [--only NAMES]}"
shift
mkdir -p "$out"
prog=("${PYTHON:-python3}" examples/precisions.py "$@")
common=(--clock-control none --target-processes all --profile-from-start off -f)
short="gpu__time_duration.sum,dram__bytes.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"
short="$short,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,launch__registers_per_thread"

timed() {  # NAME COMMAND...: run it, log its output to OUTDIR/NAME.log, its wall time to times.txt
    local name="$1"; shift
    local t0=$(date +%s%N)
    "$@" > "$out/$name.log" 2>&1
    local rc=$?
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "$name $((ms / 1000)).$(printf %03d $((ms % 1000))) s, exit $rc" | tee -a "$out/times.txt"
}
export_csv() {  # REPORT BASE: the report as raw and details CSV, display and base units
    ncu --import "$1" --csv --page raw > "$2-raw.csv"
    ncu --import "$1" --csv --page raw --print-units base > "$2-raw-base.csv"
    ncu --import "$1" --csv > "$2-details.csv"
    ncu --import "$1" --csv --print-units base > "$2-details-base.csv"
}

timed plain "${prog[@]}"
timed roofline roofline profile --no-profile-from-start --report "$out/roofline.ncu-rep" --out "$out/roofline.json" \
    -- "${prog[@]}"
timed full ncu "${common[@]}" --set full -o "$out/full" "${prog[@]}"
timed section ncu "${common[@]}" --section SpeedOfLight_RooflineChart -o "$out/section" "${prog[@]}"
export_csv "$out/full.ncu-rep" "$out/full"
export_csv "$out/section.ncu-rep" "$out/section"
ncu --import "$out/full.ncu-rep" --csv --print-details all | "${PYTHON:-python3}" -c '
import csv, sys
keep = {"GPU Speed Of Light Throughput", "Launch Statistics", "Occupancy", "GPU Speed Of Light Roofline Chart",
        "GPU Speed Of Light Hierarchical Roofline Chart (Single Precision)",
        "GPU Speed Of Light Hierarchical Roofline Chart (Double Precision)"}
rows = [r for r in csv.reader(sys.stdin) if r]
start = next(i for i, r in enumerate(rows) if r[0] == "ID")
out = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
out.writerows([rows[start]] + [r for r in rows[start + 1:] if len(r) > 13 and r[11] in keep and r[13]])
' > "$out/full-details-all.csv"
roofline profile --import "$out/full.ncu-rep" --out "$out/full-ncurep.json" > /dev/null
roofline profile --import "$out/section.ncu-rep" --out "$out/section-ncurep.json" > /dev/null
ncu --clock-control none --profile-from-start off --metrics "$short" --csv "${prog[@]}" > "$out/metrics-stdout.csv" 2>&1
ncu --clock-control none --profile-from-start off --metrics "$short" --csv --page raw "${prog[@]}" \
    > "$out/metrics-raw-stdout.csv" 2>&1
grep -h "passes" "$out"/*.log | sed 's/^/  /' >> "$out/times.txt" || true
