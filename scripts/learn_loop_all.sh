#!/usr/bin/env bash
# Edit to verdict for every exercise (issue 40's target: under 1 s on the CI kind of machine):
# for each exercise N of `./x learn`, `scripts/learner_loop.sh` appends a comment to the learner's
# file learn/exercises/NN_*.rs (opened from learn/start/ first where it is not there yet), times
# `./x learn N` to its verdict EDITS times (default 3) after a warm-up, and restores the file.
#
#   scripts/learn_loop_all.sh [EDITS] > learn_check_loop_all.csv
#
# Output: CSV on stdout (commit, exercise, file, edit, seconds); progress on stderr. A learner's
# own edits are kept: the loop restores each file as it found it. Exit status 2 if an exercise
# cannot be opened or its check fails to run (learner_loop.sh's rule: a verdict of "not yet",
# exit status 1, is an answer).
set -euo pipefail
cd "$(dirname "$0")/.."
edits=${1:-3}
case "$edits" in '' | *[!0-9]*) echo "learn_loop_all: EDITS is a whole number (got $edits)" >&2; exit 2 ;; esac
commit=$(git rev-parse --short HEAD)
echo "commit,exercise,file,edit,seconds"
for start in learn/start/[0-9][0-9]_*.rs; do
  name=$(basename "$start")
  n=$((10#${name%%_*}))
  file=learn/exercises/$name
  if [ ! -f "$file" ]; then
    # Opening an exercise copies its starting file in; the verdict itself may be "not yet".
    ./x learn "$n" >/dev/null 2>&1 || [ $? -eq 1 ] || { echo "learn_loop_all: ./x learn $n failed" >&2; exit 2; }
  fi
  [ -f "$file" ] || { echo "learn_loop_all: ./x learn $n did not open $file" >&2; exit 2; }
  echo "learn_loop_all: exercise $n ($file)" >&2
  FILE=$file CSV=1 scripts/learner_loop.sh "ex$n" "$edits" ./x learn "$n" |
    while IFS=, read -r _ edit seconds; do echo "$commit,$n,$file,$edit,$seconds"; done
done
