#!/usr/bin/env bash
# Session 48, second call: ncu (--set full, one launch at 2^28, base clocks) of the rows the
# branch made slower (unique i32 run:16, select i32 flags: main and branch) and of the rows it
# made faster but not enough (select i32 lt:500 and lt:10: main and branch); each report's
# details page as CSV. Stops starting profiles past its time guard.
set -u
O=$OUT/r48b; mkdir -p $O
tar xJf .gpu/pack.tar.xz -C .gpu
t0=$SECONDS
prof() { # name which kernel args...
  local name=$1 w=$2 k=$3; shift 3
  [ $((SECONDS-t0)) -gt 420 ] && { echo "skipped $name $w: time" >> $O/times.log; return; }
  timeout 60 ncu --set full -k regex:$k -c 1 -f -o $O/${name}_$w .gpu/$w/reduce --backend gpu "$@" --n 268435456 --repeat 1 > $O/ncu_${name}_$w.log 2>&1
  echo "ncu $name $w exit $? at $((SECONDS-t0)) s" >> $O/times.log
  ncu -i $O/${name}_$w.ncu-rep --page details --csv > $O/${name}_$w.csv 2>>$O/times.log
}
for w in main branch; do
  prof unique16 $w select__i32 --op unique --type i32 --run 16
  prof flags $w select__i32 --op select --type i32 --predicate flags
  prof lt10 $w select__i32 --op select --type i32 --predicate lt:10
  prof lt500 $w select__i32 --op select --type i32 --predicate lt:500
done
rm -f $O/*.ncu-rep
cd $OUT && tar czf r48b.tgz r48b
