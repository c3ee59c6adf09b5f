#!/usr/bin/env bash
# The two entry points of the README:
#   scripts/run.sh main   install what is missing, build funcgen and the runtime, install them, and
#                         build and run samples/model_ensembling as a user's project would
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
    sample_dir="$build_dir/user/model_ensembling"
    cmake -S samples/model_ensembling -B "$sample_dir" -G Ninja -DCMAKE_PREFIX_PATH="$install_dir" >/dev/null
    cmake --build "$sample_dir"
    "$sample_dir"/model_ensembling
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
