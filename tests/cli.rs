//! The `reduce` command line, driven through `reduce_scan_cli::cli::run_with` on the emulator.

use libtest_mimic::{Failed, Trial};

fn run(args: &[&str]) -> (u8, String) {
    let (code, out, _) = run_err(args);
    (code, out)
}

/// Exit status, report and error output.
fn run_err(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("reduce").chain(args.iter().copied());
    let code = reduce_scan_cli::cli::run_with(argv, &mut out, &mut err);
    (code, String::from_utf8(out).expect("the report is UTF-8"), String::from_utf8(err).expect("UTF-8 errors"))
}

fn check(ok: bool, what: &str, out: &str) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(format!("{what}; output was:\n{out}").into()) }
}

/// `--metrics` on the emulator: the book's (and the H100's) chapter-3 load efficiencies and
/// the divergence lesson's active lanes per request, from the emulator's counting at 2^16.
fn metrics_on_the_emulator_count_the_lessons() -> Result<(), Failed> {
    // The book's (and the H100's) chapter-3 load efficiencies, from the emulator's
    // counting of the kernels' own accesses at n = 2^16.
    let args = ["--backend", "emulator", "--family", "global", "--metrics", "--log2", "16", "--format", "csv"];
    let (code, out) = run(&args);
    check(code == 0, &format!("exit status {code}"), &out)?;
    let header: Vec<&str> = out.lines().next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(eff), Some(lanes)) = (col("gld_efficiency_pct"), col("emu_lanes_per_request")) else {
        return Err(format!("no gld_efficiency_pct / emu_lanes_per_request column: {header:?}").into());
    };
    let value = |variant: &str, at: usize| -> Option<f64> {
        let row = out.lines().find(|l| l.starts_with(&format!("{variant},")))?;
        row.split(',').nth(at)?.parse().ok()
    };
    for (variant, expected) in [("neighbored_less", 25.02), ("interleaved", 96.15), ("unroll8", 99.21)] {
        let got = value(variant, eff);
        check(
            got.is_some_and(|g| (g - expected).abs() < 0.005),
            &format!("{variant}: gld eff {got:?}, expected {expected}"),
            &out,
        )?;
    }
    let (a, b) = (value("neighbored", lanes), value("neighbored_less", lanes));
    check(
        a.zip(b).is_some_and(|(a, b)| a < 6.0 && b > 24.0),
        &format!("active lanes per request: neighbored {a:?} → neighbored_less {b:?}, expected about 5.4 → 24.8"),
        &out,
    )
}

/// The emulator plays the committed GPU's geometry by default (issue 40): `grid_stride` launches
/// the H100's 132 × 16 blocks of 128, the grid beside which the committed figures were measured;
/// `--emulated-sms cpu` gives one SM per worker thread, `--emulated-sms N` N SMs.
fn the_emulator_plays_the_committed_gpus_geometry() -> Result<(), Failed> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let sms = reduce_scan::emu::COMMITTED_GPU_SMS as u64;
    // Without the flag: REDUCE_EMULATED_SMS where the person running the tests set it, else the GPU's.
    let default = reduce_scan::emu::EmulatedSms::from_env()?.unwrap_or_default().count(workers as usize) as u64;
    for (flag, grid) in [(None, default * 16), (Some("gpu"), sms * 16), (Some("cpu"), workers * 16), (Some("3"), 48)] {
        let mut args = vec!["--backend", "emulator", "--variant", "grid_stride", "--n", "300007", "--block", "128"];
        args.extend(["--repeat", "1", "--format", "csv"]);
        if let Some(f) = flag {
            args.extend(["--emulated-sms", f]);
        }
        let (code, out) = run(&args);
        check(code == 0, &format!("{flag:?}: exit status {code}"), &out)?;
        let header: Vec<&str> = out.lines().next().unwrap_or_default().split(',').collect();
        let at = header.iter().position(|h| *h == "grid").ok_or("no grid column")?;
        let got = out.lines().nth(1).and_then(|l| l.split(',').nth(at)).and_then(|g| g.parse::<u64>().ok());
        check(got == Some(grid), &format!("--emulated-sms {flag:?}: grid {got:?}, expected {grid}"), &out)?;
    }
    let args =
        ["--backend", "emulator", "--variant", "interleaved", "--n", "1000", "--repeat", "1", "--emulated-sms", "gpu"];
    let (code, out) = run(&args);
    let device = out.lines().next().unwrap_or_default();
    check(
        code == 0 && device.contains(&format!("grids sized for {sms} SMs, the committed H100's")),
        "the device line does not say which geometry the emulator plays",
        &out,
    )
}

