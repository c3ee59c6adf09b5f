#!/usr/bin/env bash
# The include graph between the generator's folders, and whether it runs one way:
#   tool -> pipeline -> checks, transforms, emitter -> analyses -> frontend, ops -> ir -> diag
# (a folder may include folders to its right; checks, transforms and emitter (the printer), frontend
# and ops, are siblings that do not include each other). Prints each edge `from -> to (files)` and exits 1
# on an edge against the order.
set -euo pipefail
cd "$(dirname "$0")/../generator"
rank() {
  case $1 in
    tool) echo 7 ;; pipeline) echo 6 ;; checks|transforms|emitter) echo 5 ;; analyses) echo 4 ;;
    frontend|ops) echo 3 ;; ir) echo 2 ;; diag) echo 1 ;; compat) echo 0 ;; *) echo 9 ;;
  esac
}
status=0
declare -A edges
while IFS= read -r line; do
  file=${line%%:*}
  inc=$(sed -n 's|^#include "\([a-z_]*\)/.*|\1|p' <<<"${line#*:}")
  from=${file%%/*}
  [ -n "$inc" ] && [ "$inc" != "$from" ] || continue
  edges["$from -> $inc"]+=" ${file#*/}"
done < <(grep -rn '^#include "' --include=*.h --include=*.cpp . | sed 's|^\./||; s|:[0-9]*:|:|')
for edge in $(printf '%s\n' "${!edges[@]}" | tr ' ' '_' | sort); do
  e=${edge//_/ }
  from=${e%% -> *} to=${e##* -> }
  verdict=""
  if [ "$(rank "$to")" -ge "$(rank "$from")" ]; then verdict="  <-- against the order"; status=1; fi
  echo "$e:${edges[$e]}$verdict"
done
exit $status
