//! The shell scripts (`scripts/`, `x`, `.ci/run`): every one parses (`bash -n`), so a script the
//! GPU machine runs once a session does not fail there on a typo; the GPU scripts that check
//! their input refuse bad input in one line with exit status 2 before they look for a GPU or a
//! toolkit; and `copy_bound.sh`'s and `cub_lookahead.sh`'s summaries and `warpspec_rounds.py`'s
//! table, rerun on the committed runs, print what those runs' folders hold (the figures the docs
//! quote).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Failed, Trial};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `*.sh` below `dir`, in a stable order.
fn shell_scripts(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            shell_scripts(&path, found)?;
        } else if path.extension().is_some_and(|x| x == "sh") {
            found.push(path);
        }
    }
    Ok(())
}

/// `bash -n` on every script: syntax only, nothing runs.
fn every_script_parses() -> Result<(), Failed> {
    let root = Path::new(ROOT);
    let mut scripts = vec![root.join("x"), root.join(".ci/run")];
    shell_scripts(&root.join("scripts"), &mut scripts)?;
    if scripts.len() < 20 {
        return Err(format!("only {} scripts found under scripts/: {scripts:?}", scripts.len()).into());
    }
    let mut bad = Vec::new();
    for s in &scripts {
        let out = Command::new("bash").arg("-n").arg(s).output().map_err(|e| format!("cannot run bash -n: {e}"))?;
        if !out.status.success() {
            bad.push(format!("{}: {}", s.display(), String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    if bad.is_empty() { Ok(()) } else { Err(format!("scripts that do not parse:\n{}", bad.join("\n")).into()) }
}

/// `./x test` runs every example of `examples/` (its `for example in …` line, or by name
/// elsewhere in `x`, as `scanner_time` is): an example added and not listed would go untested.
fn x_runs_every_example() -> Result<(), Failed> {
    let root = Path::new(ROOT);
    let x = std::fs::read_to_string(root.join("x"))?;
    let list = x
        .lines()
        .find_map(|l| l.trim().strip_prefix("for example in "))
        .and_then(|l| l.strip_suffix("; do"))
        .ok_or("x has no `for example in …; do` line")?;
    let listed: Vec<&str> = list.split_whitespace().collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("examples"))? {
        let path = entry?.path();
        let Some(name) = path.file_stem().and_then(|n| n.to_str()) else { continue };
        if path.extension().is_some_and(|e| e == "rs")
            && !listed.contains(&name)
            && !x.contains(&format!("--example {name}"))
        {
            missing.push(name.to_string());
        }
    }
    if listed.len() < 5 {
        return Err(format!("x's example list is only {listed:?}").into());
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("examples that `./x test` does not run: {missing:?} (add them to x's `for example in` line)")
            .into())
    }
}

/// A refusal: exit 2, the one line `want` on stderr, nothing on stdout (`what` names the case).
fn refused(what: &str, out: std::io::Result<Output>, want: &str) -> Result<(), Failed> {
    let out = out.map_err(|e| format!("{what}: cannot run: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) || err != want || !out.stdout.is_empty() {
        return Err(format!(
            "{what}: expected exit 2 and {want:?}, got {:?}, stderr {err:?}, stdout {:?}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
        )
        .into());
    }
    Ok(())
}

/// A summary run again over a committed run `folder`: exit 0 and stdout exactly `committed`.
fn reprinted(what: &str, folder: &Path, out: std::io::Result<Output>, committed: &str) -> Result<(), Failed> {
    let out = out.map_err(|e| format!("cannot run {what}: {e}"))?;
    let printed = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || printed != committed {
        return Err(format!(
            "{}: {what} printed (exit {:?})\n{printed}\nbut the folder holds\n{committed}",
            folder.display(),
            out.status.code()
        )
        .into());
    }
    Ok(())
}

/// Runs `scripts/gpu/copy_bound.sh` with `var=value`; expects one line on stderr, `want`,
/// nothing on stdout and exit 2.
fn copy_bound_refuses(var: &str, value: &str, want: &str) -> Result<(), Failed> {
    let out = Command::new(Path::new(ROOT).join("scripts/gpu/copy_bound.sh"))
        .env(var, value)
        .env("OUT", std::env::temp_dir())
        .output();
    refused(&format!("copy_bound.sh {var}={value}"), out, want)
}

/// `scripts/gpu/copy_bound.sh` with ROUNDS that is no whole number ≥ 1: one line on stderr
/// naming ROUNDS and the value, nothing on stdout, exit 2, before it looks for nvcc.
fn copy_bound_refuses_bad_rounds() -> Result<(), Failed> {
    for rounds in ["0", "00", "x", "-1", "2.5"] {
        copy_bound_refuses(
            "ROUNDS",
            rounds,
            &format!("copy_bound.sh: ROUNDS must be a whole number ≥ 1, not '{rounds}'\n"),
        )?;
    }
    Ok(())
}

/// `scripts/gpu/copy_bound.sh` with PROGRAMS naming a program it does not have, or none: one
/// line naming the allowed ones, exit 2, before it looks for nvcc.
fn copy_bound_refuses_bad_programs() -> Result<(), Failed> {
    let allowed = "loaded_latency, copy_kernels or scan_steps";
    for (programs, bad) in [("copy_kernel", "copy_kernel"), ("scan_steps x", "x"), ("*", "*")] {
        copy_bound_refuses("PROGRAMS", programs, &format!("copy_bound.sh: PROGRAMS holds {allowed}, not '{bad}'\n"))?;
    }
    copy_bound_refuses(
        "PROGRAMS",
        " ",
        "copy_bound.sh: PROGRAMS names none of loaded_latency, copy_kernels, scan_steps\n",
    )
}

/// `scripts/gpu/copy_bound_summary.py` on every committed run folder whose `summary.txt` it wrote
/// (its header line) prints that file again, byte for byte; and without a folder it refuses in
/// one line, exit 2.
fn copy_bound_summary_reproduces_the_committed_ones() -> Result<(), Failed> {
    let script = Path::new(ROOT).join("scripts/gpu/copy_bound_summary.py");
    let run = |arg: &Path| Command::new("python3").arg(&script).arg(arg).output();
    let mut checked = 0;
    let measurements = Path::new(ROOT).join("docs/measurements");
    let mut days: Vec<_> = std::fs::read_dir(&measurements)?.collect::<Result<_, _>>()?;
    days.sort_by_key(|e| e.path());
    for day in days.iter().filter(|d| d.path().is_dir()) {
        for folder in std::fs::read_dir(day.path())? {
            let folder = folder?.path();
            let Ok(committed) = std::fs::read_to_string(folder.join("summary.txt")) else { continue };
            if !committed.starts_with("kernel ") || !committed.lines().next().is_some_and(|l| l.contains("× copy")) {
                continue;
            }
            reprinted("copy_bound_summary.py", &folder, run(&folder), &committed)?;
            checked += 1;
        }
    }
    if checked < 5 {
        return Err(format!("only {checked} committed summaries found; expected the 5 scan-steps runs at least").into());
    }
    let want = "copy_bound_summary.py: give one folder, copy_bound.sh's OUT\n";
    refused("copy_bound_summary.py without a folder", run(&measurements.join("no-such-run")), want)
}

/// The committed runs of `scripts/gpu/cub_lookahead.sh` (folders `cub-lookahead-*`).
fn cub_lookahead_runs() -> Result<Vec<PathBuf>, Failed> {
    let mut runs = Vec::new();
    for day in std::fs::read_dir(Path::new(ROOT).join("docs/measurements"))? {
        for folder in std::fs::read_dir(day?.path()).into_iter().flatten() {
            let folder = folder?.path();
            if folder.file_name().is_some_and(|f| f.to_string_lossy().starts_with("cub-lookahead-")) {
                runs.push(folder);
            }
        }
    }
    runs.sort();
    Ok(runs)
}

/// `scripts/gpu/cub_lookahead.sh` on each committed run, its program replaced by one that prints
/// the run's CSV of the size asked for: its summary is the run's `summary.txt`, byte for byte.
/// And with no program, or ROUNDS that is no number: one line, exit 2.
fn cub_lookahead_summary_reproduces_the_committed_ones() -> Result<(), Failed> {
    let script = Path::new(ROOT).join("scripts/gpu/cub_lookahead.sh");
    let runs = cub_lookahead_runs()?;
    if runs.len() < 2 {
        return Err(format!("expected the H100 and H200 cub-lookahead runs, found {runs:?}").into());
    }
    let dir = crate::common::private_dir("cub-lookahead-test-")?;
    let fake = dir.path().join("cub_lookahead");
    std::fs::write(&fake, "#!/bin/sh\ncat \"$RUN/cub_lookahead_$2.csv\"\n")?;
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    for run in &runs {
        // The run's sizes, in the order its summary lists them (the script's default order).
        let mut sizes: Vec<u64> = std::fs::read_dir(run)?
            .filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().into_owned();
                name.strip_prefix("cub_lookahead_")?.strip_suffix(".csv")?.parse().ok()
            })
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        let sizes = sizes.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
        let out = Command::new(&script)
            .env("CUB_LOOKAHEAD", &fake)
            .env("RUN", run)
            .env("SIZES", sizes)
            .env_remove("ROUNDS")
            .env("OUT", dir.path().join("out"))
            .output();
        reprinted("cub_lookahead.sh", run, out, &std::fs::read_to_string(run.join("summary.txt"))?)?;
    }
    for (var, value, want) in [
        ("CUB_LOOKAHEAD", "", "cub_lookahead.sh: set CUB_LOOKAHEAD to the built program (got '')\n"),
        ("ROUNDS", "x", "cub_lookahead.sh: ROUNDS must be a whole number from 1 to 100, not 'x'\n"),
        ("ROUNDS", "0", "cub_lookahead.sh: ROUNDS must be a whole number from 1 to 100, not '0'\n"),
        ("SIZES", " ", "cub_lookahead.sh: SIZES names no size (sizes from 1 to 2^30, e.g. \"268435456 100000000\")\n"),
        ("SIZES", "1e8 5", "cub_lookahead.sh: SIZES holds sizes from 1 to 2^30, not '1e8 5'\n"),
        ("SIZES", "2147483648", "cub_lookahead.sh: SIZES holds sizes from 1 to 2^30, not '2147483648'\n"),
    ] {
        let out = Command::new(&script)
            .env_remove("SIZES")
            .env_remove("ROUNDS")
            .env("CUB_LOOKAHEAD", &fake)
            .env(var, value)
            .env("OUT", dir.path().join("refused"))
            .output();
        refused(&format!("cub_lookahead.sh {var}={value:?}"), out, want)?;
    }
    Ok(())
}

/// `scripts/gpu/warpspec_rounds.py` on the H200's spaced sweep prints the per-round table its
/// README holds, line for line; without a folder it refuses in one line, exit 2.
fn warpspec_rounds_reproduces_the_readme_table() -> Result<(), Failed> {
    let script = Path::new(ROOT).join("scripts/gpu/warpspec_rounds.py");
    let folder = Path::new(ROOT).join("docs/measurements/2026-11-28-h200/warpspec-plan-spaced-52870fc");
    let out =
        Command::new("python3").arg(&script).arg(&folder).output().map_err(|e| format!("cannot run python3: {e}"))?;
    let table = String::from_utf8_lossy(&out.stdout);
    let readme = std::fs::read_to_string(folder.join("README.md"))?;
    if !out.status.success() || table.lines().count() < 10 || !readme.contains(table.as_ref()) {
        return Err(format!(
            "warpspec_rounds.py printed (exit {:?})\n{table}\nwhich README.md does not hold",
            out.status.code()
        )
        .into());
    }
    let want = "warpspec_rounds.py: give one folder with a warpspec_sweep.csv in each type's folder\n";
    refused("warpspec_rounds.py without a folder", Command::new("python3").arg(&script).output(), want)?;
    let empty = crate::common::private_dir("warpspec-rounds-test-")?;
    let want = format!(
        "warpspec_rounds.py: {} has no <type>/warpspec_sweep.csv (i32, u32, i64, u64, f32, f64)\n",
        empty.path().display()
    );
    refused(
        "warpspec_rounds.py on a folder without sweeps",
        Command::new("python3").arg(&script).arg(empty.path()).output(),
        &want,
    )
}

/// A stand-in `reduce` for `builds_ab.sh`: one CSV row a call, whose columns depend on `--op` as
/// the real command line's do (a select's, a segmented reduction's, a reduction's); `--op
/// bogus` is refused. Its time is its build folder's name's length, so the builds differ.
const STAND_IN_REDUCE: &str = r##"#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/calls.log"
op=reduce; n=-; while [ $# -gt 0 ]; do case $1 in --op) op=$2; shift;; --n) n=$2; shift;; esac; shift; done
t=$(basename "$(dirname "$0")" | wc -c)
case $op in
  bogus) echo "error: no operation bogus" >&2; exit 2;;
  select) echo "# a comment line"; echo "operation,type,keep,n,time_us_median,verdict"; echo "select,i32,lt:5,$n,$t,PASS";;
  segmented) echo "operation,type,combine,segments,n,time_us_median,verdict"; echo "segmented,f32,min,10,$n,$t,PASS";;
  *) echo "variant,type,n,time_us_median,verdict"; echo "atomic_accumulate,f32,$n,$t,PASS";;