/// Issue 40: ncu counted 13,866 shared load bank conflicts for `blelloch` at n = 5·2^20 + 3 (and
/// none at 2^20). The padded tree is conflict-free by address at any n, a partial last tile and a
/// second level included (the scans run at their own block, 512, whatever `--block` the
/// reductions get): every shared request of both kinds takes one wavefront per phase.
fn blelloch_is_conflict_free_at_an_odd_n() -> Result<(), Failed> {
    let args = ["--backend", "emulator", "--op", "scan", "--variant", "blelloch", "--n", "12291", "--metrics"];
    let (code, out) = run(&[&args[..], &["--format", "csv"]].concat());
    check(code == 0, &format!("exit status {code}"), &out)?;
    let header: Vec<&str> = out.lines().next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).ok_or(format!("no {name} column"));
    let rows: Vec<Vec<&str>> = out.lines().skip(1).map(|l| l.split(',').collect()).collect();
    check(rows.len() == 2, "one row per kind expected", &out)?;
    for row in rows {
        let get = |name: &str| -> Result<u64, Failed> {
            Ok(row.get(col(name)?).and_then(|v| v.parse().ok()).ok_or(format!("{name}: no count"))?)
        };
        for space in ["ld", "st"] {
            let (req, wf) = (get(&format!("shared_{space}_requests"))?, get(&format!("shared_{space}_wavefronts"))?);
            let conflicts = get(&format!("shared_{space}_bank_conflicts"))?;
            check(req > 0 && wf == req && conflicts == 0, &format!("{space}: {req} req, {wf} wf, {conflicts}"), &out)?;
        }
    }
    Ok(())
}

/// A machine without a GPU shows each row's committed GPU figures (issue 28): the emulator's
/// table has the CPU time, no GPU throughput, the set's columns, where they come from, and where
/// the report is.
fn the_emulator_shows_the_committed_gpu_figures() -> Result<(), Failed> {
    for (args, variant, kind) in [
        (&["--variant", "interleaved"][..], "interleaved", None),
        (&["--op", "scan", "--variant", "blelloch", "--kind", "inclusive"][..], "blelloch", Some("inclusive")),
    ] {
        let mut argv = vec!["--backend", "emulator", "--n", "4097", "--repeat", "1"];
        argv.extend(args);
        let (code, out) = run(&argv);
        check(code == 0, &format!("exit status {code}"), &out)?;
        let header = out.lines().find(|l| l.starts_with("variant")).unwrap_or_default();
        for title in ["CPU µs", "GPU µs", "gld eff%", "thr/warp%", "bank confl"] {
            check(header.contains(title), &format!("no `{title}` column"), &out)?;
        }
        check(!header.contains("GB/s") && !header.contains("% peak"), "GPU throughput columns on the CPU", &out)?;
        let f = reduce_scan_cli::committed::figures(variant, kind).ok_or(format!("{variant}: no committed figures"))?;
        let row = out.lines().find(|l| l.starts_with(&format!("{variant} "))).unwrap_or_default();
        check(row.contains(&format!(" {:.1} ", f.time_us)), &format!("{variant}: no GPU time {:.1}", f.time_us), &out)?;
        check(out.contains(reduce_scan_cli::committed::SET), "the note does not name the measurement set", &out)?;
        check(out.contains("docs/report/index.html"), "no line saying where the report is", &out)?;
    }
    Ok(())
}

/// `--sweep`: one CSV, one header, a row per size and variant, progress on stderr.
fn sweep_is_one_csv_with_a_row_per_size_and_variant() -> Result<(), Failed> {
    let args = ["--backend", "emulator", "--sweep", "9..11", "--family", "modern", "--repeat", "1"];
    let (code, out, err) = run_err(&args);
    check(code == 0, &format!("exit status {code}"), &out)?;
    let lines: Vec<&str> = out.lines().collect();
    check(
        lines[0].starts_with("variant,n,") && lines.iter().filter(|l| l.starts_with("variant,")).count() == 1,
        "one header",
        &out,
    )?;
    let modern = reduce_scan::registry::all().filter(|v| v.family == reduce_scan::registry::Family::Modern).count();
    check(lines.len() == 1 + 3 * modern, &format!("{} rows, expected 3 sizes × {modern}", lines.len() - 1), &out)?;
    for n in ["512", "1024", "2048"] {
        check(lines.iter().any(|l| l.split(',').nth(1) == Some(n)), &format!("no row at n = {n}"), &out)?;
    }
    check(err.contains("sweep: size 3/3 (n = 2048)") && err.contains("variant atomic_accumulate"), "progress", &err)
}

