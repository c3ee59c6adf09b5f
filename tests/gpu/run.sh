#!/usr/bin/env bash
# Tier 2 of the CUDA tests, for a machine with an NVIDIA GPU (CI machines have none): builds the
# runtime with the CUDA backend, runs every op test on the GPU against the CPU (test_cuda_gpu),
# failing if any test skipped, then the benchmarks with --device cuda, JSON into $1 (default
# build-gpu/bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${FUNCGEN_GPU_BUILD_DIR:-build-gpu}
results=${1:-$build/bench}
nvidia-smi -L
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNCGEN_CUDA=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target test_cuda_gpu test_cuda_host_run bench_elementwise bench_matmul
"$build/tests/test_cuda_host_run"
log=$(mktemp)
"$build/tests/test_cuda_gpu" | tee "$log"
if grep -q '\[  SKIPPED \]' "$log"; then
  echo "tests/gpu/run.sh: GPU tests were skipped: the GPU was not usable" >&2
  exit 1
fi
mkdir -p "$results"
for bench in bench_elementwise bench_matmul; do
  "$build/bench/$bench" --device cuda --benchmark_out="$results/$bench.cuda.json" --benchmark_out_format=json
done
echo "tests/gpu/run.sh: all GPU tests passed; benchmark results in $results"
