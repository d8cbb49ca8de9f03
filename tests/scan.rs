//! The prefix-sum family (`reduce_scan::scan`): every scan variant × inclusive/exclusive × sizes
//! that hurt, compared element by element with the CPU scan, on the emulator and (ignored
//! where there is none) on the GPU up to 2^30; the look-back's multi-window path and its
//! bounded spin; errors; the `--op scan` CLI; the PTX of every scan kernel.

use std::time::Duration;

use kernels::scan::index::{FLAG_AGGREGATE, FLAG_PREFIX, pack_status};
use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, LaunchConfig};
use reduce_scan::emu::{EmuErrorKind, Emulator};
use reduce_scan::input::Input;
use reduce_scan::scan::{self, Kind, Scan, ScanPlan, ScanVariant, cpu};
use reduce_scan::{Error, kernel_ref};

use crate::common::SEED;

/// Sizes every scan variant runs on the emulator.
const SIZES: &[usize] = &[1, 2, 31, 32, 33, 1023, 1024, 1025, 4097, (1 << 20) + 7];

/// The sizes that hurt this variant in particular: around its tile, and around the places
/// where its plan changes shape (another BIT level, another Blelloch level, another
/// look-back window of 32 tiles).
fn own_sizes(v: &ScanVariant) -> Vec<usize> {
    let t = v.tile() as usize;
    let mut sizes = vec![t - 1, t, t + 1];
    match v.plan {
        // Level boundaries of the tree: a second build launch from 2·2048 (a third from
        // 2·2048² = 2^23: `deepest_levels`), a partial last query tile.
        ScanPlan::Fenwick { .. } => sizes.extend([2 * t - 1, 2 * t, 2 * t + 5, 1 << 19]),
        // Two levels from t + 1 elements (4097), three past t² (2^24 + 1: the GPU tests).
        ScanPlan::ReduceThenScan { .. } => sizes.extend([2 * t + 1, 1 << 20, (1 << 20) + 1]),
        // A full window of 32 predecessors, and one more.
        ScanPlan::DecoupledLookback { .. } | ScanPlan::DecoupledLookbackValues { .. } => {
            sizes.extend([32 * t, 33 * t + 5])
        }
        // The same, and enough tiles that every persistent block reuses each of its stages
        // (mbarrier phases of both parities) and draws past the last tile.
        ScanPlan::PersistentLookback { .. } | ScanPlan::WarpSpecialized { .. } => {
            sizes.extend([32 * t, 33 * t + 5, 70 * t + 3])
        }
    }
    sizes
}

/// Runs `v` with `kind` on every size; the first wrong element fails with variant, kind, n,
/// index, expected and actual. Also checks that the input buffer is untouched.
fn check(backend: &Backend, v: &'static ScanVariant, kind: Kind, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        let input = Input::full_range(n, SEED ^ n as u64);
        check_one(backend, v, kind, &input.data)?;
    }
    Ok(())
}

fn check_one(backend: &Backend, v: &'static ScanVariant, kind: Kind, data: &[i32]) -> Result<(), Failed> {
    let n = data.len();
    let what = || format!("scan {} {kind} n={n}", v.name);
    let expected = kind.reference(data);
    let buf = backend.upload(data).map_err(|e| format!("{}: upload: {e}", what()))?;
    let mut out = backend.alloc::<i32>(n).map_err(|e| format!("{}: alloc: {e}", what()))?;
    let got = {
        let mut s = Scan::new(backend, v, kind, &buf, &mut out, n).map_err(|e| format!("{}: {e}", what()))?;
        // Two runs back to back, no reset between: the second must be as right as the first
        // (the look-back's per-launch epochs; the others rebuild everything).
        s.launch().and_then(|_| s.launch()).map_err(|e| format!("{}: {e}", what()))?;
        s.result().map_err(|e| format!("{}: {e}", what()))?
    };
    if let Some((i, e, g)) = cpu::first_mismatch(&expected, &got) {
        return Err(format!("{}: first wrong index {i}: expected {e:?} (CPU scan), got {g:?}", what()).into());
    }
    let after = backend.download(&buf).map_err(|e| e.to_string())?;
    if after != data {
        return Err(format!("{}: the input buffer was modified", what()).into());
    }
    Ok(())
}

