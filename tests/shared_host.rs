//! Issue 41, safe on a shared GPU host: the `reduce` command line against a harness cache that
//! another user of the machine could have written to. Each test runs `reduce` as a process of
//! its own, with an environment of its own (this test binary again, [`AS_REDUCE`] set, is the
//! command line), and plays the other user: a folder or a program writable by others, or
//! another user's (as root, given to uid 65534; as anyone else, `/`, which is root's). The
//! refusal comes before anything runs, on any backend, so the emulator shows it without a GPU;
//! `cli/src/cub.rs`'s unit tests build and run a stand-in harness through a stand-in nvcc.
//! Every line a test sees must be in `docs/bad-input.md`, the path and the uids written
//! `DIR`/`FILE`, `OTHER` and `YOU`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use libtest_mimic::{Failed, Trial};

/// Set in a child's environment: the test binary then runs `reduce`'s command line instead.
pub const AS_REDUCE: &str = "REDUCE_TEST_AS_REDUCE";

const DOC: &str = include_str!("../docs/bad-input.md");

/// A run that asks for both comparisons, on the emulator.
const COMPARE: &[&str] = &[
    "--compare-cub",
    "--compare-c",
    "--backend",
    "emulator",
    "--n",
    "100",
    "--variant",
    "interleaved",
    "--repeat",
    "1",
    "--format",
    "csv",
];

/// What a run of `reduce` left: exit status, stdout, stderr.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

/// `reduce ARGS` in a child process whose cache variables and `TMPDIR` are cleared, then set
/// from `env`.
fn reduce(args: &[&str], env: &[(&str, &Path)]) -> Result<Run, Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(args).env(AS_REDUCE, "1");
    for var in ["REDUCE_CUB_CACHE", "XDG_CACHE_HOME", "HOME", "TMPDIR"] {
        cmd.env_remove(var);
    }
    let out = cmd.envs(env.iter().copied()).output().map_err(|e| e.to_string())?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(Run { code: out.status.code(), out: text(&out.stdout), err: text(&out.stderr) })
}

/// A private folder for one test (the `tempfile` crate: random name, mode 0700).
fn private() -> Result<tempfile::TempDir, Failed> {
    Ok(crate::common::private_dir("reduce-shared-host-")?)
}

fn chmod(path: &Path, mode: u32) -> Result<(), Failed> {
    Ok(std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| e.to_string())?)
}

/// Makes `path` another user's (uid 65534), as root can; `false` where this process is not
/// root (`/proc/self` belongs to the process's effective uid).
fn give_away(path: &Path) -> Result<bool, Failed> {
    let root = std::fs::metadata("/proc/self").map_err(|e| e.to_string())?.uid() == 0;
    if root {
        std::os::unix::fs::lchown(path, Some(65534), Some(65534)).map_err(|e| e.to_string())?;
    }
    Ok(root)
}

/// Plants a program at `path` that, were it run, would leave `ran` behind.
fn plant(path: &Path, ran: &Path) -> Result<(), Failed> {
    std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).map_err(|e| e.to_string())?;
    chmod(path, 0o777)
}

/// The run was refused: exit status 2, nothing on stdout, one line on stderr, which starts with
/// `want` and which the doc shows, once `path` reads `name` ([`general`] for the rest).
fn refused(run: &Run, path: &Path, name: &str, want: &str) -> Result<(), Failed> {
    let line = run.err.trim_end();
    let p = path.display();
    let shown = general(
        &line.replace(&format!(" {p} "), &format!(" {name} ")).replace(&format!(" {p})"), &format!(" {name})")),
    );
    let mut wrong = Vec::new();
    if run.code != Some(2) || !run.out.is_empty() || run.err.lines().count() != 1 {
        wrong.push(format!(
            "exit status {:?}, {} lines on stderr: expected 2, one line",
            run.code,
            run.err.lines().count()
        ));
    }
    if !shown.starts_with(want) {
        wrong.push(format!("the line does not start with `{want}`"));
    }
    if !DOC.contains(&format!("`` {shown} ``")) {
        wrong.push(format!("docs/bad-input.md does not show `` {shown} ``"));
    }
    match wrong[..] {
        [] => Ok(()),
        _ => Err(format!("{}\nstdout:\n{}stderr:\n{}", wrong.join("\n"), run.out, run.err).into()),
    }
}