esac
"##;

/// `scripts/gpu/builds_ab.sh` with two stand-in builds and rows of three operations: each set of
/// columns in a file of its own with its header (`ab.csv`, `ab_2.csv`, `ab_3.csv`), every line
/// naming its build, round and row; `--n` only where the row names no size; a refused row in
/// `refused.txt` and exit status 1. Then `scripts/ab_table.py` tables the three files.
fn builds_ab_splits_by_columns() -> Result<(), Failed> {
    let dir = crate::common::private_dir("builds-ab-test-")?;
    for build in ["main", "change"] {
        let folder = dir.path().join("builds").join(build);
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join("reduce"), STAND_IN_REDUCE)?;
        std::fs::set_permissions(folder.join("reduce"), std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    }
    let rows = dir.path().join("rows.txt");
    std::fs::write(
        &rows,
        "# a comment\n--op segmented --segments 10\n--op select --type i32\n\n--type f32 --combine min\n\
         --op segmented --log2 20\n--op bogus\n",
    )?;
    let out = dir.path().join("out");
    let run = Command::new(Path::new(ROOT).join("scripts/gpu/builds_ab.sh"))
        .arg(dir.path().join("builds"))
        .arg(&rows)
        .env("OUT", &out)
        .env("BUILDS", "main change")
        .env("ROUNDS", "2")
        .env("N", "64")
        .env_remove("GUARD")
        .env_remove("FIRST_ROUND")
        .output()?;
    if run.status.code() != Some(1) {
        return Err(format!("builds_ab.sh exited {:?} (1 expected: a row was refused)", run.status.code()).into());
    }
    let read = |name: &str| std::fs::read_to_string(out.join(name)).map_err(|e| format!("{name}: {e}"));
    let segmented = read("ab.csv")?;
    let want_head = "build,round,row,operation,type,combine,segments,n,time_us_median,verdict\n\
                     main,1,\"--op segmented --segments 10\",segmented,f32,min,10,64,5,PASS\n\
                     change,1,\"--op segmented --segments 10\",segmented,f32,min,10,64,7,PASS\n\
                     main,1,\"--op segmented --log2 20\",segmented,f32,min,10,-,5,PASS\n";
    if !segmented.starts_with(want_head) || segmented.lines().count() != 9 {
        return Err(format!("ab.csv:\n{segmented}\nwanted 9 lines starting\n{want_head}").into());
    }
    // Round 2 starts with the other build (the order rotates).
    if !segmented.contains("\nchange,2,\"--op segmented --segments 10\",segmented,f32,min,10,64,7,PASS\nmain,2,") {
        return Err(format!("ab.csv's round 2 does not start with `change`:\n{segmented}").into());
    }
    let select = read("ab_2.csv")?;
    if !select.starts_with("build,round,row,operation,type,keep,n,time_us_median,verdict\nmain,1,\"--op select --type i32\",select,i32,lt:5,64,5,PASS\n")
        || select.lines().count() != 5
    {
        return Err(format!("ab_2.csv:\n{select}").into());
    }
    let reduce = read("ab_3.csv")?;
    if !reduce.starts_with("build,round,row,variant,type,n,time_us_median,verdict\n") || reduce.lines().count() != 5 {
        return Err(format!("ab_3.csv:\n{reduce}").into());
    }
    let refused_rows = read("refused.txt")?;
    if refused_rows.lines().count() != 4 || !refused_rows.starts_with("main,1,\"--op bogus\"\n") {
        return Err(format!("refused.txt:\n{refused_rows}").into());
    }
    let table = Command::new("python3")
        .arg(Path::new(ROOT).join("scripts/ab_table.py"))
        .args(["ab.csv", "ab_2.csv", "ab_3.csv"].map(|f| out.join(f)))
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let want = "| row | main | change |\n|---|---|---|\n\
                | --op segmented --segments 10 | 5.0–5.0 | 7.0–7.0 (+40.0%) |\n\
                | --op segmented --log2 20 | 5.0–5.0 | 7.0–7.0 (+40.0%) |\n\
                | --op select --type i32 | 5.0–5.0 | 7.0–7.0 (+40.0%) |\n\
                | --type f32 --combine min | 5.0–5.0 | 7.0–7.0 (+40.0%) |\n";
    let got = String::from_utf8_lossy(&table.stdout);
    if !table.status.success() || got != want {
        return Err(format!("ab_table.py printed (exit {:?})\n{got}\nwanted\n{want}", table.status.code()).into());
    }
    Ok(())
}

