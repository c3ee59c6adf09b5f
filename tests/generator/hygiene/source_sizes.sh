#!/usr/bin/env bash
# The size limits of the generator's sources (issue 42): no file over 1,500 lines, no class over
# 800. A class's size is its definition plus the out-of-line definitions of its members
# (`Type Class::member(...) {` at the start of a line up to the `}` that closes it at column 0),
# summed over every file, so a class split across files is counted whole.
set -u
root=${1:?usage: source_sizes.sh <checkout>}
cd "$root/generator" || exit 2
status=0
while read -r lines file; do
  [ "$file" = total ] && continue
  if [ "$lines" -gt 1500 ]; then echo "$file: $lines lines, over 1,500: split it"; status=1; fi
done < <(find . -name '*.cpp' -o -name '*.h' | sort | xargs wc -l)

find . -name '*.cpp' -o -name '*.h' | sort | xargs awk '
  # a class or struct defined at the start of a line (namespace scope), up to its "};"
  in_class == "" && in_fn == "" && match($0, /^(class|struct) [A-Za-z_][A-Za-z_0-9]*[^;]*\{ *$/) {
    split(substr($0, 1, RLENGTH), w, /[ :{]/); in_class = w[2]; start = FNR; next
  }
  in_class != "" && /^};/ { size[in_class] += FNR - start + 1; in_class = ""; next }
  # an out-of-line member definition: "... Class::member(" at column 0, not a declaration
  in_class == "" && in_fn == "" && /^[A-Za-z_].*[A-Za-z_0-9>]+ [A-Za-z_][A-Za-z_0-9]*::~?[A-Za-z_][A-Za-z_0-9]*\(/ && !/;$/ {
    s = $0; sub(/::~?[A-Za-z_][A-Za-z_0-9]*\(.*/, "", s); n = split(s, w, /[ *&]/); in_fn = w[n]; start = FNR
    if ($0 ~ /\}$/) { size[in_fn] += 1; in_fn = "" }
    next
  }
  in_fn != "" && /^}/ { size[in_fn] += FNR - start + 1; in_fn = "" }
  END { for (c in size) print size[c], c }
' | sort -rn > "${TMPDIR:-/tmp}/source_sizes.$$"
while read -r lines class; do
  if [ "$lines" -gt 800 ]; then echo "class $class: $lines lines with its members, over 800: split it"; status=1; fi
done < "${TMPDIR:-/tmp}/source_sizes.$$"
[ -n "${VERBOSE:-}" ] && head -12 "${TMPDIR:-/tmp}/source_sizes.$$"
rm -f "${TMPDIR:-/tmp}/source_sizes.$$"
exit $status
