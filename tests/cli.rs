//! The `reduce` command line, driven through `host::cli::run_with` on the emulator.

use libtest_mimic::{Failed, Trial};

fn run(args: &[&str]) -> (u8, String) {
    let (code, out, _) = run_err(args);
    (code, out)
}

/// Exit status, report and error output.
fn run_err(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("reduce").chain(args.iter().copied());
    let code = host::cli::run_with(argv, &mut out, &mut err);
    (code, String::from_utf8(out).expect("the report is UTF-8"), String::from_utf8(err).expect("UTF-8 errors"))
}

fn check(ok: bool, what: &str, out: &str) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(format!("{what}; output was:\n{out}").into()) }
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cli::table_on_the_emulator", || {
            let (code, out) = run(&["--backend", "emulator", "--n", "4097", "--block", "128", "--repeat", "1"]);
            check(code == 0, &format!("exit status {code}"), &out)?;
            check(out.contains("EMULATOR RESULTS"), "no emulator banner", &out)?;
            check(out.contains("interleaved") && out.contains("PASS"), "no passing interleaved row", &out)?;
            check(!out.contains("FAIL"), "a failing row", &out)
        }),
        Trial::test("cli::csv_and_json", || {
            let (code, out) =
                run(&["--backend", "emulator", "--n", "1000", "--format", "csv", "--variant", "interleaved"]);
            check(code == 0 && out.lines().count() == 2, "csv: header + one row expected", &out)?;
            check(
                out.lines().nth(1).is_some_and(|l| l.starts_with("interleaved,1000,") && l.ends_with(",PASS")),
                "csv row",
                &out,
            )?;
            let (code, out) = run(&["--backend", "emulator", "--n", "1000", "--format", "json"]);
            check(
                code == 0 && out.trim_start().starts_with('{') && out.trim_end().ends_with('}'),
                "json document",
                &out,
            )?;
            check(out.contains("\"verdict\":\"PASS\""), "json verdict", &out)
        }),
        Trial::test("cli::bad_input_exits_2_and_says_why", || {
            for (args, says) in [
                (&["--block", "48", "--n", "10", "--backend", "emulator"][..], "power of two in 32..=1024"),
                (&["--block", "2048", "--n", "10", "--backend", "emulator"], "power of two in 32..=1024"),
                (&["--n", "0", "--backend", "emulator"], "n must be in 1..="),
                (&["--variant", "no_such_variant", "--backend", "emulator"], "the variants are: neighbored"),
                (&["--family", "nope", "--backend", "emulator"], "the families are: global"),
                (&["--repeat", "0", "--n", "10", "--backend", "emulator"], "at least one timed run"),
                (&["--n", "99999999999", "--backend", "emulator"], "n must be in 1..="),
                (&["--variant", "complete_unroll", "--block", "48", "--n", "10", "--backend", "emulator"], "block"),
                (&["--format", "xml"], "invalid value 'xml'"),
                (&["--bogus"], "unexpected argument"),
            ] {
                let (code, out, err) = run_err(args);
                check(code == 2, &format!("{args:?}: exit status {code}, expected 2"), &out)?;
                check(err.contains(says), &format!("{args:?}: the error does not say `{says}`: {err}"), &out)?;
                check(!out.contains("PASS"), &format!("{args:?}: rows printed despite the error"), &out)?;
            }
            Ok(())
        }),
        Trial::test("cli::metrics_on_the_emulator_exits_2_with_one_line", || {
            for args in [
                &["--metrics", "--backend", "emulator", "--n", "1000"][..],
                &["--metrics", "--op", "scan", "--backend", "emulator"],
            ] {
                let (code, out, err) = run_err(args);
                check(code == 2, &format!("{args:?}: exit status {code}, expected 2"), &out)?;
                check(out.is_empty(), &format!("{args:?}: rows printed"), &out)?;
                check(
                    err.lines().count() == 1
                        && err.contains("--metrics needs a GPU: the emulator has no hardware counters"),
                    &format!("{args:?}: not the one line: {err}"),
                    &out,
                )?;
            }
            Ok(())
        }),
        Trial::test("cli::list", || {
            let (code, out) = run(&["--list"]);
            check(code == 0 && out.contains("interleaved"), "list", &out)
        }),
    ]
}
