#!/usr/bin/env bash
# Builds the command line (`reduce`) once per variant, for an A/B of builds on a GPU host
# (scripts/gpu/builds_ab.sh), and packs them.
#
#   scripts/build_variants.sh OUT_DIR NAME=REV[,CONST=VALUE...] ...
#
# Each variant is a git revision (a branch, a tag, a commit) and, optionally, new values for
# tuning constants: CONST names a `pub const CONST: TYPE = VALUE;` defined exactly once under
# kernels/src/, whose value is replaced for that build only. For each variant the script checks
# the revision out in this working tree (which must be clean: it refuses otherwise), edits the
# constants, builds `cargo build --release -p reduce-scan-cli --bin reduce` (the target folder is
# shared, so a variant rebuilds only what it changes), copies the stripped binary to
# OUT_DIR/NAME/reduce, writes OUT_DIR/NAME/COMMIT (the commit and the edits), and puts the tree
# back. At the end OUT_DIR.tar.xz holds them all, to carry to the GPU host: copy the tarball
# alone into .gpu/ (the device tool carries at most 64 MiB; the folder is several times that).
#
#   scripts/build_variants.sh /tmp/ab main=main sleep0=exp/select-sleep,SELECT_LOOKBACK_SLEEP_NS=0
#   cp /tmp/ab.tar.xz .gpu/      # there: mkdir -p .gpu/ab && tar xJf .gpu/ab.tar.xz -C .gpu/ab
#
# Exit status 0 when every variant built, 1 when one did not, 2 on bad arguments or a dirty tree.
set -uo pipefail
usage="usage: build_variants.sh OUT_DIR NAME=REV[,CONST=VALUE...] ..."
[ $# -ge 2 ] || { echo "build_variants: an output folder and at least one variant expected; $usage" >&2; exit 2; }
out=$1; shift
git rev-parse --show-toplevel > /dev/null 2>&1 || { echo "build_variants: not inside a git working tree" >&2; exit 2; }
cd "$(git rev-parse --show-toplevel)" || exit 2
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "build_variants: the working tree has uncommitted changes; commit or stash them first" >&2; exit 2
fi
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}
  [[ $spec == *=* && $name =~ ^[A-Za-z0-9_.-]+$ && -n ${rest%%,*} ]] \
    || { echo "build_variants: '$spec' is not NAME=REV[,CONST=VALUE...]; $usage" >&2; exit 2; }
  git rev-parse --verify --quiet "${rest%%,*}^{commit}" > /dev/null \
    || { echo "build_variants: '${rest%%,*}' (in '$spec') is not a revision of this repository" >&2; exit 2; }
done
start=$(git symbolic-ref --quiet --short HEAD || git rev-parse HEAD)
restore() { git checkout -q -- kernels/src 2>/dev/null; git checkout -q "$start"; }
trap restore EXIT
mkdir -p "$out"; status=0
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; rev=${rest%%,*}; edits=""
  [[ $rest == *,* ]] && edits=${rest#*,}
  git checkout -q -- kernels/src && git checkout -q "$rev" || { echo "build_variants: cannot check out $rev" >&2; status=1; continue; }
  ok=1; note=""
  IFS=, read -r -a pairs <<< "$edits"
  for pair in "${pairs[@]}"; do
    c=${pair%%=*}; v=${pair#*=}
    if [[ $pair != *=* || ! $c =~ ^[A-Z][A-Z0-9_]*$ || -z $v ]]; then
      echo "build_variants: '$pair' in '$spec' is not CONST=VALUE" >&2; ok=0; break
    fi
    mapfile -t hits < <(grep -rlE "^\s*pub const $c: [^=]+= [^;]+;" kernels/src)
    if [ ${#hits[@]} -ne 1 ]; then
      echo "build_variants: $c is defined ${#hits[@]} times under kernels/src at $rev (one expected)" >&2; ok=0; break
    fi
    sed -i -E "s/^(\s*pub const $c: [^=]+= )[^;]+;/\1$v;/" "${hits[0]}"
    note+=" $c=$v"
  done
  if [ $ok = 1 ] && cargo build --release -q -p reduce-scan-cli --bin reduce; then
    mkdir -p "$out/$name"
    cp target/release/reduce "$out/$name/reduce" && strip "$out/$name/reduce" 2>/dev/null
    echo "$(git rev-parse --short HEAD) ($rev)${note:+ with$note}" > "$out/$name/COMMIT"
    echo "build_variants: $name: $(cat "$out/$name/COMMIT")"
  else
    echo "build_variants: $name ($spec) did not build" >&2; status=1
  fi
  git checkout -q -- kernels/src
done
tar cJf "$out.tar.xz" -C "$out" . && echo "build_variants: packed $(du -h "$out.tar.xz" | cut -f1) into $out.tar.xz"
exit $status