fn emulator_trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for v in scan::all() {
        for kind in Kind::ALL {
            let mut sizes = if v.tuning { vec![1, 33, 4097] } else { SIZES.to_vec() };
            sizes.extend(own_sizes(v));
            // The exclusive kind at the sizes up to a few tiles; the larger ones (a full window
            // of predecessors, every stage reused, another level, 2^20 + 7) for the inclusive
            // kind alone. The kinds differ only in where the last launch stores each element,
            // which the smaller sizes check for both; what the larger sizes are there for (the
            // levels, windows and stages before that store) is the same code for both kinds
            // (issue #60: the largest sizes at one setting of a variant, every boundary size
            // at every setting).
            if kind == Kind::Exclusive {
                let t = v.tile() as usize;
                sizes.retain(|&n| n <= (2 * t + 5).max(4097));
            }
            out.push(
                Trial::test(format!("scan::emulator::{}::{kind}", v.name), move || {
                    check(&Backend::emulator(), v, kind, &sizes)
                })
                .with_kind("emulator"),
            );
        }
    }
    // More emulator workers than cores: blocks overlap more, so look-backs meet predecessors
    // that have only published their aggregate, or nothing yet (and spin).
    out.push(
        Trial::test("scan::emulator::lookback::contended", || {
            let backend = Backend::with_emulator(Emulator::new().with_workers(8));
            let v = scan::find("lookback").map_err(|e| e.to_string())?;
            let t = v.tile() as usize;
            for kind in Kind::ALL {
                check(&backend, v, kind, &[40 * t + 3])?;
            }
            Ok(())
        })
        .with_kind("emulator"),
    );
    // The same for the warp-specialized scan: its persistent blocks overlap on 8 workers, so
    // look-ahead warps meet predecessors of other blocks that have published nothing yet, or
    // only their aggregate, while their own producers and compute warps run ahead; the compute
    // warps reduce 2 uses ahead of their scan in `lookback_warpspec` (4 stages), 4 in the 6-stage
    // shapes; and the plan's shape, whose status words lie 2 words apart (its words between are
    // never read, and the ticket counter lies past them), beside its packed experiment.
    for name in
        ["lookback_warpspec", "lookback_warpspec_8x20x6", "lookback_warpspec_8x12x6", "lookback_warpspec_8x12x6_packed"]
    {
        out.push(
            Trial::test(format!("scan::emulator::{name}::contended"), move || {
                let backend = Backend::with_emulator(Emulator::new().with_workers(8));
                let v = scan::find(name).map_err(|e| e.to_string())?;
                let t = v.tile() as usize;
                for kind in Kind::ALL {
                    check(&backend, v, kind, &[40 * t + 3])?;
                }
                Ok(())
            })
            .with_kind("emulator"),
        );
    }
    // The third level of the multi-launch plans, where it first appears: a third bit_build
    // launch from 2·2048² elements, a third Blelloch level past 4096². One kind each (the
    // kinds differ only in the last launch, which the other sizes cover); seconds each.
    out.push(
        Trial::test("scan::emulator::deepest_levels", || {
            let backend = Backend::emulator();
            let bit = scan::find("bit").map_err(|e| e.to_string())?;
            let blelloch = scan::find("blelloch").map_err(|e| e.to_string())?;
            check(&backend, bit, Kind::Inclusive, &[(1 << 23) + 3])?;
            check(&backend, blelloch, Kind::Exclusive, &[(1 << 24) + 1])
        })
        .with_kind("emulator"),
    );
    out
}

/// The look-back alone, on a status array the test writes: one warp of `lookback_probe`
/// (`windows` 1), or of `lookback_windows_probe` reading `windows` windows per round trip.
fn probe(backend: &Backend, status: &[u64], tile: u32, epoch: u32, windows: u32) -> Result<i32, Error> {
    let st = backend.upload(status)?;
    let mut out = backend.alloc::<i32>(1)?;
    let cfg = LaunchConfig { grid: 1, block: 32, shared_bytes: 0 };
    if windows == 1 {
        let k = kernel_ref!(kernels::scan::lookback_probe(a, b, c, d));
        // SAFETY: `st` holds `tile` words (tile ≤ status.len()), `out` one element; one warp.
        unsafe { backend.launch(&k, cfg, (st.as_ptr() as *mut u64, out.as_mut_ptr(), tile, epoch))? };
    } else {
        let k = kernel_ref!(kernels::scan::lookback_windows_probe(a, b, c, d, e));
        // SAFETY: as above; windows is 2 or 4 (the callers below).
        unsafe { backend.launch(&k, cfg, (st.as_ptr() as *mut u64, out.as_mut_ptr(), tile, epoch, windows))? };
    }
    Ok(backend.download(&out)?[0])
}

