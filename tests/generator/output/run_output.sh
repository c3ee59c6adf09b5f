#!/usr/bin/env bash
# What funcgen writes: deterministic outputs that do not depend on where the tree is, a make-style
# depfile naming every header the source reads, nothing written (and the old outputs kept) when an
# error is reported or an output cannot be written, exit 2 on bad usage.
set -eu
funcgen=$1 gallery=$2 include_dir=$3 cxx=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
cp "$gallery"/fixed.cpp model.cpp

"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" || fail "generation failed"
"$funcgen" model.cpp -o b -- -std=c++17 -I"$include_dir" || fail "second generation failed"
cmp a/model.funcgen.h b/model.funcgen.h || fail "header differs between runs"
cmp a/model.funcgen.cpp b/model.funcgen.cpp || fail "source differs between runs"
grep -q "^fg::Tensor batched_relu_select(const fg::Tensor& x);$" a/model.funcgen.h || fail "declaration missing"
grep -q "^#include \"../model.cpp\"$" a/model.funcgen.cpp || fail "generated source does not include the annotated file"
head -1 a/model.d | grep -q "^$work/a/model.funcgen.h $work/a/model.funcgen.cpp:" || fail "depfile targets"
grep -q "$work/model.cpp" a/model.d || fail "depfile lacks the source"
grep -q "funcgen/runtime/tensor.h" a/model.d || fail "depfile lacks an included header"

# An error: nothing is written and the previous outputs stay as they were.
cp a/model.funcgen.cpp before.cpp
cat "$gallery"/item.cpp >> model.cpp
"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 && fail "expected exit 1"
cmp a/model.funcgen.cpp before.cpp || fail "outputs changed despite the error"
ls a | grep -q tmp && fail "temporary file left behind"

# Outputs that cannot be written: exit 1 at once with the reason, the device still a device, and
# every old output kept (header, source and depfile are replaced together or not at all). The device
# is a /dev/full of our own where we may make one, so that a funcgen that replaced its output by a
# rename would not replace the machine's; the memory limit guards against one that reads it (ASan
# reserves more address space).
full=/dev/full
if mknod full c 1 7 2>/dev/null && (echo x >full) 2>&1 | grep -q "No space left on device"; then full=$work/full; fi
cp "$gallery"/fixed.cpp model.cpp
"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" || fail "generation failed"
mkdir before
cp a/model.funcgen.h a/model.funcgen.cpp a/model.d before/
sed -i 's/^FUNCGEN("batched_sin_sin = /FUNCGEN("also_batched = vmap(sin_sin)")\n&/' model.cpp
grep -q also_batched model.cpp || fail "test set-up: model.cpp unchanged"
limit=unlimited
# (ASan reserves terabytes of shadow address space: no limit there; Clang links it statically.)
{ ldd "$funcgen" | grep -q libasan || grep -qa __asan_init "$funcgen"; } || limit=4000000
unwritable() {  # <expected message> <funcgen options...>
  local expected=$1
  shift
  set +e
  (ulimit -v $limit; timeout 60 "$funcgen" model.cpp -o a "$@" -- -std=c++17 -I"$include_dir" >/dev/null 2>err)
  local status=$?
  set -e
  [ $status -eq 1 ] || { cat err; fail "$*: exit $status, expected 1"; }
  grep -qx "funcgen: $expected" err || { cat err; fail "$*: no 'funcgen: $expected'"; }
  [ -c "$full" ] || fail "$*: $full is no longer a device"
  if ls a | grep -q tmp; then fail "$*: temporary file left behind"; fi
}
kept() {  # <files of a/ that must be as they were>...
  for f in "$@"; do cmp "a/$f" "before/$f" || fail "a/$f was replaced although an output could not be written"; done
}
unwritable "cannot write '$full': No space left on device" --depfile "$full"
kept model.funcgen.h model.funcgen.cpp model.d
unwritable "cannot write '$full': No space left on device" --sarif="$full" --depfile a/model.d
kept model.funcgen.h model.funcgen.cpp model.d
mkdir dir.d
unwritable "cannot write 'dir.d': Is a directory" --depfile dir.d
kept model.funcgen.h model.funcgen.cpp model.d
rm a/model.funcgen.cpp && mkdir a/model.funcgen.cpp  # the header is staged before it
unwritable "cannot write '$work/a/model.funcgen.cpp': Is a directory" --depfile a/model.d
kept model.funcgen.h model.d
rmdir a/model.funcgen.cpp
"$funcgen" model.cpp -o a --depfile a/model.d -- -std=c++17 -I"$include_dir" || fail "generation failed"
grep -q "also_batched" a/model.funcgen.h || fail "header not replaced once writable"
grep -q "also_batched" a/model.funcgen.cpp || fail "source not replaced once writable"
# An output that is not a file (a FIFO, /dev/stdout) is written into, not replaced by a file.
mkfifo sarif.fifo
timeout 60 cat sarif.fifo >got.sarif &
timeout 60 "$funcgen" model.cpp -o a --sarif=sarif.fifo -- -std=c++17 -I"$include_dir" || fail "--sarif=sarif.fifo"
wait $! || fail "nothing was written into the FIFO"
[ -p sarif.fifo ] || fail "the FIFO was replaced"
grep -q '"version": "2.1.0"' got.sarif || fail "the FIFO did not get the SARIF log"

# The same tree at two paths gives the same files: they include the annotated source by a path
# relative to the output directory.
for tree in one deeper/two; do
  mkdir -p "$tree/src"
  cp "$gallery"/fixed.cpp "$tree/src/model.cpp"
  "$funcgen" "$tree/src/model.cpp" -o "$tree/build/gen" -- -std=c++17 -I"$include_dir" || fail "generation in $tree"
