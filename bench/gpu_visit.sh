#!/bin/bash
# One visit of the device machine (its `run` tool, carrying .whl/: the wheels of pydantic, typer, plotly and
# jsonschema for Python 3.12, fetched with pip download): install them, with TRACE=1 trace a real run and a graded
# run (tools/layer_trace.py), then the GPU tests named, e.g.
#   TRACE=1 bash bench/gpu_visit.sh tests/test_gpu.py tests/test_gpu_tensor.py
#   bash bench/gpu_visit.sh tests/test_gpu_grade.py tests/test_profile_gpu.py tests/test_trial_measure.py
# Each result is written under $OUT as it finishes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > $OUT/gpu.txt 2>&1
if [ -n "$TRACE" ]; then
( time timeout ${TRACE_LIMIT:-200} python3 tools/layer_trace.py run --kernel naive --kernel warptiling --size 2048 --out /tmp/r.json ) > $OUT/trace_run.txt 2>&1
( time timeout ${TRACE_LIMIT:-200} python3 tools/layer_trace.py run examples/grade/softmax_online.cu examples/grade/softmax_naive.cu --baseline softmax_naive --out /tmp/g.json ) > $OUT/trace_grade.txt 2>&1
python3 -m roofline show /tmp/g.json >> $OUT/trace_grade.txt 2>&1
fi
timeout ${LIMIT:-540} python3 -m pytest -p no:cacheprovider -o addopts="" -n 0 -m gpu -q --durations=15 --timeout 200 "$@" > $OUT/gpu_tests.txt 2>&1
echo "rc=$?" >> $OUT/gpu_tests.txt
