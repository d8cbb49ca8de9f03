# Session 52, call 4 (the one-line command given to the device tool, after run52c.sh's test
# line had passed two filters, which the test binary refuses: r52c/tests.log): select::'s GPU tests.
mkdir -p $OUT/t; xz -dc .gpu/main-tests.xz > .gpu/main-tests; chmod +x .gpu/main-tests; (timeout 120 .gpu/main-tests --include-ignored --skip "[emulator]" select:: ; echo "select exit $?"; timeout 120 .gpu/main-tests --include-ignored --skip "[emulator]" run_length:: ; echo "run_length exit $?") > $OUT/t/tests.log 2>&1; grep -E "test result|exit|FAIL|panick" $OUT/t/tests.log