done
for f in model.funcgen.h model.funcgen.cpp; do
  cmp one/build/gen/$f deeper/two/build/gen/$f || fail "$f depends on where the tree is"
done
grep -q "^#include \"../../src/model.cpp\"$" one/build/gen/model.funcgen.cpp || fail "include not relative"
# Through a symbolic link the ".." of the include leaves the link's target, as the compiler reads it.
mkdir -p elsewhere/deep
ln -s "$work/elsewhere/deep" outlink
"$funcgen" one/src/model.cpp -o outlink/gen -- -std=c++17 -I"$include_dir" || fail "generation into a link"
"$cxx" -std=c++17 -fsyntax-only -I"$include_dir" outlink/gen/model.funcgen.cpp ||
  fail "the generated source does not find the annotated one"

# The header declares its functions on its own, whatever types they take: aliases spelled out,
# structs and enums forward-declared, a header included for what cannot be (an enum without a
# fixed type, a class template); included alone, it compiles.
mkdir -p selfcontained/inc
cat > selfcontained/inc/types.h <<'SRC'
#pragma once
namespace lib { enum Plain { P0, P1 }; template <class X> struct Box { X v; }; }
SRC
cat > selfcontained/model.cpp <<'SRC'
#include <funcgen/funcgen.h>
#include <cstdint>
#include <string>
#include <vector>
#include "inc/types.h"
#include <functional>
#include <set>
namespace cfg {
struct Opts { double s; enum class Kind { K0, K1 } kind; };  // an enum inside: the header needs only Opts
struct Node { double v; std::vector<Node> kids; };           // a type that contains itself
enum class Mode { A, B };
inline namespace v1 { struct Versioned { int n; }; }
}
namespace app {
using cfg::Opts;
using Layers = std::vector<fg::Tensor>;
using Real = double;
enum Fixed : uint8_t { F0, F1 };
FUNCGEN("g = grad(f)")
fg::Tensor f(const fg::Tensor& x, const Opts& o, cfg::Mode m, Fixed k, Real r, const std::string& name,
             const cfg::Node& tree, const std::set<int>& ids, const std::function<double(double)>& act,
             const cfg::Versioned& ver) { return (x * o.s * r).sum(); }
FUNCGEN("h = grad(layers, argnums=1)")
fg::Tensor layers(const Layers& ws, const fg::Tensor& x, lib::Plain p, const lib::Box<int>& b) {
  fg::Tensor y = x;
  for (const auto& w : ws) y = fg::matmul(w, y);
  return y.sum();
}
}  // namespace app
SRC
"$funcgen" selfcontained/model.cpp -o selfcontained/gen -- -std=c++17 -I"$include_dir" || fail "generation of selfcontained"
grep -q "^    const std::vector<fg::Tensor>& ws, const fg::Tensor& x, lib::Plain p, const lib::Box<int>& b);$" \
  selfcontained/gen/model.funcgen.h &&
  ! grep -Eq "Layers|Real r|const Opts&" selfcontained/gen/model.funcgen.h || { cat selfcontained/gen/model.funcgen.h; fail "aliases not spelled out"; }
grep -q '^#include "../inc/types.h"$' selfcontained/gen/model.funcgen.h || fail "defining header not included"
echo '#include "model.funcgen.h"' > selfcontained/alone.cpp
"$cxx" -std=c++17 -fsyntax-only -I"$include_dir" -Iselfcontained/gen selfcontained/alone.cpp ||
  { cat selfcontained/gen/model.funcgen.h; fail "the generated header does not compile on its own"; }
sed -i 's/^enum Fixed : uint8_t/enum Fixed/' selfcontained/model.cpp
"$funcgen" selfcontained/model.cpp -o selfcontained/gen -- -std=c++17 -I"$include_dir" 2>&1 |
  grep -q "error: 'Fixed' is an enum without a fixed underlying type and is defined in the annotated file" ||
  fail "no error for an enum the header cannot declare"

# Usage errors exit 2.
set +e
"$funcgen" --no-such-option model.cpp -- -std=c++17 >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option did not exit 2"
"$funcgen" --explain funcgen-nope >/dev/null 2>&1
[ $? -eq 2 ] || fail "--explain of an unknown check did not exit 2"
set -e
"$funcgen" --list-checks | grep -q "^funcgen-inplace-batched: " || fail "--list-checks"
"$funcgen" --explain funcgen-randomness | grep -q "randomness='different'" || fail "--explain"

# --autograd-api adds a project's own eager autograd functions to funcgen-autograd-api.
cat > eager.cpp <<'SRC'
#include <funcgen/funcgen.h>
namespace mylib { fg::Tensor eager_grad(const fg::Tensor& y, const fg::Tensor& x); }
FUNCGEN("batched = vmap(f)")
fg::Tensor f(const fg::Tensor& x) { return mylib::eager_grad(x.sum(), x); }
SRC
"$funcgen" eager.cpp -o e -- -std=c++17 -I"$include_dir" >/dev/null 2>&1 || fail "eager.cpp without --autograd-api"
"$funcgen" eager.cpp -o e2 --autograd-api=mylib::eager_grad -- -std=c++17 -I"$include_dir" 2>&1 |
  grep -q "^$work/eager.cpp:4:44: error: 'mylib::eager_grad' is an eager autograd API" || fail "--autograd-api"
echo "1 passed, 0 failed"
