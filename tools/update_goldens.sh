#!/usr/bin/env bash
# Regenerates the expected outputs of ptprof's own traces (traces/*/expected/) from their
# commands.txt with the ptprof in BUILD_DIR. Review the diff before committing it.
# Usage: tools/update_goldens.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ptprof="${1:-build}/ptprof"
[ -x "$ptprof" ] || { echo "update_goldens: $ptprof not built" >&2; exit 1; }
for commands in traces/*/expected/commands.txt; do
  dir=$(dirname "$commands")
  # A commands.txt whose header says so keeps only the summary of decode-summary outputs.
  summary_only=$(grep -c 'keep the part from "summary:"' "$commands" || true)
  while IFS=$'\t' read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086  # the arguments are words by design
    if [[ "$summary_only" != 0 && "$name" == decode-summary* ]]; then
      "$ptprof" $args | sed -n '/^summary:/,$p' > "$dir/$name"
    else
      "$ptprof" $args > "$dir/$name"
    fi
    echo "updated $dir/$name"
  done < "$commands"
done
git --no-pager diff --stat -- traces
