#!/usr/bin/env bash
# What parallel builds and interrupted builds do to funcgen's outputs:
# - two writers: funcgen processes on one source and one output directory at once (two build
#   trees' rules, or a build and an IDE's run) all succeed and leave exactly one run's outputs;
# - killed at random moments (SIGKILL, as a build interrupted twice over), a run leaves every
#   output either as it was or as the new run writes it, never a partial file, and the next run
#   writes the new outputs.
set -eu
funcgen=$1 gallery=$2 include_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
gen() { "$funcgen" "$1" -o "$2" --depfile "$2/model.d" -- -std=c++17 -I"$include_dir"; }
outputs="model.funcgen.h model.funcgen.cpp model.d"

# The two versions of the source, and what a lone run writes for each.
mkdir old new
cp "$gallery"/fixed.cpp old/model.cpp
cp "$gallery"/fixed.cpp new/model.cpp
cat >>new/model.cpp <<'CPP'

FUNCGEN("extra_per_row = vmap(extra_loss)")
fg::Tensor extra_loss(const fg::Tensor& x) { return (x.sin() * x).sum(); }
CPP
for v in old new; do
  gen $v/model.cpp ref_$v || fail "generation of the $v source failed"
  sed -i "s|$work/ref_$v|OUT|g; s|$work/$v|SRC|g" ref_$v/model.d
done
same_as() {  # output dir, reference dir: each output equals the reference's
  for f in $outputs; do
    [ -f "$1/$f" ] || return 1
    sed "s|$work/[a-z_0-9]*/model.funcgen|OUT/model.funcgen|g; s|$work/[a-z]*/model.cpp|SRC/model.cpp|g" "$1/$f" |
      cmp -s - "$2/$f" || return 1
  done
}

# Two writers, four rounds: every run succeeds and the outputs are one run's, no temporary left.
for round in 1 2 3 4; do
  rm -rf shared
  gen new/model.cpp shared >writer1.log 2>&1 & p1=$!
  gen new/model.cpp shared >writer2.log 2>&1 & p2=$!
  wait $p1 || fail "round $round: the first writer failed: $(cat writer1.log)"
  wait $p2 || fail "round $round: the second writer failed: $(cat writer2.log)"
  same_as shared ref_new || fail "round $round: two writers left outputs that no lone run writes"
  ls shared | grep -q tmp && fail "round $round: a temporary file was left behind"
done

# Killed at random moments across the run (it takes about $run_ms ms here): each output is the old
# one or the new one, whole. Delays spread over the whole run, the last ones past its end.
start=$(date +%s%N)
gen new/model.cpp timing >/dev/null 2>&1
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
for k in $(seq 0 7); do
  rm -rf killed
  cp -r ref_old killed
  sed -i "s|OUT|$work/killed|g; s|SRC|$work/new|g" killed/model.d
  gen new/model.cpp killed >/dev/null 2>&1 & pid=$!
  sleep "$(awk -v k=$k -v ms=$run_ms 'BEGIN { printf "%.3f", k * ms * 1.1 / 7 / 1000 }')"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  for f in $outputs; do
    sed "s|$work/killed|OUT|g; s|$work/new|SRC|g" killed/$f >probe
    cmp -s probe ref_old/$f || cmp -s probe ref_new/$f || fail "kill $k: $f is neither the old nor the new output"
  done
  gen new/model.cpp killed >/dev/null 2>&1 || fail "kill $k: the run after the kill failed"
  same_as killed ref_new || fail "kill $k: the run after the kill did not write the new outputs"
done
echo "ok: 4 rounds of two writers, 8 kills over a run of $run_ms ms"