/// `--op scan --variant a,b`: the listed scans in that order on one input (what
/// `scripts/gpu/warpspec_sweep.sh` runs), every row checked; a name that is no scan variant is
/// one line and exit status 2.
fn scan_variants_as_a_list() -> Result<(), Failed> {
    let args = ["--backend", "emulator", "--op", "scan", "--n", "12000", "--kind", "inclusive", "--format", "csv"];
    let (code, out) = run(&[&args[..], &["--repeat", "1", "--variant", "lookback_warpspec,lookback"]].concat());
    check(code == 0, &format!("exit status {code}"), &out)?;
    let rows: Vec<&str> = out.lines().skip(1).collect();
    check(rows.len() == 2, &format!("{} rows, expected 2", rows.len()), &out)?;
    for (row, name) in rows.iter().zip(["lookback_warpspec", "lookback"]) {
        let ok = row.starts_with(&format!("{name},inclusive,12000,")) && row.ends_with(",PASS");
        check(ok, &format!("a passing {name} row, in the listed order"), &out)?;
    }
    let (code, _, err) = run_err(&[&args[..], &["--variant", "lookback,nope"]].concat());
    check(code == 2 && err.lines().count() == 1 && err.contains("no scan variant `nope`"), "one line for `nope`", &err)
}

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("cli::table_on_the_emulator", || {
            let (code, out) = run(&["--backend", "emulator", "--n", "4097", "--block", "128", "--repeat", "1"]);
            check(code == 0, &format!("exit status {code}"), &out)?;
            check(out.contains("EMULATOR RESULTS"), "no emulator banner", &out)?;
            check(
                out.contains(
                    "emulator checks: memcheck, racecheck (64 blocks of a larger grid), initcheck, synccheck \
                     (docs/emulator.md)",
                ),
                "no line naming the emulator's checks",
                &out,
            )?;
            check(out.contains("interleaved") && out.contains("PASS"), "no passing interleaved row", &out)?;
            check(!out.contains("FAIL"), "a failing row", &out)
        }),
        Trial::test("cli::emulator_checks_memcheck_only", || {
            let args = ["--backend", "emulator", "--n", "1000", "--variant", "smem", "--emulator-checks", "memcheck"];
            let (code, out) = run(&args);
            check(code == 0 && out.contains("smem") && out.contains("PASS"), "no passing smem row", &out)?;
            check(out.contains("emulator checks: memcheck, synccheck (docs/emulator.md)"), "checks line", &out)?;
            let args =
                ["--backend", "emulator", "--n", "70000", "--variant", "smem", "--emulator-checks", "exhaustive"];
            let (code, out) = run(&args);
            check(code == 0 && out.contains("smem") && out.contains("PASS"), "no passing smem row (exhaustive)", &out)?;
            check(
                out.contains("emulator checks: memcheck, racecheck (every block), initcheck, synccheck"),
                "exhaustive checks line",
                &out,
            )
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
        Trial::test("cli::metrics_on_the_emulator_count_the_lessons", metrics_on_the_emulator_count_the_lessons),
        Trial::test("cli::the_emulator_shows_the_committed_gpu_figures", the_emulator_shows_the_committed_gpu_figures),
        Trial::test(
            "cli::the_emulator_plays_the_committed_gpus_geometry",
            the_emulator_plays_the_committed_gpus_geometry,
        ),
        Trial::test("cli::blelloch_is_conflict_free_at_an_odd_n", blelloch_is_conflict_free_at_an_odd_n),
        Trial::test(
            "cli::sweep_is_one_csv_with_a_row_per_size_and_variant",
            sweep_is_one_csv_with_a_row_per_size_and_variant,
        ),
        Trial::test("cli::list", || {
            let (code, out) = run(&["--list"]);
            check(code == 0 && out.contains("interleaved"), "list", &out)
        }),
        Trial::test("cli::scan_variants_as_a_list", scan_variants_as_a_list),
    ];
    trials.extend(bad_input::trials());
    trials
}

/// docs/bad-input.md, every row a test: the command-line table is run row by row, and the
/// library's errors are checked against the text the doc shows.
mod bad_input {
    use libtest_mimic::{Failed, Trial};

    const DOC: &str = include_str!("../docs/bad-input.md");

    /// One row of the doc's command-line table.
    struct Row {
        args: Vec<String>,
        /// The first line on stderr; `None` where nothing is written there.
        first: Option<String>,
        exit: u8,
        /// Rows printed on stdout (the non-errors), or nothing at all.
        rows: bool,
    }