/// `belongs to uid A, not to you (uid B)` as `belongs to uid OTHER, not to you (uid YOU)`, and
/// `(mode 0777)` as `(mode MODE)`: the line as the doc shows it.
fn general(line: &str) -> String {
    let mut line = line.to_string();
    for (from, to, value) in [
        ("belongs to uid ", ", not to you (uid ", "OTHER"),
        (", not to you (uid ", ")", "YOU"),
        ("(mode ", ")", "MODE"),
    ] {
        if let Some(at) = line.find(from).map(|at| at + from.len())
            && let Some(end) = line[at..].find(to).map(|end| at + end)
        {
            line.replace_range(at..end, value);
        }
    }
    line
}

fn a_cache_folder_writable_by_others_is_refused() -> Result<(), Failed> {
    let root = private()?;
    let cache = root.path().join("cache");
    std::fs::create_dir(&cache).map_err(|e| e.to_string())?;
    let env = [("REDUCE_CUB_CACHE", cache.as_path())];
    let want = "error: invalid request: the harness cache DIR is writable by group or others";
    for (mode, args) in [
        (0o777, COMPARE),
        (0o775, &["--compare-cub", "--backend", "emulator", "--n", "10"][..]),
        (0o757, &["--compare-c", "--backend", "emulator", "--n", "10"][..]),
        (0o770, &["--op", "scan", "--compare-cub", "--backend", "emulator", "--n", "10"][..]),
    ] {
        chmod(&cache, mode)?;
        let run = reduce(args, &env)?;
        refused(&run, &cache, "DIR", want)
            .map_err(|e| format!("mode {mode:o}, {args:?}: {}", e.message().unwrap_or("")))?;
    }
    // Without --compare-cub or --compare-c no harness runs, so the cache is not looked at.
    let run = reduce(&["--backend", "emulator", "--n", "100", "--variant", "interleaved"], &env)?;
    if run.code != Some(0) {
        return Err(format!("a run without comparisons was refused:\n{}", run.err).into());
    }
    Ok(())
}

fn another_users_cache_folder_is_refused() -> Result<(), Failed> {
    let root = private()?;
    let mut cache = root.path().join("cache");
    std::fs::create_dir(&cache).map_err(|e| e.to_string())?;
    chmod(&cache, 0o700)?;
    if !give_away(&cache)? {
        cache = "/".into();
    }
    let run = reduce(COMPARE, &[("REDUCE_CUB_CACHE", cache.as_path())])?;
    refused(&run, &cache, "DIR", "error: invalid request: the harness cache DIR belongs to uid OTHER, not to you")
}

