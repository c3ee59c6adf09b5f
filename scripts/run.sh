#!/usr/bin/env bash
# The two entry points of the README:
#   scripts/run.sh main   install what is missing, build, run the sample end to end
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
    configure_and_build --target mlp_classifier
    "$build_dir"/samples/mlp_classifier
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
