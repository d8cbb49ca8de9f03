#!/usr/bin/env bash
# Session 55, call 1: (1) datapath.cu, the data path of select at 1 % kept in CUDA C (a
# decomposition: shared tile by cp.async against registers, with and without step 4b's prefetch
# and select's occupancy), 3 rounds; (2) ncu (--set full, boost clocks) of main's select i32 at
# lt:10 and lt:500 with source pages; (3) an A/B of main against three one-constant builds
# (pf660, pf825: SELECT_PREFETCH_TILES; s8: SELECT_STATUS_SPACING=8), 2 rounds of six rows.
set -u
D=docs/measurements/2026-12-01-h200/datapath
R=$OUT/r55a; mkdir -p $R; t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $R/device.txt
mkdir -p .gpu/ab && tar xJf .gpu/ab55a.tar.xz -C .gpu/ab
for b in main pf660 pf825 s8; do echo "$b: $(cat .gpu/ab/$b/COMMIT)" >> $R/device.txt; done
nvcc -O3 -arch=sm_90 -o /tmp/datapath $D/datapath.cu > $R/nvcc.log 2>&1 && timeout 60 /tmp/datapath 3 > $R/datapath.csv 2> $R/datapath.err
echo "datapath exit $? at $((SECONDS-t0)) s" >> $R/times.log
for k in 10 500; do
  timeout 60 ncu --set full --import-source no --clock-control none -k regex:select__i32 -c 1 -f -o $R/lt$k .gpu/ab/main/reduce --backend gpu --op select --type i32 --predicate lt:$k --n 268435456 --repeat 1 > $R/ncu_lt$k.log 2>&1
  echo "ncu lt:$k exit $? at $((SECONDS-t0)) s" >> $R/times.log
  ncu -i $R/lt$k.ncu-rep --page source --csv --print-source sass > $R/lt${k}_source.csv 2>>$R/times.log
  ncu -i $R/lt$k.ncu-rep --page details --csv > $R/lt${k}_details.csv 2>>$R/times.log
done
rm -f $R/*.ncu-rep
OUT=$R/ab ROUNDS=2 GUARD=300 BUILDS="main pf660 pf825 s8" timeout 470 scripts/gpu/builds_ab.sh .gpu/ab $D/runs/rows_55a.txt
echo "ab exit $? at $((SECONDS-t0)) s" >> $R/times.log
cd $OUT && tar czf r55a.tgz r55a
