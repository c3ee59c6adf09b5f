#!/usr/bin/env bash
# The mutation corpus (issue 14): every case in cases/ is a body or spec with one construct that
# funcgen must either transform correctly or report. funcgen runs on each case:
# - exit 1: each error must stand where a marker line puts it (a comment line `//   ^` under the
#   construct: the caret's column, on the line above), one error per marker and none elsewhere, in
#   words a C++ user knows (no Clang class names, no names funcgen made up);
# - exit 0: the generated code must compile, and the checks (mutation_check.h) compare each
#   `NAME = vmap(F)` with the loop of F over the examples and each `NAME = grad(F)` with finite
#   differences. The accepted cases are compiled together, each in a namespace of its own, into
#   one shared object that mutation_runner (which holds the fg runtime) loads.
# A case's `// EXPECT: accept` or `// EXPECT: reject` line says which of the two it must do, and
# `// NAMESPACE: a::b` the namespace its annotated functions are in.
set -u
funcgen=$1 cxx=$2 include_dir=$3 runner=$4 cases_dir=$5
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 accepted=() constructs=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The words a diagnostic must not use: Clang's class names and the generated code's own names.
internal='[A-Z][A-Za-z]*(Expr|Stmt|Decl|Type|Operator)\b|\b[A-Za-z_0-9]+__\b|__(batched_body|forward|backward)|\b(trips|taken|batch[0-9]+)\b'

check_rejected() {  # case name, its file, funcgen's output
  local name=$1 file=$2 out=$3 markers
  markers=$(awk '/^[ \t]*\/\/[ \t]*\^/ { printf "%d:%d\n", NR - 1, index($0, "^") }' "$file")
  [ -n "$markers" ] || fail "$name: exit 1 but the case has no marker line (//  ^) under its construct"
  for at in $markers; do
    constructs=$((constructs + 1))
    local count
    count=$(grep -c "^[^ ]*$name.cpp:$at: error: " "$out")
    [ "$count" = 1 ] || fail "$name: expected one error at $at, got $count"
  done
  while IFS= read -r diag; do
    local where=${diag#*"$name.cpp:"}
    where=${where%%: error:*}
    grep -qx "$where" <<<"$markers" || fail "$name: an error where no marker is: $diag"
    local message=${diag#*error: }
    grep -qE "$internal" <<<"$message" && fail "$name: the message uses internal names: $message"
    [[ $message =~ ^[a-z\'\(] ]] || fail "$name: the message does not start in lowercase: $message"
  done < <(grep "^[^ ]*$name.cpp:[0-9]*:[0-9]*: error: " "$out")
}

# The checkable specs of a case: `kind name function` for `name = vmap(function[, chunk_size=N])`,
# `name = grad(function)` and jacrev / jacfwd of a function with one output element, whose
# jacobian is its gradient (checked as one).
specs() {
  sed -n 's#.*FUNCGEN("\([A-Za-z_0-9]*\) = \(vmap\|grad\|jacrev\|jacfwd\)(\([A-Za-z_0-9]*\)\(, chunk_size=[0-9]*\)\?)").*#\2 \1 \3#p' "$1" |
    sed 's#^jac[a-z]* #grad #'
}

# funcgen on every case, as many at a time as there are cores.
for file in "$cases_dir"/*.cpp; do
  name=$(basename "$file" .cpp)
  mkdir -p "$work/$name"
  ("$funcgen" "$file" -o "$work/$name" -- -std=c++17 -I"$include_dir" >"$work/$name/out.txt" 2>&1
   echo $? >"$work/$name/status") &
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
done
wait

for file in "$cases_dir"/*.cpp; do
  name=$(basename "$file" .cpp)
  expect=$(sed -n 's|^// EXPECT: *\([a-z]*\).*|\1|p' "$file")
  status=$(cat "$work/$name/status")
  case "$status:$expect" in
    0:accept)
      [ -n "$(specs "$file")" ] || fail "$name: no spec of the forms the checks know (NAME = vmap(F), grad(F), jacrev(F), jacfwd(F))"
      accepted+=("$name")
      constructs=$((constructs + 1))
      echo "ok   $name: generated" ;;
    1:reject)
      check_rejected "$name" "$file" "$work/$name/out.txt"
      echo "ok   $name: reported" ;;
    *)
      fail "$name: funcgen exited with $status, but the case expects '$expect'; its output:"
      cat "$work/$name/out.txt" ;;
  esac
done

# The accepted cases and their checks, in one translation unit. The headers the cases and the
# generated code include come first, so that their #includes inside the namespaces are no-ops.
tu=$work/cases.cpp
{
  for name in "${accepted[@]}"; do grep -h '^#include <' "$cases_dir/$name.cpp"; done | sort -u
  echo '#include <funcgen/runtime/ad.h>'
  echo '#include <funcgen/runtime/vmap.h>'
  echo "#include \"$here/mutation_check.h\""
  for name in "${accepted[@]}"; do
    printf 'namespace mut_%s {\n#include "%s/%s/%s.funcgen.cpp"\n}\n' "$name" "$work" "$name" "$name"
  done
  echo 'extern "C" int mutation_run() {'
  for name in "${accepted[@]}"; do
    ns=$(sed -n 's|^// NAMESPACE: *\([A-Za-z_:0-9]*\).*|\1::|p' "$cases_dir/$name.cpp")
    specs "$cases_dir/$name.cpp" |
      while read -r kind spec fn; do
        echo "  try { mutation::check_$kind(\"$name: $spec\", &mut_$name::$ns$spec, &mut_$name::$ns$fn); }"
        echo "  catch (const std::exception& e) { mutation::report(false, \"$name: $spec\", e.what()); }"
      done
  done
  echo '  return mutation::failures;'
  echo '}'
} >"$tu"
if [ ${#accepted[@]} -gt 0 ]; then
  if ! "$cxx" -std=c++17 -O0 -fPIC -shared -w -I"$include_dir" "$tu" -o "$work/cases.so" 2>"$work/compile.txt"; then
    fail "the generated code of the accepted cases does not compile:"
    head -60 "$work/compile.txt"
  elif ! "$runner" "$work/cases.so"; then
    fail "the generated code computes other values than the function it transforms (above)"
  fi
fi
echo "$constructs constructs, ${#accepted[@]} cases generated; $failures failures"
[ "$failures" = 0 ]