/// `harness_cache.sh`: `save` takes the cache's regular files (not a link, not a folder, not a
/// build's hidden folder); `restore` puts them into a new cache folder of mode 0700, not
/// writable by group or others, the executable bit kept, a file already there kept; a missing
/// tarball is nothing to restore (exit 0); bad arguments exit 2.
fn harness_cache_saves_and_restores() -> Result<(), Failed> {
    use std::os::unix::fs::PermissionsExt;
    let dir = crate::common::private_dir("harness-cache-test-")?;
    let (from, to, out) = (dir.path().join("from"), dir.path().join("to"), dir.path().join("out"));
    for d in [&from, &out, &from.join(".build-x")] {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(from.join("cub_bench_sm_90_k"), "harness")?;
    std::fs::set_permissions(from.join("cub_bench_sm_90_k"), std::fs::Permissions::from_mode(0o775))?;
    std::fs::write(from.join("cub_bench_k.cu"), "source")?;
    std::os::unix::fs::symlink("/bin/sh", from.join("a_link"))?;
    let script = Path::new(ROOT).join("scripts/gpu/harness_cache.sh");
    let run = |cache: &Path, args: &[&std::ffi::OsStr]| -> Result<Output, Failed> {
        Ok(Command::new(&script).args(args).env("REDUCE_CUB_CACHE", cache).output()?)
    };
    let code = |o: &Output| o.status.code();
    let saved = run(&from, &["save".as_ref(), out.as_os_str()])?;
    let tgz = out.join("harness.tgz");
    let restored = run(&to.join("cache"), &["restore".as_ref(), tgz.as_os_str()])?;
    std::fs::write(to.join("cache/cub_bench_k.cu"), "kept")?; // a file already there: kept
    let again = run(&to.join("cache"), &["restore".as_ref(), tgz.as_os_str()])?;
    if code(&saved) != Some(0) || code(&restored) != Some(0) || code(&again) != Some(0) {
        return Err(format!(
            "exit {:?}, {:?}, {:?}: {}",
            code(&saved),
            code(&restored),
            code(&again),
            String::from_utf8_lossy(&restored.stderr)
        )
        .into());
    }
    let cache = to.join("cache");
    let mut names: Vec<_> = std::fs::read_dir(&cache)?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
    names.sort();
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
    if names != ["cub_bench_k.cu", "cub_bench_sm_90_k"]
        || mode(&cache)? != 0o700
        || mode(&cache.join("cub_bench_sm_90_k"))? != 0o755
        || std::fs::read_to_string(cache.join("cub_bench_k.cu"))? != "kept"
        || !String::from_utf8_lossy(&again.stdout).contains("0 files restored")
    {
        return Err(format!(
            "the cache after restore: {names:?}, modes {:o} {:o}",
            mode(&cache)?,
            mode(&cache.join("cub_bench_sm_90_k"))?
        )
        .into());
    }
    let missing = run(&cache, &["restore".as_ref(), out.join("none.tgz").as_os_str()])?;
    let bogus = run(&cache, &["bogus".as_ref(), out.as_os_str()])?;
    let short = run(&cache, &["save".as_ref()])?;
    if code(&missing) != Some(0) || code(&bogus) != Some(2) || code(&short) != Some(2) {
        return Err(format!(
            "missing tarball {:?} (0 wanted), bad word {:?}, one argument {:?} (2 wanted)",
            code(&missing),
            code(&bogus),
            code(&short)
        )
        .into());
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("scripts::every_script_parses", every_script_parses),
        Trial::test("scripts::x_runs_every_example", x_runs_every_example),
        Trial::test("scripts::copy_bound_refuses_bad_rounds", copy_bound_refuses_bad_rounds),
        Trial::test("scripts::copy_bound_refuses_bad_programs", copy_bound_refuses_bad_programs),
        Trial::test(
            "scripts::copy_bound_summary_reproduces_the_committed_ones",
            copy_bound_summary_reproduces_the_committed_ones,
        ),
        Trial::test(
            "scripts::cub_lookahead_summary_reproduces_the_committed_ones",
            cub_lookahead_summary_reproduces_the_committed_ones,
        ),
        Trial::test("scripts::builds_ab_splits_by_columns", builds_ab_splits_by_columns),
        Trial::test("scripts::harness_cache_saves_and_restores", harness_cache_saves_and_restores),
        Trial::test(
            "scripts::warpspec_rounds_reproduces_the_readme_table",
            warpspec_rounds_reproduces_the_readme_table,
        ),
    ]
}