    /// The text of a cell written as `` `…` `` or ``` `` … `` ```.
    fn code(cell: &str) -> Option<&str> {
        let c = cell.trim();
        c.strip_prefix("`` ").and_then(|c| c.strip_suffix(" ``")).or_else(|| c.strip_prefix('`')?.strip_suffix('`'))
    }

    /// A doc line with `{variants}`, `{scan variants}`, `{generic variants}`, `{generic scan
    /// variants}`, `{grid-stride variants}` and `{scan blocks}` written from the registries, in
    /// their order: the doc does not list the variants itself, so adding one changes no row.
    fn expand(line: &str) -> String {
        use reduce_scan::registry::{self, Grid};
        let join = |names: Vec<&str>| names.join(", ");
        let strided = registry::all().filter(|v| matches!(v.grid, Grid::Resident | Grid::PerMultiprocessor));
        line.replace("{variants}", &join(registry::all().map(|v| v.name).collect()))
            .replace("{scan variants}", &join(reduce_scan::scan::all().map(|v| v.name).collect()))
            .replace("{generic variants}", &join(registry::generic_names()))
            .replace("{generic scan variants}", &join(reduce_scan::scan::generic_names()))
            .replace("{grid-stride variants}", &join(strided.map(|v| v.name).collect()))
            .replace(
                "{scan blocks}",
                &reduce_scan::scan::curriculum()
                    .map(|v| format!("{} {}", v.name, v.block()))
                    .collect::<Vec<_>>()
                    .join(", "),
            )
    }

    /// The rows of the table under `## The command line`, or what is wrong with the table.
    fn rows() -> Result<Vec<Row>, String> {
        let section =
            DOC.split("\n## ").find(|s| s.starts_with("The command line")).ok_or("no `## The command line`")?;
        let mut rows = Vec::new();
        // | what | `input` | `` first line `` or — | exit | nothing or rows… |
        for line in section.lines().filter(|l| l.starts_with('|') && !l.starts_with("|---")) {
            let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
            if cells.len() != 5 {
                return Err(format!("not a row of 5 cells: {line}"));
            }
            let Some(args) = code(cells[1]) else { continue }; // the header
            rows.push(Row {
                args: args.split_whitespace().map(str::to_owned).collect(),
                first: code(cells[2]).map(expand),
                exit: cells[3].trim().parse().map_err(|_| format!("no exit status: {line}"))?,
                rows: cells[4].trim().starts_with("rows"),
            });
        }
        if rows.is_empty() { Err("no rows".into()) } else { Ok(rows) }
    }

