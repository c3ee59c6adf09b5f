#!/usr/bin/env bash
# Where the test command's time goes, read from what a run of `scripts/run.sh test` (or `quick`)
# leaves in its build directories: the phases run.sh timed (<dir>/phases.tsv), ninja's log of each
# build step (<dir>/.ninja_log: the slowest translation units and funcgen runs, and the compile time
# per target) and ctest's JUnit report (<dir>/ctest-junit.xml: the slowest tests, and the time per
# test program).
#
#   scripts/test_times.sh [build-dir ...] [-n N]     (default: build build-asan, N = 10)
#
# Figures are wall-clock seconds of one run. Ninja's log keeps the last run of each step, so after
# incremental builds a step's time is its latest rebuild; the totals are meaningful for a fresh build.
set -eu  # (no pipefail: `sort | head` ends sort early)
cd "$(dirname "$0")/.."

top=10
dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) top=$2; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[ ${#dirs[@]} -gt 0 ] || dirs=(build build-asan)

for dir in "${dirs[@]}"; do
  [ -d "$dir" ] || { echo "test_times: no build directory '$dir'" >&2; continue; }
  echo "=== $dir"

  if [ -f "$dir/phases.tsv" ]; then
    echo "--- phases (wall s)"
    awk -F'\t' '{ printf "%8d  %s\n", $2, $1; s += $2 } END { printf "%8d  total\n", s }' "$dir/phases.tsv"
  fi

  if [ -f "$dir/.ninja_log" ]; then
    # v5 lines: start_ms end_ms mtime output hash; one command with several outputs repeats its hash.
    steps=$(awk -F'\t' 'NR > 1 && !seen[$5]++ { printf "%.1f\t%s\n", ($2 - $1) / 1000, $4 }' "$dir/.ninja_log")
    echo "--- build steps: $(wc -l <<<"$steps") run, $(awk -F'\t' '{ s += $1 } END { printf "%d", s }' <<<"$steps") s of compiler and tool time in all"
    echo "--- the $top slowest translation units (s)"
    grep -E '\.(o|obj)$' <<<"$steps" | sort -t$'\t' -k1,1 -rn | head -n "$top" |
      awk -F'\t' '{ printf "%8.1f  %s\n", $1, $2 }'
    echo "--- the $top slowest funcgen runs (s)"
    grep -E '\.funcgen\.(cpp|h)$' <<<"$steps" | sort -t$'\t' -k1,1 -rn | head -n "$top" |
      awk -F'\t' '{ printf "%8.1f  %s\n", $1, $2 }'
    echo "--- compile time per target (s, the $top largest)"
    awk -F'\t' 'match($2, /CMakeFiles\/[^\/]+\.dir\//) { t = substr($2, RSTART + 11, RLENGTH - 16); s[t] += $1 }
                END { for (t in s) printf "%8.1f  %s\n", s[t], t }' <<<"$steps" | sort -rn | head -n "$top"
  fi

  if [ -f "$dir/ctest-junit.xml" ]; then
    # Test name -> program, from ctest's own listing ("Test command: <program> ..." then "Test #N: name").
    programs=$(ctest --test-dir "$dir" -N -V 2>/dev/null |
      awk '/Test command:/ { p = $4; sub(/.*\//, "", p) } /^ *Test +#[0-9]+:/ { sub(/^ *Test +#[0-9]+: /, ""); print $0 "\t" p }')
    times=$(grep -o '<testcase name="[^"]*"[^>]*time="[^"]*"' "$dir/ctest-junit.xml" |
      sed -E 's/<testcase name="([^"]*)".*time="([^"]*)"/\2\t\1/' | sed 's/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g')
    echo "--- tests: $(wc -l <<<"$times") run, $(awk -F'\t' '{ s += $1 } END { printf "%d", s }' <<<"$times") s in all (ctest runs them $(nproc) at a time)"
    echo "--- the $top slowest tests (s)"
    sort -t$'\t' -k1,1 -rn <<<"$times" | head -n "$top" | awk -F'\t' '{ printf "%8.1f  %s\n", $1, $2 }'
    echo "--- time per test program (s, tests)"
    awk -F'\t' 'NR == FNR { prog[$1] = $2; next }
                { p = ($2 in prog) ? prog[$2] : "?"; s[p] += $1; n[p]++ }
                END { for (p in s) printf "%8.1f %6d  %s\n", s[p], n[p], p }' \
      <(printf '%s\n' "$programs") <(printf '%s\n' "$times") | sort -rn | head -n "$top"
  fi
done
