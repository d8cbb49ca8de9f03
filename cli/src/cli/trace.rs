//! `reduce trace --variant NAME [--op scan] [--n N] [--block B] [--out FILE.svg]`: one block
//! of a variant's kernels, run on the emulator and drawn barrier interval by barrier interval
//! ([`crate::trace`]).
//!
//! A word before the usual flags, as `report` is: the main command line stays as it was.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::scan::Kind;
use crate::trace::{Subject, capture, svg};
use crate::{Error, Result};

/// Draws what one block of a variant's kernels does, barrier interval by barrier interval:
/// which threads of which warp are active, which words, sectors and banks they touch, and the
/// interval's requests, sectors and bank conflicts. Runs on the CPU emulator (no GPU needed).
#[derive(Parser, Debug)]
#[command(name = "reduce trace", version)]
struct TraceArgs {
    /// The variant to draw (as in `reduce --variant`; `reduce --help` lists them).
    #[arg(long)]
    variant: String,
    /// A reduction or a scan variant.
    #[arg(long, value_enum, default_value = "reduce")]
    op: Op,
    /// Elements (1 to 65536): small, so that every word can be drawn.
    #[arg(long, default_value_t = 1024)]
    n: usize,
    /// Threads per block of a reduction [default: 128] (a scan variant has its own block).
    #[arg(long)]
    block: Option<u32>,
    /// Which scan.
    #[arg(long, value_enum, default_value = "inclusive")]
    kind: KindArg,
    /// Seed of the input.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The SVG file to write [default: trace-VARIANT.svg].
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Op {
    /// A reduction variant.
    Reduce,
    /// A scan variant.
    Scan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum KindArg {
    Inclusive,
    Exclusive,
}

/// Runs `reduce trace …` (`argv[0]` the program, `argv[1]` `trace`). Returns the exit status:
/// 0 drawn, 1 drawn but the variant's result was wrong, 2 bad input or an unwritable `--out`.
pub(super) fn run(argv: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let args: TraceArgs = match super::parse::subcommand("trace", argv, out, err) {
        Ok(a) => a,
        Err(status) => return status,
    };
    match draw(&args, out) {
        Ok(passed) => u8::from(!passed),
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

/// The subject the arguments name, or why not.
fn subject(args: &TraceArgs) -> Result<Subject> {
    match args.op {
        Op::Reduce => {
            let v = crate::registry::find(&args.variant)?;
            Ok(Subject::Reduce(v, args.block.unwrap_or(crate::trace::DEFAULT_BLOCK)))
        }
        Op::Scan => {
            let v = crate::scan::find(&args.variant)?;
            if let Some(b) = args.block.filter(|&b| b != v.block()) {
                return Err(Error::Invalid(format!(
                    "--block {b}: scan variant `{}` runs {} threads per block, its only block size",
                    v.name,
                    v.block()
                )));
            }
            let kind = match args.kind {
                KindArg::Inclusive => Kind::Inclusive,
                KindArg::Exclusive => Kind::Exclusive,
            };
            Ok(Subject::Scan(v, kind))
        }
    }
}

/// Captures, draws and writes the picture; returns whether the variant's result was right.
fn draw(args: &TraceArgs, out: &mut dyn Write) -> Result<bool> {
    let subject = subject(args)?;
    let path = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("trace-{}.svg", subject.name())));
    let traced = capture(subject, args.n, args.seed)?;
    std::fs::write(&path, svg(&traced))
        .map_err(|e| Error::Invalid(format!("cannot write --out {}: {e}", path.display())))?;
    let kernels: Vec<String> = traced
        .kernels
        .iter()
        .map(|k| format!("{} ({} intervals, block 0 of {})", k.kernel, k.trace.intervals.len(), k.grid_blocks))
        .collect();
    let passed = traced.checked.is_some_and(|(_, passed)| passed);
    let verdict = if passed { "PASS" } else { "FAIL: the result differs from the CPU's" };
    let _ = writeln!(out, "wrote {}: {}; {verdict}", path.display(), kernels.join(", "));
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::super::run_captured as run;

    /// `NAME.svg` in a private temporary folder (removed when the first value is dropped).
    fn temp(name: &str) -> (crate::private::PrivateDir, std::path::PathBuf) {
        let dir = crate::private::PrivateDir::new("reduce-trace-").unwrap();
        let path = dir.path().join(format!("{name}.svg"));
        (dir, path)
    }

    #[test]
    fn trace_writes_the_picture_and_names_the_kernels() {
        let (_dir, path) = temp("interleaved");
        let p = path.to_str().unwrap();
        let (code, out, err) = run(&["reduce", "trace", "--variant", "interleaved", "--n", "300", "--out", p]);
        assert_eq!(code, 0, "out: {out}\nerr: {err}");
        assert!(out.starts_with(&format!("wrote {p}: interleaved (")) && out.ends_with("PASS\n"), "{out}");
        let svg = std::fs::read_to_string(&path).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert!(doc.descendants().any(|n| n.has_tag_name("g") && n.attribute("class") == Some("interval")));
    }

    #[test]
    fn a_scan_trace_draws_each_kernel_it_launched() {
        let (_dir, path) = temp("bit");
        let p = path.to_str().unwrap();
        let (code, out, err) =
            run(&["reduce", "trace", "--op", "scan", "--variant", "bit", "--kind", "exclusive", "--out", p]);
        assert_eq!(code, 0, "out: {out}\nerr: {err}");
        assert!(out.contains("bit_build (") && out.contains("bit_query ("), "{out}");
        assert!(path.exists(), "no picture at {}", path.display());
    }

    #[test]
    fn bad_requests_are_one_line_and_exit_2() {
        let (_dir, out) = temp("never");
        let o = out.to_str().unwrap();
        for (args, says) in [
            (vec!["--variant", "nope"], "no variant `nope`"),
            (vec!["--variant", "interleaved", "--n", "0"], "1 to 65536 elements"),
            (vec!["--variant", "interleaved", "--n", "70000"], "got --n 70000"),
            (vec!["--variant", "interleaved", "--block", "48"], "48"),
            (vec!["--op", "scan", "--variant", "blelloch", "--block", "128"], "its only block size"),
            (vec!["--variant", "interleaved", "--out", "/proc/no/such/dir/x.svg"], "cannot write --out"),
            (vec!["--n", "5"], "were not provided --variant <VARIANT>"),
            (vec!["--variant", "smem", "--metrics"], "the flags of `reduce trace` are: --variant, --op"),
            (vec!["--variant", "smem", "--op", "sort"], "allowed: reduce, scan"),
        ] {
            let mut argv = vec!["reduce", "trace"];
            argv.extend(&args);
            if !args.contains(&"--out") {
                argv.extend(["--out", o]);
            }
            let (code, stdout, err) = run(&argv);
            assert_eq!(code, 2, "{args:?}: out {stdout} err {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: `{err}` does not say `{says}`");
        }
        assert!(!out.exists(), "a refused request wrote {}", out.display());
    }

    #[test]
    fn trace_help_is_exit_0() {
        let (code, out, _) = run(&["reduce", "trace", "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--variant") && out.contains("barrier interval"), "{out}");
    }
}
