#!/usr/bin/env bash
# The CUB and CUDA C harnesses that `reduce --compare-cub`, `--compare-c` and the GPU tests build
# with nvcc on a GPU host, carried from one device call to the next, so that a fresh host skips
# their build (60–140 s of device time on an H200 host, sessions 53–58).
#
#   scripts/gpu/harness_cache.sh save OUT_DIR    end of a call: the cache's files into OUT_DIR/harness.tgz
#   scripts/gpu/harness_cache.sh restore FILE    start of a call: FILE's files into the cache
#
# Keep the tarball that comes back under .gpu/ here (`cp …/harness.tgz .gpu/`) and carry it.
# The cache is the runtime's (runtime/src/private.rs): $REDUCE_CUB_CACHE, else
# $XDG_CACHE_HOME/reduce-scan (an absolute one), else ~/.cache/reduce-scan. A harness's name
# hashes its source, the architecture and nvcc's path, so a restored file that no longer matches
# is never run, only left beside the new build. `save` takes the cache's regular files (not
# links, not folders). `restore` creates the cache where it is missing and sets it to mode 0700
# (what the runtime asks of it, an existing one too), extracts
# into a private folder inside it, and moves in only regular files of plain names, owned by this
# user and not writable by group or others (what the runtime checks before it runs a program); a
# file already in the cache is kept. Exit status 0 when done (restore: also when FILE does not
# exist, said on stderr: nothing to restore on a first call), 1 when tar failed, 2 on bad
# arguments or no cache folder.
set -uo pipefail
usage="usage: harness_cache.sh save OUT_DIR | restore FILE"
[ $# -eq 2 ] || { echo "harness_cache: two arguments expected, $# given; $usage" >&2; exit 2; }
what=$1; path=$2
if [ -n "${REDUCE_CUB_CACHE:-}" ]; then cache=$REDUCE_CUB_CACHE
elif [[ ${XDG_CACHE_HOME:-} == /* ]]; then cache=$XDG_CACHE_HOME/reduce-scan
elif [ -n "${HOME:-}" ]; then cache=$HOME/.cache/reduce-scan
else echo "harness_cache: no cache folder: set REDUCE_CUB_CACHE, XDG_CACHE_HOME or HOME" >&2; exit 2
fi
case $what in
  save)
    [ -d "$path" ] || { echo "harness_cache: no folder $path to save into; $usage" >&2; exit 2; }
    [ -d "$cache" ] || { echo "harness_cache: no cache at $cache: nothing built, nothing saved" >&2; exit 0; }
    list=$(find "$cache" -mindepth 1 -maxdepth 1 -type f -printf '%f\n' | grep -v '^\.' | sort)
    [ -n "$list" ] || { echo "harness_cache: the cache at $cache is empty: nothing saved" >&2; exit 0; }
    tar czf "$path/harness.tgz" -C "$cache" -T - <<< "$list" || exit 1
    echo "harness_cache: $(wc -l <<< "$list") files of $cache in $path/harness.tgz ($(du -h "$path/harness.tgz" | cut -f1))"
    ;;
  restore)
    [ -e "$path" ] || { echo "harness_cache: no $path: nothing to restore (the harnesses build on first use)" >&2; exit 0; }
    [ -f "$path" ] || { echo "harness_cache: $path is not a file; $usage" >&2; exit 2; }
    mkdir -p "$cache" && chmod 700 "$cache" || { echo "harness_cache: cannot make the cache $cache" >&2; exit 2; }
    tmp=$(mktemp -d "$cache/.restore.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    tar xzf "$path" -C "$tmp" --no-same-owner || exit 1
    kept=0; moved=0
    while IFS= read -r -d '' f; do
      name=${f##*/}
      if [ -e "$cache/$name" ]; then kept=$((kept + 1)); continue; fi
      chmod go-w "$f" && mv -n "$f" "$cache/$name" && moved=$((moved + 1))
    done < <(find "$tmp" -mindepth 1 -maxdepth 1 -type f -name '[!.]*' -print0)
    echo "harness_cache: $moved files restored into $cache ($kept already there, kept)"
    ;;
  *) echo "harness_cache: '$what' is neither save nor restore; $usage" >&2; exit 2 ;;
esac