/// The multi-window look-back's cases, through the look-back reading `windows` windows per
/// round trip: aggregates only back to tile 0 (every window, and with 2 windows two round
/// trips), a prefix in the nearest window, one in the second (garbage before each, never read),
/// and a tile whose window reaches before tile 0.
fn multi_window(windows: u32) -> Result<(), Failed> {
    let epoch = 5;
    let vals = Input::full_range(100, SEED).data;
    let sum = |v: &[i32]| v.iter().fold(0i32, |a, &x| a.wrapping_add(x));
    let check = |what: &str, status: &[u64], tile: u32, want: i32| -> Result<(), Failed> {
        let got = probe(&Backend::emulator(), status, tile, epoch, windows).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!("{windows} window(s), {what}: expected {want}, got {got}").into());
        }
        Ok(())
    };
    // 100 predecessors: tile 0 has its prefix, the rest only aggregates.
    let mut status: Vec<u64> = vals.iter().map(|&v| pack_status(epoch, FLAG_AGGREGATE, v)).collect();
    status[0] = pack_status(epoch, FLAG_PREFIX, vals[0]);
    let want = sum(&vals);
    check("aggregates only", &status, 100, want)?;
    // A prefix ends the look-back: tiles before it are not used (garbage aggregates there).
    for at in [70, 40] {
        let mut s = status.clone();
        s[at] = pack_status(epoch, FLAG_PREFIX, sum(&vals[..=at]));
        for w in &mut s[1..at - 2] {
            *w = pack_status(epoch, FLAG_AGGREGATE, 0x7777);
        }
        check(&format!("prefix at tile {at}"), &s, 100, want)?;
    }
    // Tiles 1..31 read the pseudo-prefix 0 before tile 0.
    let mut small: Vec<u64> = vals[..5].iter().map(|&v| pack_status(epoch, FLAG_AGGREGATE, v)).collect();
    small[0] = pack_status(epoch, FLAG_PREFIX, vals[0]);
    check("tile 5", &small, 5, sum(&vals[..5]))
}

fn probe_trials() -> Vec<Trial> {
    vec![
        Trial::test("scan::lookback::multi_window_look_back", || multi_window(1)).with_kind("emulator"),
        Trial::test("scan::lookback::multi_window_look_back_two_per_round_trip", || multi_window(2))
            .with_kind("emulator"),
        Trial::test("scan::lookback::multi_window_look_back_four_per_round_trip", || multi_window(4))
            .with_kind("emulator"),
        Trial::test("scan::lookback::stale_epoch_is_waited_for_within_the_budget", || {
            // Words of another launch (epoch 4) read as "nothing yet": the warp spins, through
            // the device layer's atomic loads, until the emulator's budget stops it.
            let status = vec![pack_status(4, FLAG_PREFIX, 1); 3];
            let backend = Backend::with_emulator(Emulator::new().with_budget(Duration::from_millis(300)));
            match probe(&backend, &status, 3, 5, 1) {
                Err(Error::Emulator(e)) if e.kind == EmuErrorKind::Timeout => Ok(()),
                other => Err(format!("expected a timeout, got {other:?}").into()),
            }
        })
        .with_kind("emulator"),
    ]
}

fn error_trials() -> Vec<Trial> {
    vec![
        Trial::test("scan::errors::say_what_is_wrong", || {
            let b = Backend::emulator();
            let input = b.upload(&[1, 2, 3, 4]).map_err(|e| e.to_string())?;
            for v in scan::all() {
                // n = 0 is an error for Scan::new…
                let mut out = b.alloc::<i32>(4).map_err(|e| e.to_string())?;
                let e = Scan::new(&b, v, Kind::Inclusive, &input, &mut out, 0).err().map(|e| e.to_string());
                if !e.as_deref().is_some_and(|e| e.contains("n = 0") && e.contains(v.name)) {
                    return Err(format!("{}: n = 0 gave {e:?}", v.name).into());
                }
                // …and so is an output shorter than n.
                let mut short = b.alloc::<i32>(3).map_err(|e| e.to_string())?;
                let e = Scan::new(&b, v, Kind::Exclusive, &input, &mut short, 4).err().map(|e| e.to_string());
                if !e.as_deref().is_some_and(|e| e.contains("output holds 3") && e.contains("at least n")) {
                    return Err(format!("{}: short output gave {e:?}", v.name).into());
                }
                let mut out = b.alloc::<i32>(8).map_err(|e| e.to_string())?;
                let e = Scan::new(&b, v, Kind::Exclusive, &input, &mut out, 5).err().map(|e| e.to_string());
                if !e.as_deref().is_some_and(|e| e.contains("input holds 4")) {
                    return Err(format!("{}: n past the input gave {e:?}", v.name).into());
                }
            }
            // The convenience functions: a short output is an error, an empty input a no-op.
            let mut short = b.alloc::<i32>(3).map_err(|e| e.to_string())?;
            let e = scan::inclusive_scan(&b, &input, &mut short).err().map(|e| e.to_string());
            if !e.as_deref().is_some_and(|e| e.contains("output holds 3")) {
                return Err(format!("inclusive_scan, short output: {e:?}").into());
            }
            let empty = b.upload::<i32>(&[]).map_err(|e| e.to_string())?;
            let mut out = b.upload(&[9, 9]).map_err(|e| e.to_string())?;
            scan::exclusive_scan(&b, &empty, &mut out).map_err(|e| e.to_string())?;
            if b.download(&out).map_err(|e| e.to_string())? != [9, 9] {
                return Err("exclusive_scan of an empty input wrote something".into());
            }
            Ok(())
        }),
        Trial::test("scan::convenience_functions", || {
            let b = Backend::emulator();
            let data = Input::full_range(50_003, SEED).data;
            let input = b.upload(&data).map_err(|e| e.to_string())?;
            let mut out = b.alloc::<i32>(50_010).map_err(|e| e.to_string())?;
            scan::inclusive_scan(&b, &input, &mut out).map_err(|e| e.to_string())?;
            let got = b.download_prefix(&out, data.len()).map_err(|e| e.to_string())?;
            if got != cpu::inclusive_scan(&data) {
                return Err("inclusive_scan differs from the CPU scan".into());
            }
            scan::exclusive_scan(&b, &input, &mut out).map_err(|e| e.to_string())?;
            let got = b.download_prefix(&out, data.len()).map_err(|e| e.to_string())?;
            if got != cpu::exclusive_scan(&data) {
                return Err("exclusive_scan differs from the CPU scan".into());
            }
            Ok(())
        }),
    ]
}