    fn check_row(row: &Row) -> Result<(), Failed> {
        let args: Vec<&str> = row.args.iter().map(String::as_str).collect();
        let (code, out, err) = super::run_err(&args);
        let first = err.lines().next();
        let mut wrong = Vec::new();
        if code != row.exit {
            wrong.push(format!("exit status {code}, the doc says {}", row.exit));
        }
        if first != row.first.as_deref() {
            wrong.push(format!("first line on stderr:\n  got: {first:?}\n  doc: {:?}", row.first));
        }
        if row.exit == 2 && err.lines().count() != 1 {
            wrong.push(format!("{} lines on stderr, expected one", err.lines().count()));
        }
        if row.rows != (out.contains("PASS") && !out.contains("FAIL")) || (!row.rows && !out.is_empty()) {
            wrong.push(format!("stdout: expected {}", if row.rows { "passing rows" } else { "nothing" }));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("{}\nstdout:\n{out}stderr:\n{err}", wrong.join("\n")).into())
        }
    }

    /// `text` must be a cell of the doc, in the library table.
    fn documented(text: &str) -> Result<(), Failed> {
        if DOC.contains(&format!("`` {text} ``")) {
            Ok(())
        } else {
            Err(format!("docs/bad-input.md does not show `{text}`").into())
        }
    }

    fn library_trials() -> Vec<Trial> {
        vec![
            Trial::test("cli::bad_input::library::reduce_range_past_the_buffer", reduce_range_past_the_buffer),
            Trial::test(
                "cli::bad_input::library::scanner_short_output_and_bad_range",
                scanner_short_output_and_bad_range,
            ),
            Trial::test("cli::bad_input::library::operations", bad_operations),
        ]
    }

    /// `Reducer::reduce_range` with a range past the buffer, empty past its end, or reversed: one line each, as the docs word it.
    fn reduce_range_past_the_buffer() -> Result<(), Failed> {
        let b = reduce_scan::Backend::emulator();
        let input = b.upload(&[1; 8]).map_err(|e| e.to_string())?;
        let mut reducer = reduce_scan::Reducer::<i32, reduce_scan::Sum>::new(&b);
        for (range, says) in [
            (2..10, "invalid request: sum of elements 2..10 of a buffer of 8: the range must lie within the buffer"),
            (9..9, "invalid request: sum of elements 9..9 of a buffer of 8: the range must lie within the buffer"),
        ] {
            let e = reducer.reduce_range(&input, range.clone()).map(|s| format!("Ok({s})"));
            let e = e.unwrap_or_else(|e| e.to_string());
            if e != says {
                return Err(format!("reduce_range({range:?}): got `{e}`, expected `{says}`").into());
            }
            documented(says)?;
        }
        #[allow(clippy::reversed_empty_ranges)]
        let e = reducer.reduce_range(&input, 5..3).map_err(|e| e.to_string()).err();
        let says = "invalid request: sum of elements 5..3 of a buffer of 8: the range must lie within the buffer";
        if e.as_deref() != Some(says) {
            return Err(format!("reduce_range(5..3): got {e:?}").into());
        }
        documented(says)
    }

    /// `Scanner` with an output shorter than its input, and a range past the buffer.
    fn scanner_short_output_and_bad_range() -> Result<(), Failed> {
        let b = reduce_scan::Backend::emulator();
        let input = b.upload(&[1; 8]).map_err(|e| e.to_string())?;
        let mut short = b.alloc::<i32>(3).map_err(|e| e.to_string())?;
        let mut scanner = reduce_scan::Scanner::<i32, reduce_scan::Sum>::new(&b);
        let e = scanner.inclusive(&input, &mut short).map_err(|e| e.to_string()).err();
        let says =
            "invalid request: scan `lookback`: the output holds 3 elements, fewer than n = 8; it must hold at least n";
        if e.as_deref() != Some(says) {
            return Err(format!("Scanner::inclusive, short output: got {e:?}, expected `{says}`").into());
        }
        documented(says)?;
        let e = scanner.inclusive_range(&input, 6..9, &mut short).map_err(|e| e.to_string()).err();
        let says =
            "invalid request: inclusive scan of elements 6..9 of a buffer of 8: the range must lie within the buffer";
        if e.as_deref() != Some(says) {
            return Err(format!("Scanner::inclusive_range(6..9): got {e:?}, expected `{says}`").into());
        }
        documented(says)
    }

    /// The other reductions' bad requests: a range past the buffer, a block size not allowed, dot's lengths that differ.
    fn bad_operations() -> Result<(), Failed> {
        use reduce_scan::{ArgReducer, Max, Min, Reducer, Sum};
        let b = reduce_scan::Backend::emulator();
        let x = b.upload(&[1.0f64; 8]).map_err(|e| e.to_string())?;
        let y = b.upload(&[1.0f64; 5]).map_err(|e| e.to_string())?;
        let f = b.upload(&[1.0f32; 8]).map_err(|e| e.to_string())?;
        let mut r = Reducer::<f64, Sum>::new(&b);
        let got = [
            ArgReducer::<f32, Max>::new(&b).reduce_range(&f, 4..9).err(),
            ArgReducer::<u32, Min>::with_block(&b, 48).err(),
            r.dot(&x, &y).err(),
            r.dot_range(&x, &y, 2..7).err(),
            r.norm_range(&x, 6..9).err(),
        ];
        let says = [
            "invalid request: argmax of elements 4..9 of a buffer of 8: the range must lie within the buffer",
            "invalid request: block 48 is not allowed; block must be a power of two in 32..=1024",
            "invalid request: dot of buffers of 8 and 5 elements: the lengths must match",
            "invalid request: dot of elements 2..7 of buffers of 8 and 5 elements: the range must lie within both",
            "invalid request: sum of squares of elements 6..9 of a buffer of 8: the range must lie within the buffer",
        ];
        for (got, says) in got.into_iter().zip(says) {
            let got = got.map(|e| e.to_string());
            if got.as_deref() != Some(says) {
                return Err(format!("got {got:?}, expected `{says}`").into());
            }
            documented(says)?;
        }
        Ok(())
    }

    pub(super) fn trials() -> Vec<Trial> {
        let mut trials: Vec<Trial> = match rows() {
            Ok(rows) => rows
                .into_iter()
                .enumerate()
                .map(|(i, row)| {
                    let name = format!("cli::bad_input::row_{:02}: reduce {}", i + 1, row.args.join(" "));
                    Trial::test(name, move || check_row(&row))
                })
                .collect(),
            Err(why) => {
                vec![Trial::test("cli::bad_input::table", move || Err(format!("docs/bad-input.md: {why}").into()))]
            }
        };
        trials.extend(library_trials());
        trials
    }
}
