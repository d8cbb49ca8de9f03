#!/usr/bin/env bash
# The learner's loop before and after a change, in interleaved rounds on one machine: each round
# runs scripts/learner_loop.sh (5 edits of interleaved.rs, `./x run --backend emulator --variant
# interleaved --log2 16`) in the other checkout, then in this one. Prints one CSV line per edit.
#
#   scripts/learner_loop_pair.sh OTHER_CHECKOUT [ROUNDS]     (ROUNDS defaults to 3)
#
# OTHER_CHECKOUT is a worktree at the commit to compare with (git worktree add DIR COMMIT); its
# first round builds its emulator binary if needed (not timed: the script's warm-up run).
set -euo pipefail
cd "$(dirname "$0")/.."
other=${1:?usage: scripts/learner_loop_pair.sh OTHER_CHECKOUT [ROUNDS]}
rounds=${2:-3}
[ -x "$other/scripts/learner_loop.sh" ] || { echo "learner_loop_pair: $other has no scripts/learner_loop.sh" >&2; exit 2; }
echo "checkout,commit,round,variant,edit,seconds"
for round in $(seq 1 "$rounds"); do
  for dir in "$other" "$PWD"; do
    commit=$(git -C "$dir" rev-parse --short HEAD)
    name=$([ "$dir" = "$PWD" ] && echo this || echo other)
    echo "learner_loop_pair: round $round, $name ($commit)" >&2
    (cd "$dir" && CSV=1 scripts/learner_loop.sh) | sed "s/^/$name,$commit,$round,/"
  done
done