fn run_cli(args: &[&str]) -> (u8, String) {
    let mut out = Vec::new();
    let argv = std::iter::once("reduce").chain(args.iter().copied());
    let code = reduce_scan_cli::cli::run_with(argv, &mut out, &mut Vec::new());
    (code, String::from_utf8(out).expect("the report is UTF-8"))
}

fn cli_trials() -> Vec<Trial> {
    vec![Trial::test("scan::cli::op_scan", || {
        let (code, out) = run_cli(&["--op", "scan", "--backend", "emulator", "--n", "4097", "--repeat", "1"]);
        let rows = out.lines().filter(|l| l.ends_with("PASS")).count();
        if code != 0 || rows != 2 * scan::curriculum().count() || out.contains("FAIL") {
            return Err(format!("table: exit {code}, {rows} PASS rows; output:\n{out}").into());
        }
        let (code, out) = run_cli(&[
            "--op",
            "scan",
            "--backend",
            "emulator",
            "--n",
            "1000",
            "--format",
            "csv",
            "--variant",
            "lookback",
        ]);
        let ok = code == 0
            && out.lines().count() == 3
            && out.lines().skip(1).all(|l| l.starts_with("lookback,") && l.ends_with(",PASS"));
        if !ok {
            return Err(format!("csv: exit {code}; output:\n{out}").into());
        }
        let (code, out) = run_cli(&["--op", "scan", "--backend", "emulator", "--n", "1000", "--format", "json"]);
        if code != 0 || !out.trim_start().starts_with("{\"op\":\"scan\"") || out.contains("\"ERROR\"") {
            return Err(format!("json: exit {code}; output:\n{out}").into());
        }
        for args in [
            &["--op", "scan", "--variant", "interleaved", "--backend", "emulator"][..],
            &["--op", "scan", "--n", "0", "--backend", "emulator"],
            &["--op", "scan", "--repeat", "0", "--n", "10", "--backend", "emulator"],
        ] {
            let (code, out) = run_cli(args);
            if code != 2 {
                return Err(format!("{args:?}: exit {code}, expected 2; output:\n{out}").into());
            }
        }
        let (code, out) = run_cli(&["--op", "scan", "--list"]);
        if code != 0 || !scan::all().all(|v| out.contains(v.name)) {
            return Err(format!("--list: exit {code}; output:\n{out}").into());
        }
        Ok(())
    })]
}

fn gpu_trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    for v in scan::all() {
        for kind in Kind::ALL {
            out.push(
                Trial::test(format!("scan::gpu::{}::{kind}", v.name), move || {
                    let backend = Backend::gpu().map_err(|e| e.to_string())?;
                    let mut sizes = SIZES.to_vec();
                    sizes.extend(own_sizes(v));
                    sizes.extend([1 << 24, 100_000_000]);
                    check(&backend, v, kind, &sizes)
                })
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
            );
        }
    }
    // 2^30 elements (4 GiB in, 4 GiB out): one trial, the variants one after another, so that
    // parallel test threads never hold several of these on the GPU at once.
    out.push(
        Trial::test("scan::gpu::all::n_2^30", || {
            let backend = Backend::gpu().map_err(|e| e.to_string())?;
            let data = Input::full_range(1 << 30, SEED).data;
            for v in scan::curriculum() {
                for kind in Kind::ALL {
                    check_one(&backend, v, kind, &data)?;
                }
            }
            Ok(())
        })
        .with_kind("gpu")
        .with_ignored_flag(!have_gpu),
    );
    out
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = emulator_trials();
    out.extend(probe_trials());
    out.extend(error_trials());
    out.extend(cli_trials());
    out.extend(gpu_trials(have_gpu));
    out
}
