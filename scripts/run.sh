#!/usr/bin/env bash
# The two entry points of the README:
#   scripts/run.sh main   install what is missing, build funcgen and the runtime, install them, and
#                         build and run the samples that use them as a user's project would
#                         (per-sample gradients first)
#   scripts/run.sh test   install what is missing, build, run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${FUNCGEN_BUILD_DIR:-build}
jobs=$(nproc)

configure_and_build() {
  bash scripts/setup.sh
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build_dir" -j "$jobs" "$@"
}

case "${1:-}" in
  main)
    configure_and_build --target funcgen funcgen_runtime
    install_dir="$(cd "$build_dir" && pwd)/install"
    cmake --install "$build_dir" --prefix "$install_dir" >/dev/null
    for sample in per_sample_grads jacobians_hessians model_ensembling; do
      sample_dir="$build_dir/user/$sample"
      cmake -S "samples/$sample" -B "$sample_dir" -G Ninja -DCMAKE_PREFIX_PATH="$install_dir" >/dev/null
      cmake --build "$sample_dir"
      echo "== samples/$sample"
      "$sample_dir/$sample"
    done
    ;;
  test)
    configure_and_build
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    ;;
  *)
    echo "usage: scripts/run.sh main|test" >&2
    exit 2
    ;;
esac
