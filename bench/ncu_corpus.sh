#!/usr/bin/env bash
# The corpus of real Nsight Compute reports the report reader is tested on: each program of
# examples/corpus.py (library kernels no one on this project wrote) profiled over one step
# (--profile-from-start off, at most LAUNCHES launches) by
#   roofline.json                     roofline profile (its own metric list): what each form must agree with
#   full.ncu-rep                      ncu --set full
#   basic.ncu-rep                     ncu with its default set
#   rooflineset.ncu-rep               ncu --set roofline
# and each report exported in every form people have:
#   SET-raw.csv, SET-raw-base.csv             --csv --page raw, in display units and in base units
#   SET-details.csv, SET-details-all.csv      --csv (the details page), and with --print-details all
#   SET.txt, SET-all.txt                      ncu's text output, and with --print-details all
# plus basic-live.txt: ncu's text output of the run itself, the program's own output around it.
# Each program's folder is packed as OUTDIR/NAME.tar.xz as soon as it is done; every step has a
# time limit, and no step starts after DEADLINE seconds (a lent GPU's command has a limit).
#   bash bench/ncu_corpus.sh OUTDIR NAME...       (names: python examples/corpus.py --list)
set -uo pipefail
out="${1:?usage: bash bench/ncu_corpus.sh OUTDIR NAME...}"
shift
launches="${LAUNCHES:-30}"
deadline=$(( $(date +%s) + ${DEADLINE:-100000} ))
py="${PYTHON:-python3}"
work=$(mktemp -d)
common=(--clock-control none --target-processes all --profile-from-start off --launch-count "$launches" -f)
step() {  # LIMIT NAME DIR COMMAND...: run it with a time limit, its output in DIR/NAME.log, its time in DIR/info.txt
    local limit=$1 name=$2 d=$3; shift 3
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "$name: skipped (deadline)" >> "$d/info.txt"; return; fi
    local t0=$(date +%s)
    timeout "$limit" "$@" > "$d/$name.log" 2>&1
    echo "$name: exit $?, $(( $(date +%s) - t0 )) s" >> "$d/info.txt"
}
for name in "$@"; do
    d="$work/$name"
    mkdir -p "$d"
    prog=("$py" examples/corpus.py "$name")
    { ncu --version | tail -1; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$d/info.txt"
    step 90 roofline "$d" roofline profile --no-profile-from-start --launch-count "$launches" \
        --out "$d/roofline.json" -- "${prog[@]}"
    step 120 full "$d" ncu "${common[@]}" --set full -o "$d/full" "${prog[@]}"
    step 60 basic "$d" ncu "${common[@]}" -o "$d/basic" "${prog[@]}"
    step 90 rooflineset "$d" ncu "${common[@]}" --set roofline -o "$d/rooflineset" "${prog[@]}"
    step 60 basic-live "$d" ncu --clock-control none --profile-from-start off --launch-count "$launches" "${prog[@]}"
    [ -f "$d/basic-live.log" ] && mv "$d/basic-live.log" "$d/basic-live.txt"
    for set in full basic rooflineset; do
        r="$d/$set"
        [ -f "$r.ncu-rep" ] || continue
        echo "ncu -i $r.ncu-rep --csv --page raw > $r-raw.csv"
        echo "ncu -i $r.ncu-rep --csv --page raw --print-units base > $r-raw-base.csv"
        echo "ncu -i $r.ncu-rep --csv > $r-details.csv"
        echo "ncu -i $r.ncu-rep --csv --print-details all > $r-details-all.csv"
        echo "ncu -i $r.ncu-rep > $r.txt"
        echo "ncu -i $r.ncu-rep --print-details all > $r-all.txt"
    done | xargs -P "$(nproc)" -I{} sh -c '{}'
    du -sh "$d"/* >> "$d/info.txt"
    tar -C "$work" -cf - "$name" | xz -T0 -6 > "$out/$name.tar.xz"
    cat "$d/info.txt"
done
