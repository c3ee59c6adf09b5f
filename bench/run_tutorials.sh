#!/usr/bin/env bash
# The torch.func tutorials' workloads side by side, one command:
#   bench/run_tutorials.sh
# builds bench_tutorials (Release, in $FUNCGEN_BUILD_DIR or build), runs it, then the same
# workloads in torch.func (Debian's python3-torch) and in JAX with jax.jit (jax and jaxlib from
# PyPI, in a virtual environment under the build directory made on first use; never a dependency
# of the build or the tests), each pinned to the same cores with the same thread count, checks the
# three systems' outputs against each other and prints the table of times and ratios, the worst
# ratio last. THREADS (default 1), CORES (default the first THREADS cores after core 0, or core 0
# on a one-core machine), MIN_TIME (seconds per workload, default 0.5) and FILTER (a substring of
# the workloads' names) change the run; the JSON lines stay in <build>/bench-tutorials.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FUNCGEN_BUILD_DIR:-build}
threads=${THREADS:-1}
ncpu=$(nproc)
if [ -z "${CORES:-}" ]; then
  if [ "$ncpu" -gt "$threads" ]; then CORES=1-$threads; else CORES=0-$((threads - 1)); fi
fi
min_time=${MIN_TIME:-0.5}
filter=${FILTER:-}

bash scripts/setup.sh
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
python=/usr/bin/python3
if ! $python -c "import torch, functorch" 2>/dev/null || ! $python -c "import ensurepip" 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-torch python3-venv >/dev/null
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target bench_tutorials
venv=$build/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import jax" 2>/dev/null; then
  $python -m venv "$venv"
  "$venv/bin/pip" install -q jax jaxlib numpy
fi

out=$build/bench-tutorials
rm -rf "$out"
mkdir -p "$out/outputs"
export OMP_NUM_THREADS=$threads
# The flags the issue measured JAX with; with more threads XLA sizes its own pool (taskset bounds it).
xla="--xla_cpu_multi_thread_eigen=$([ "$threads" = 1 ] && echo false || echo true) intra_op_parallelism_threads=$threads"
pin=(taskset -c "$CORES")
echo "== funcgen (cores $CORES, $threads thread(s))"
"${pin[@]}" "$build/bench/bench_tutorials" --min-time "$min_time" --out "$out/outputs" ${filter:+--filter "$filter"} |
  tee "$out/funcgen.jsonl"
status=0
echo "== torch.func $($python -c 'import torch; print(torch.__version__)')"
"${pin[@]}" $python bench/tutorials_ref.py torch --min-time "$min_time" --check "$out/outputs" ${filter:+--filter "$filter"} |
  tee "$out/torch.jsonl" || status=1
echo "== jax.jit $("$venv/bin/python" -c 'import jax; print(jax.__version__)')"
XLA_FLAGS="$xla" "${pin[@]}" "$venv/bin/python" bench/tutorials_ref.py jax --min-time "$min_time" --check "$out/outputs" \
  ${filter:+--filter "$filter"} 2> >(grep -v -i "warning" >&2) | tee "$out/jax.jsonl" || status=1
echo
$python bench/tutorials_ref.py table "$out/funcgen.jsonl" "$out/torch.jsonl" "$out/jax.jsonl"
[ "$status" = 0 ] || echo "run_tutorials.sh: some outputs differ from funcgen's (rel_diff above 1e-3)" >&2
exit "$status"
