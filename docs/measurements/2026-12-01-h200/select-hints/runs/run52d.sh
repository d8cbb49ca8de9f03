#!/usr/bin/env bash
set -u
R=$OUT/r52d; mkdir -p $R; t0=$SECONDS
mkdir -p .gpu/ab && tar xJf .gpu/ab4.tar.xz -C .gpu/ab
OUT=$R/ab ROUNDS=2 GUARD=120 BUILDS="pfmore rl330" timeout 180 scripts/gpu/builds_ab.sh .gpu/ab .gpu/rows_rl.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r52d.tgz r52d
