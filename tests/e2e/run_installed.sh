#!/usr/bin/env bash
# A user's CMake project against the installed package: find_package(funcgen), funcgen_generate(),
# build with Ninja and with Makefiles, run; a second build does nothing; touching a header the
# annotated source includes re-runs funcgen.
set -eu
build_dir=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null

mkdir "$work/app"
cd "$work/app"
cat > CMakeLists.txt <<'SRC'
cmake_minimum_required(VERSION 3.20)
project(app CXX)
find_package(funcgen CONFIG REQUIRED)
set(APP_FUNCGEN_OPTIONS "" CACHE STRING "funcgen options")
add_executable(app main.cpp model.cpp)
funcgen_generate(app SOURCES model.cpp SARIF ${CMAKE_BINARY_DIR}/app.sarif OPTIONS ${APP_FUNCGEN_OPTIONS})
SRC
cat > scale.h <<'SRC'
#pragma once
inline double scale() { return 2.0; }
SRC
cat > model.cpp <<'SRC'
#include <funcgen/funcgen.h>

#include "scale.h"

namespace app {
FUNCGEN("batched_score = vmap(score, in_dims=(0, None))")
fg::Tensor score(const fg::Tensor& x, const fg::Tensor& w) { return fg::matmul(x, w).tanh().sum() * scale(); }
}  // namespace app
SRC
cat > main.cpp <<'SRC'
#include <cstdio>
#include <vector>

#include "model.funcgen.h"

namespace app {
fg::Tensor score(const fg::Tensor& x, const fg::Tensor& w);
}

int main() {
  fg::manual_seed(1);
  const fg::Tensor x = fg::randn({5, 3, 4}), w = fg::randn({4, 2});
  const fg::Tensor batched = app::batched_score(x, w);
  std::vector<fg::Tensor> loop;
  for (int64_t i = 0; i < 5; ++i) loop.push_back(app::score(x.select(0, i), w));
  const bool same = fg::allclose(batched, fg::stack(loop, 0), 1e-5, 1e-6);
  std::printf("%s\n", same ? "vmap == loop" : "vmap != loop");
  return same ? 0 : 1;
}
SRC

for generator in Ninja "Unix Makefiles"; do
  dir="$work/build-${generator// /-}"
  cmake -S . -B "$dir" -G "$generator" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null || fail "configure ($generator)"
  cmake --build "$dir" >"$work/log" 2>&1 || { cat "$work/log"; fail "build ($generator)"; }
  "$dir/app" | grep -q "^vmap == loop$" || fail "run ($generator)"
done

# Incremental builds (Ninja): nothing to do, then a touched header re-runs funcgen.
ninja_dir="$work/build-Ninja"
cmake --build "$ninja_dir" >"$work/log" 2>&1
grep -q "no work to do" "$work/log" || { cat "$work/log"; fail "a second build did work"; }
sleep 1
touch scale.h
cmake --build "$ninja_dir" >"$work/log" 2>&1
grep -q "funcgen .*model.cpp" "$work/log" || { cat "$work/log"; fail "touching scale.h did not re-run funcgen"; }
"$ninja_dir/app" | grep -q "^vmap == loop$" || fail "run after rebuild"

grep -q '"version": "2.1.0"' "$ninja_dir/app.sarif" || fail "SARIF ARG did not write the SARIF log"

# A warning does not stop the build; --warnings-as-errors (through OPTIONS) makes it.
sed -i 's|^namespace app {|namespace app {\nstd::vector<int> log_of_calls;|; s|{ return fg::matmul|{ log_of_calls.push_back(1);\n  return fg::matmul|; s|#include "scale.h"|#include "scale.h"\n#include <vector>|' model.cpp
cmake --build "$ninja_dir" >"$work/log" 2>&1 || { cat "$work/log"; fail "a warning stopped the build"; }
grep -q "warning: 'log_of_calls' is modified by 'push_back'.*\[funcgen-side-effect\]" "$work/log" || { cat "$work/log"; fail "no side-effect warning"; }
cmake "$ninja_dir" -DAPP_FUNCGEN_OPTIONS=--warnings-as-errors=funcgen-side-effect >/dev/null
if cmake --build "$ninja_dir" >"$work/log" 2>&1; then cat "$work/log"; fail "--warnings-as-errors did not stop the build"; fi
grep -q "error: 'log_of_calls' is modified" "$work/log" || { cat "$work/log"; fail "warning not reported as an error"; }
cmake "$ninja_dir" -DAPP_FUNCGEN_OPTIONS= >/dev/null

# An error from funcgen stops the build.
sed -i 's/  return fg::matmul(x, w).tanh().sum() \* scale();/  return fg::scalar_tensor(x.sum().item<double>());/' model.cpp
if cmake --build "$ninja_dir" >"$work/log" 2>&1; then fail "the build went on after a funcgen error"; fi
grep -Eq "model.cpp:[0-9]+:[0-9]+: error: '.item\(\)' reads batched tensor 'x.sum\(\)'.*funcgen-item" "$work/log" || { cat "$work/log"; fail "diagnostic not shown"; }

# The samples that are user projects build and run against the package as they are.
for sample in "$source_dir"/samples/*/CMakeLists.txt; do
  grep -q "find_package(funcgen" "$sample" || continue
  name=$(basename "$(dirname "$sample")")
  cmake -S "$(dirname "$sample")" -B "$work/sample-$name" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null ||
    fail "configure sample $name"
  cmake --build "$work/sample-$name" >"$work/log" 2>&1 || { cat "$work/log"; fail "build sample $name"; }
  "$work/sample-$name/$name" >"$work/log" 2>&1 || { cat "$work/log"; fail "run sample $name"; }
  # Samples whose numbers torch.func computed too (tests/golden/make_golden.py) print exactly those.
  if [ -f "$(dirname "$sample")/expected_output.txt" ]; then
    diff -u "$(dirname "$sample")/expected_output.txt" "$work/log" || fail "sample $name does not print what torch.func computes"
  fi
done

# The gallery with the page's examples as written fails to build, with exactly the diagnostics its
# files' CHECK lines list (every error and warning, by file, line and text).
gallery="$source_dir/samples/limitations"
cmake -S "$gallery" -B "$work/gallery-broken" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DGALLERY_BROKEN=ON >/dev/null ||
  fail "configure the broken gallery"
if cmake --build "$work/gallery-broken" -- -k 0 >"$work/log" 2>&1; then fail "the broken gallery built"; fi
for file in "$gallery"/*.cpp; do
  name=$(basename "$file")
  grep -q "^// CHECK: " "$file" || continue
  expected=$(grep -cE "^// CHECK: $name:.*: (error|warning): " "$file")
  actual=$(grep -cE "/$name:[0-9]+:[0-9]+: (error|warning): " "$work/log")
  [ "$expected" = "$actual" ] || { grep "$name" "$work/log"; fail "$name: $actual diagnostics, expected $expected"; }
done
echo "1 passed, 0 failed"
