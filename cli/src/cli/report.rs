//! `reduce report RUN_DIR... [--out DIR]`: builds the HTML report ([`crate::report`]).
//!
//! A word before the usual flags, not a clap subcommand of [`super::Args`]: the existing
//! command line (`reduce --variant … --format …`) stays exactly as it was, with no
//! subcommand to name, and `report` has its own small parser and `--help`.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

/// Builds a self-contained HTML report (index.html, SVG pictures, phrasebook.md) from the
/// CSVs of one or more measurement runs.
#[derive(Parser, Debug)]
#[command(name = "reduce report", version, about, long_about = None)]
struct ReportArgs {
    /// Run directories holding the CSVs (variants_*.csv, twins_*.csv, sum_vs_cub.csv,
    /// scans.csv, ncu_*.csv, device.txt); the first is the one the cards show. `A+B` is one
    /// run: B's files laid over A's (a re-measurement after a change).
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Where to write the report.
    #[arg(long, default_value = "report")]
    out: PathBuf,
}

/// Runs `reduce report …` (`argv` without the program name's `report` word handled by the
/// caller: `argv[0]` is the program, `argv[1]` is `report`). Returns the exit status: 0
/// written, 2 bad input or an unwritable `--out`.
pub(super) fn run(argv: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let args: ReportArgs = match super::parse::subcommand("report", argv, out, err) {
        Ok(a) => a,
        Err(status) => return status,
    };
    match crate::report::build(&args.runs, &args.out) {
        Ok(built) => {
            let _ = writeln!(out, "wrote {} and {} SVG files", built.index.display(), built.svgs.len());
            0
        }
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_captured as run;

    #[test]
    fn report_to_an_unwritable_dir_is_one_error_line_and_exit_2() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/measurements/2026-11-22-h100");
        let (code, out, err) = run(&["reduce", "report", dir, "--out", "/proc/no/such/report"]);
        assert_eq!(code, 2, "out: {out}\nerr: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains("/proc/no/such/report"), "{err}");
    }

    #[test]
    fn report_with_a_missing_run_dir_is_exit_2() {
        let dir = crate::private::PrivateDir::new("reduce-report-").unwrap();
        let out = dir.path().join("report");
        let (code, _, err) = run(&["reduce", "report", "/no/such/run", "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(err.contains("/no/such/run"), "{err}");
        assert!(!out.exists(), "a refused report wrote {}", out.display());
    }

    #[test]
    fn report_help_is_exit_0_and_the_old_flags_still_parse() {
        let (code, out, _) = run(&["reduce", "report", "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--out"), "{out}");
        let (code, out, _) = run(&["reduce", "--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--variant") && out.contains("report"), "{out}");
    }
}