fn a_cached_harness_writable_by_others_or_another_users_is_refused() -> Result<(), Failed> {
    let root = private()?;
    let (cache, ran) = (root.path().join("cache"), root.path().join("ran"));
    std::fs::create_dir(&cache).map_err(|e| e.to_string())?;
    chmod(&cache, 0o700)?;
    let harness = cache.join("cub_bench_sm_90_0123456789abcdef");
    plant(&harness, &ran)?;
    let env = [("REDUCE_CUB_CACHE", cache.as_path())];
    let want = "error: invalid request: the cached harness FILE is writable by group or others (mode MODE)";
    refused(&reduce(COMPARE, &env)?, &harness, "FILE", want)?;
    chmod(&harness, 0o700)?;
    if give_away(&harness)? {
        let want = "error: invalid request: the cached harness FILE belongs to uid OTHER, not to you";
        refused(&reduce(COMPARE, &env)?, &harness, "FILE", want)?;
    }
    std::fs::remove_file(&harness).map_err(|e| e.to_string())?;
    // A link in the cache: only its owner could have made it, but the cache holds none of its own.
    let link = cache.join("classic_sm_90_0123456789abcdef");
    std::os::unix::fs::symlink("/bin/sh", &link).map_err(|e| e.to_string())?;
    let want = "error: invalid request: the cached harness FILE is not a regular file";
    refused(&reduce(COMPARE, &env)?, &link, "FILE", want)?;
    std::fs::remove_file(&link).map_err(|e| e.to_string())?;
    // The same folder, now holding only this user's private files, is used.
    std::fs::write(cache.join("classic_0123456789abcdef.cu"), "// a cached source\n").map_err(|e| e.to_string())?;
    let run = reduce(COMPARE, &env)?;
    if run.code != Some(0) || !run.out.contains("PASS") {
        return Err(format!("a private cache was refused: {:?}\n{}{}", run.code, run.out, run.err).into());
    }
    if ran.exists() { Err("a refused harness ran".into()) } else { Ok(()) }
}

/// The cache is `$REDUCE_CUB_CACHE`, else `$XDG_CACHE_HOME/reduce-scan` (absolute only), else
/// `~/.cache/reduce-scan`, as each refusal of a folder writable by others shows; the shared temp
/// folder's `reduce-cub` (the old cache) is not looked at, whoever made it and whatever it holds.
fn the_cache_is_in_the_users_own_space() -> Result<(), Failed> {
    let root = private()?;
    let (tmp, home, xdg) = (root.path().join("tmp"), root.path().join("home"), root.path().join("xdg"));
    let (old, ran) = (tmp.join("reduce-cub"), root.path().join("ran"));
    for dir in [&old, &home.join(".cache/reduce-scan"), &xdg.join("reduce-scan")] {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        chmod(dir, 0o777)?;
    }
    for name in ["cub_bench_sm_90_0123456789abcdef", "classic_sm_90_0123456789abcdef"] {
        plant(&old.join(name), &ran)?;
        give_away(&old.join(name))?;
    }
    give_away(&old)?;
    let before = std::fs::read_dir(&tmp).map_err(|e| e.to_string())?.count();
    let run = reduce(COMPARE, &[("TMPDIR", tmp.as_path())])?;
    if run.code != Some(0) || !run.out.contains("PASS") || ran.exists() {
        return Err(format!("the old cache in TMPDIR was used: {:?}\n{}{}", run.code, run.out, run.err).into());
    }
    if std::fs::read_dir(&tmp).map_err(|e| e.to_string())?.count() != before {
        return Err("the run created something in the shared temp folder".into());
    }
    let want = "error: invalid request: the harness cache DIR is writable by group or others";
    let default = home.join(".cache/reduce-scan");
    refused(&reduce(COMPARE, &[("TMPDIR", &tmp), ("HOME", &home)])?, &default, "DIR", want)?;
    let relative = Path::new("relative/cache");
    refused(&reduce(COMPARE, &[("HOME", &home), ("XDG_CACHE_HOME", relative)])?, &default, "DIR", want)?;
    let in_xdg = xdg.join("reduce-scan");
    refused(&reduce(COMPARE, &[("HOME", &home), ("XDG_CACHE_HOME", &xdg)])?, &in_xdg, "DIR", want)
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "shared_host::a_cache_folder_writable_by_others_is_refused",
            a_cache_folder_writable_by_others_is_refused,
        ),
        Trial::test("shared_host::another_users_cache_folder_is_refused", another_users_cache_folder_is_refused),
        Trial::test(
            "shared_host::a_cached_harness_writable_by_others_or_another_users_is_refused",
            a_cached_harness_writable_by_others_or_another_users_is_refused,
        ),
        Trial::test("shared_host::the_cache_is_in_the_users_own_space", the_cache_is_in_the_users_own_space),
    ]
}
