#!/usr/bin/env bash
# The two entry points of the README:
#   scripts/run.sh main   install what is missing, build funcgen and the runtime, install them, and
#                         build and run the samples that use them as a user's project would
#                         (per-sample gradients first)
#   scripts/run.sh test   install what is missing, build, run the whole test suite; then build it
#                         again under AddressSanitizer and UndefinedBehaviorSanitizer (in
#                         build-asan, without the parts FUNCGEN_SANITIZE leaves out) and run it
#   scripts/run.sh quick  the inner loop: in the same build directory, build and run only the
#                         quick tier (ctest label `quick`: all but the slowest programs, see
#                         tests/CMakeLists.txt), no sanitized build
# Each leaves the wall time of its phases in <build dir>/phases.tsv and ctest's JUnit report in
# <build dir>/ctest-junit.xml; scripts/test_times.sh prints where the time went.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${FUNCGEN_BUILD_DIR:-build}
sanitize_dir=${FUNCGEN_SANITIZE_BUILD_DIR:-build-asan}
jobs=$(nproc)

# timed <dir> <phase> <command...>: runs the command and appends its wall time to <dir>/phases.tsv
# (scripts/test_times.sh prints them with the slowest steps and tests).
timed() {
  local dir=$1 phase=$2 start status=0
  shift 2
  start=$(date +%s)
  "$@" || status=$?
  mkdir -p "$dir"
  printf '%s\t%s\n' "$phase" $(($(date +%s) - start)) >>"$dir/phases.tsv"
  return $status
}

# configure_and_build <dir> [cmake -D options...] [-- build options...]
configure_and_build() {
  local dir=$1 options=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  rm -f "$dir/phases.tsv"
  timed "$dir" "setup (Debian packages)" bash scripts/setup.sh
  timed "$dir" "configure" cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${options[@]}" >/dev/null
  timed "$dir" "build" cmake --build "$dir" -j "$jobs" "$@"
}

# run_tests <dir> [ctest options...]: the suite, with a JUnit report for scripts/test_times.sh
run_tests() {
  local dir=$1
  shift
  timed "$dir" "ctest" ctest --test-dir "$dir" --output-on-failure -j "$jobs" --output-junit ctest-junit.xml "$@"
}

# Where nvcc exists the CUDA backend must build (tier 3 of the CUDA tests: its .cu files compile
# with warnings, spills and local memory as errors, its PTX assembles for the next architecture,
# the GPU tests find every cuBLAS function the backend calls); elsewhere it is left out.
cuda=OFF
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then cuda=ON; fi

case "${1:-}" in
  main)
    configure_and_build "$build_dir" -- --target funcgen funcgen_runtime
    install_dir="$(cd "$build_dir" && pwd)/install"
    cmake --install "$build_dir" --prefix "$install_dir" >/dev/null
    for sample in per_sample_grads per_sample_grads_cnn neural_tangent_kernels jacobians_hessians model_ensembling autodiff_cookbook equilibrium_training; do
      sample_dir="$build_dir/user/$sample"
      cmake -S "samples/$sample" -B "$sample_dir" -G Ninja -DCMAKE_PREFIX_PATH="$install_dir" >/dev/null
      cmake --build "$sample_dir"
      echo "== samples/$sample"
      "$sample_dir/$sample"
    done
    ;;
  test)
    configure_and_build "$build_dir" -DFUNCGEN_CUDA=$cuda
    run_tests "$build_dir"
    gpu_tests=$(ctest --test-dir "$build_dir" -N -L gpu | grep -c ' Test *#' || true)
    if [ "$cuda" = ON ] && ! nvidia-smi -L >/dev/null 2>&1; then
      echo "run.sh: no GPU here: the $gpu_tests GPU tests (label gpu) were skipped; tests/gpu/run.sh runs them on a machine with one"
    fi
    # The sanitized build leaves CUDA out: the backend-less configuration gets tested too. It is
    # Clang's, for libFuzzer: the fuzz targets of tests/fuzz run there, a minute each.
    configure_and_build "$sanitize_dir" -DFUNCGEN_SANITIZE=ON -DFUNCGEN_CUDA=OFF \
      -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16
    # Any finding fails its test, with the stack of the bad access or of the undefined operation.
    UBSAN_OPTIONS=print_stacktrace=1 run_tests "$sanitize_dir"
    ;;
  quick)
    configure_and_build "$build_dir" -DFUNCGEN_CUDA=$cuda -- --target quick
    run_tests "$build_dir" -L quick
    ;;
  *)
    echo "usage: scripts/run.sh main|test|quick" >&2
    exit 2
    ;;
esac
