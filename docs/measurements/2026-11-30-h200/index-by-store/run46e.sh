#!/usr/bin/env bash
# Session 46, fifth call (the last 140 s): rounds 2 and 3 of the A/B for the rows where the branch
# was slower in round 1, main and the branch in turn, ours only. The machine's limit ended it
# inside the third row (partition f32 flags' round 3 of main, and unique i32 run:1, never ran).
tar xJf .gpu/pack.tar.xz -C .gpu; mkdir -p $OUT/d; f=$OUT/d/ab2.csv
one() { w=$1; r=$2; shift 2; .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 20 --format csv 2>/dev/null | grep -v '^#' | tail -1 | sed "s/^/$w,$r,/" >> $f; }
for row in "--op run_length --type i32 --run 16" "--op partition --type f32 --predicate flags" "--op unique --type i32 --run 1"; do
  one main 2 $row; one branch 2 $row; one branch 3 $row; one main 3 $row; [ $SECONDS -gt 100 ] && break
done
cat $f
