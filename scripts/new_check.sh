#!/usr/bin/env bash
# Scaffolds a new limitation check, as clang-tidy's add_new_check.py does:
#   scripts/new_check.sh <id> [--warning]
# writes generator/checks/<id>.cpp (the check, registered by its one line; CMake builds every file
# there) and tests/generator/tool/check_<id>.cpp, the
# test input whose CHECK lines give the full expected messages (it fails until the check reports).
set -euo pipefail
cd "$(dirname "$0")/.."
id=${1:?usage: scripts/new_check.sh <id> [--warning]}
warning=false
[ "${2:-}" = "--warning" ] && warning=true
[[ $id =~ ^[a-z][a-z0-9-]*$ ]] || { echo "new_check: the id is lowercase words joined by '-'" >&2; exit 2; }
file=${id//-/_}
source=generator/checks/$file.cpp test=tests/generator/tool/check_$file.cpp
[ -e "$source" ] && { echo "new_check: $source exists" >&2; exit 2; }

cat > "$source" <<SRC
// funcgen-$id: TODO(summary): what the check finds, in a line.
#include "checks/check_util.h"

namespace funcgen {

void check_$file(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  const ir::Function& f = fn.function();
  ir::for_each_expr(f.body, [&](const ir::Expr& e) {
    // Report what is wrong and what to do, lowercase, at the construct as the user wrote it:
    // ctx.reporter.report("$id", checks::call_location(e), "...; do ... instead") << e.range;
    (void)ctx;
    (void)e;
  });
}

static const CheckRegistration registration({"$id", $warning, "TODO(summary)", "TODO(help: why, and the fix)"},
                                            check_$file, CheckScope::Vmap);

}  // namespace funcgen
SRC

cat > "$test" <<SRC
// funcgen-$id: each case with the full expected message.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("batched = vmap(f)")
fg::Tensor f(const fg::Tensor& x) {
  return x;  // TODO: the construct the check reports
}
// CHECK: check_$file.cpp:[[@LINE-2]]:3: error: TODO: the full message [funcgen-$id]
SRC
echo "wrote $source and $test"
