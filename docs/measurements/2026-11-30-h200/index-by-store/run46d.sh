#!/usr/bin/env bash
# Session 46, fourth call (warm machine, 172 s left): PyTorch's rows of scripts/gpu/select.sh's
# compaction and run-length sets, one round (select.sh runs the same script after each round).
mkdir -p $OUT/t; s=$SECONDS
python3 scripts/gpu/select_torch.py 268435456 20 select | sed "1s/^/round,/; 2,\$s/^/1,/" > $OUT/t/select_torch.csv; echo "select $((SECONDS-s)) s"
python3 scripts/gpu/select_torch.py 268435456 20 run_length | sed "1s/^/round,/; 2,\$s/^/1,/" > $OUT/t/run_length_torch.csv; echo "run_length $((SECONDS-s)) s"
