//! The look-back scans of every pair (`lookback`'s rows: the classic kernel for `i32` sums,
//! `lookback__{type}_{op}` for the others; `lookback_warpspec_8x12x6`'s, with
//! `lookback_warpspec_8x12x6__{type}_{op}`): every type × operator × inclusive/exclusive
//! on the emulator at sizes that hurt (around a warp, around 1024, past one tile, a few tiles
//! and a partial one), integers and min/max exact, float sums within the stated bound; NaN and
//! ±0.0 for min/max; the 64-bit (split) look-back across several windows; the CLI; the PTX
//! entries. The same on the GPU with 2^20 + 7, 2^24 and a cancellation-heavy f32 input
//! (ignored where there is none). Failures name variant, type, op, kind, n, expected, actual.

use kernels::scan::index::{FLAG_AGGREGATE, FLAG_PREFIX, pack_status, value_slot};
use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, LaunchConfig};
use reduce_scan::input::{Pattern, typed};
use reduce_scan::kernel_ref;
use reduce_scan::scan::{Kind, Scan, ScanPlan, ScanVariant, cpu, instances};
use reduce_scan::types::{Elem, Op, Value};

const SEED: u64 = 0x5CA7;

/// A row of a generic scan: the variant, the element type, the operator.
type Row = (&'static ScanVariant, Elem, Op);

/// The elements of one tile of `tv`'s row.
fn tile(tv: Row) -> usize {
    reduce_scan::with_elem!(tv.1, T => tv.0.instance::<T>(tv.2).map_or(1, |i| i.plan.tile() as usize))
}

/// The emulator sizes for `tv`: 1, 31, 33, 1023, 1025, a tile ± 1, three tiles and a part;
/// for a persistent (warp-specialized) row also more than twice its ring's stages in tiles, so
/// that a block refills every stage (its `mbarrier`s' phases of both parities).
fn sizes(tv: Row) -> Vec<usize> {
    let t = tile(tv);
    let mut out = vec![1, 31, 33, 1023, 1025, t - 1, t + 1, 3 * t + 77];
    let stages = reduce_scan::with_elem!(tv.1, T => tv.0.instance::<T>(tv.2).map_or(0, |i| match i.plan {
        ScanPlan::WarpSpecialized { stages, .. } => stages,
        _ => 0,
    }));
    if stages > 0 {
        out.push((2 * stages as usize + 2) * t + 5);
    }
    out
}

/// Runs `tv` with `kind` on `data` twice back to back; checks the second run, and the input.
fn run_one<T: Value>(backend: &Backend, tv: Row, kind: Kind, data: &[T], what: &str) -> Result<(), Failed> {
    let (v, elem, op) = tv;
    let n = data.len();
    let at = || format!("scan {} type {} op {} {kind} n={n} ({what})", v.name, elem.name(), op.name());
    let buf = backend.upload(data).map_err(|e| format!("{}: upload: {e}", at()))?;
    let mut out = backend.alloc::<T>(n).map_err(|e| format!("{}: alloc: {e}", at()))?;
    let (got, depth) = {
        let inst = v.instance::<T>(op).map_err(|e| format!("{}: {e}", at()))?;
        let mut s = Scan::of(backend, inst, kind, &buf, &mut out, n).map_err(|e| format!("{}: {e}", at()))?;
        s.launch().and_then(|_| s.launch()).map_err(|e| format!("{}: {e}", at()))?;
        (s.result().map_err(|e| format!("{}: {e}", at()))?, s.depth())
    };
    cpu::check(op, kind, data, &got, depth).map_err(|e| format!("{}: {e}", at()))?;
    let after = backend.download(&buf).map_err(|e| e.to_string())?;
    if !after.iter().zip(data).all(|(a, b)| a.same_bits(*b)) {
        return Err(format!("{}: the input buffer was modified", at()).into());
    }
    Ok(())
}

/// Random input at every size, extremes and all-equal at the small ones.
fn matrix<T: Value>(backend: &Backend, tv: Row, kind: Kind, sizes: &[usize]) -> Result<(), Failed> {
    let for_sum = tv.2 == Op::Sum;
    for &n in sizes {
        run_one(backend, tv, kind, &typed::<T>(n, SEED ^ n as u64, Pattern::Random), "random")?;
        if n <= 1025 {
            let extremes = typed::<T>(n, SEED ^ n as u64, Pattern::Extremes { for_sum });
            run_one(backend, tv, kind, &extremes, "extremes")?;
        }
    }
    if for_sum && T::ELEM.is_float() {
        let n = sizes.iter().copied().max().unwrap_or(1);
        run_one(backend, tv, kind, &typed::<T>(n, SEED, Pattern::Cancelling), "cancelling")?;
    }
    Ok(())
}

/// NaN in the middle, then ±0.0 only: min/max scans give the canonical NaN from there on and
/// −0.0/+0.0 bit for bit.
fn nan_and_zeros<T: Value>(backend: &Backend, tv: Row, kind: Kind) -> Result<(), Failed> {
    let n = 2 * tile(tv) + 5;
    let mut data = typed::<T>(n, SEED, Pattern::Random);
    data[n / 3] = T::from_f64(f64::NAN);
    run_one(backend, tv, kind, &data, "NaN at n/3")?;
    let zeros: Vec<T> = (0..n).map(|i| T::from_f64(if i % 3 == 1 { -0.0 } else { 0.0 })).collect();
    run_one(backend, tv, kind, &zeros, "±0.0")
}

/// Dispatches `f::<T>` on an element type.
macro_rules! for_elem {
    ($elem:expr, $f:ident ( $($arg:expr),* )) => {
        reduce_scan::with_elem!($elem, T => $f::<T>($($arg),*))
    };
}

fn gpu() -> Result<Backend, Failed> {
    Backend::gpu().map_err(|e| e.to_string().into())
}

/// The look-back alone for `u64` sums (split layout), over status words and value slots the
/// test writes: 100 predecessors, aggregates only but tile 0, then a prefix at tile 70
/// (garbage before it, never read), then tile 5 (the pseudo-prefix before tile 0).
fn multi_window() -> Result<(), Failed> {
    let probe = |status: &[u64], values: &[u64], tile: u32| -> Result<u64, Failed> {
        let b = Backend::emulator();
        let st = b.upload(status).map_err(|e| e.to_string())?;
        let vals = b.upload(values).map_err(|e| e.to_string())?;
        let mut out = b.alloc::<u64>(1).map_err(|e| e.to_string())?;
        let k = kernel_ref!(kernels::scan::lookback_split_probe(a, b, c, d, e));
        let cfg = LaunchConfig { grid: 1, block: 32, shared_bytes: 0 };
        let args = (st.as_ptr() as *mut u64, vals.as_ptr() as *mut u64, out.as_mut_ptr(), tile, 9);
        // SAFETY: `tile` status words and 2·tile value slots, one output; one warp.
        unsafe { b.launch(&k, cfg, args) }.map_err(|e| e.to_string())?;
        Ok(b.download(&out).map_err(|e| e.to_string())?[0])
    };
    let agg = typed::<u64>(100, SEED, Pattern::Random);
    let sum = |r: std::ops::Range<usize>| agg[r].iter().fold(0u64, |a, &x| a.wrapping_add(x));
    let mut status: Vec<u64> = (0..100).map(|_| pack_status(9, FLAG_AGGREGATE, 0)).collect();
    let mut values = vec![0xdead_beefu64; 200];
    for (t, &a) in agg.iter().enumerate() {
        values[value_slot(t, FLAG_AGGREGATE)] = a;
    }
    status[0] = pack_status(9, FLAG_PREFIX, 0);
    values[value_slot(0, FLAG_PREFIX)] = agg[0];
    let got = probe(&status, &values, 100)?;
    if got != sum(0..100) {
        return Err(format!("u64 sum look-back, aggregates only: expected {}, got {got}", sum(0..100)).into());
    }
    status[70] = pack_status(9, FLAG_PREFIX, 0);
    values[value_slot(70, FLAG_PREFIX)] = sum(0..71);
    for t in 1..68 {
        values[value_slot(t, FLAG_AGGREGATE)] = 0x7777;
    }
    let got = probe(&status, &values, 100)?;
    if got != sum(0..100) {
        return Err(format!("u64 sum look-back, prefix at tile 70: expected {}, got {got}", sum(0..100)).into());
    }
    Ok(())
}

fn run_cli(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("reduce").chain(args.iter().copied());
    let code = reduce_scan_cli::cli::run_with(argv, &mut out, &mut err);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn cli() -> Result<(), Failed> {
    let base = ["--op", "scan", "--backend", "emulator", "--n", "20011", "--repeat", "1"];
    let with = |extra: &[&'static str]| base.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>();
    let (code, out, _) = run_cli(&with(&["--type", "f32", "--combine", "max"]));
    let pass = out.lines().filter(|l| l.contains("lookback") && l.ends_with("PASS")).count();
    if code != 0 || pass != 2 {
        return Err(format!("table: exit {code}, {pass} PASS rows (want 2):\n{out}").into());
    }
    let (code, out, _) = run_cli(&with(&["--type", "u64", "--combine", "sum", "--format", "csv"]));
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("lookback,u64,sum,")).collect();
    if code != 0 || rows.len() != 2 || !rows.iter().all(|r| r.ends_with(",PASS")) {
        return Err(format!("csv: exit {code}:\n{out}").into());
    }
    let (code, out, _) = run_cli(&with(&["--type", "f64", "--combine", "sum", "--format", "json"]));
    if code != 0 || !out.contains("\"type\":\"f64\"") || !out.contains("\"combine\":\"sum\"") || out.contains("FAIL") {
        return Err(format!("json: exit {code}:\n{out}").into());
    }
    for (extra, want) in [
        (&["--type", "f32", "--combine", "min", "--variant", "bit"][..], "`bit`"),
        (&["--type", "i64", "--combine", "max", "--variant", "tuning"], "tuning"),
        (&["--type", "f32", "--variant", "nope"], "nope"),
    ] {
        let (code, out, err) = run_cli(&with(extra));
        if code != 2 || err.lines().count() != 1 || !err.contains(want) {
            return Err(format!(
                "{extra:?}: exit {code} (want 2), stderr `{err}` (want one line naming {want}):\n{out}"
            )
            .into());
        }
    }
    Ok(())
}

/// Every kernel of every row of the generic scans is an `.entry` of every PTX build.
fn ptx_entries() -> Result<(), Failed> {
    for (arch, _, ptx) in reduce_scan::ptx::ARCHES {
        let have = reduce_scan::ptx::entries(ptx);
        for (v, elem, op) in generic_rows() {
            let symbols =
                reduce_scan::with_elem!(elem, T => v.instance::<T>(op).map_err(|e| e.to_string())?.plan.symbols());
            if let Some(symbol) = symbols.iter().find(|s| !have.contains(s)) {
                let id = format!("{}/{}/{}", v.name, elem.name(), op.name());
                return Err(format!("scan {id}: kernel `{symbol}` is not an .entry of the {arch} PTX").into());
            }
        }
    }
    Ok(())
}

/// Every row of every generic scan.
fn generic_rows() -> impl Iterator<Item = Row> {
    instances().filter(|(v, _, _)| v.is_generic())
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    for tv in generic_rows() {
        let (elem, op) = (tv.1, tv.2);
        for kind in Kind::ALL {
            let id = format!("{}::{}_{}::{kind}", tv.0.name, elem.name(), op.name());
            out.push(
                Trial::test(format!("typed_scan::emulator::{id}"), move || {
                    for_elem!(elem, matrix(&Backend::emulator(), tv, kind, &sizes(tv)))
                })
                .with_kind("emulator"),
            );
            out.push(
                Trial::test(format!("typed_scan::gpu::{id}"), move || {
                    let mut s = sizes(tv);
                    s.extend([(1 << 20) + 7, 1 << 24]);
                    for_elem!(elem, matrix(&gpu()?, tv, kind, &s))
                })
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
            );
            if elem.is_float() && op != Op::Sum {
                let run = move |b: &Backend| match elem {
                    Elem::F32 => nan_and_zeros::<f32>(b, tv, kind),
                    _ => nan_and_zeros::<f64>(b, tv, kind),
                };
                out.push(Trial::test(format!("typed_scan::emulator::{id}::nan_and_zeros"), move || {
                    run(&Backend::emulator())
                }));
                out.push(
                    Trial::test(format!("typed_scan::gpu::{id}::nan_and_zeros"), move || run(&gpu()?))
                        .with_kind("gpu")
                        .with_ignored_flag(!have_gpu),
                );
            }
        }
    }
    out.push(Trial::test("typed_scan::lookback::u64_multi_window_look_back", multi_window).with_kind("emulator"));
    // More emulator workers than cores, 40 tiles: look-backs meet predecessors with only an
    // aggregate, or nothing yet, across windows — for both status layouts.
    out.push(
        Trial::test("typed_scan::emulator::lookback::contended", || {
            let backend = Backend::with_emulator(reduce_scan::emu::Emulator::new().with_workers(8));
            for tv in generic_rows().filter(|t| t.2 == Op::Sum && matches!(t.1, Elem::U64 | Elem::F32)) {
                for kind in Kind::ALL {
                    let n = 40 * tile(tv) + 3;
                    for_elem!(tv.1, matrix(&backend, tv, kind, &[n]))?;
                }
            }
            Ok(())
        })
        .with_kind("emulator"),
    );
    out.push(Trial::test("typed_scan::cli::type_and_combine", cli));
    out.push(Trial::test("typed_scan::ptx::entries", ptx_entries));
    out.extend(cub_trials(have_gpu));
    out
}

/// CUB's `DeviceScan` for every type × operator at 2^20 + 7 through
/// `reduce_scan_cli::cub::time_typed_scan` (what `--compare-cub` times for typed scans): every call's last
/// element and the last call's whole output must pass the CPU check. Ignored without a GPU or
/// nvcc (the line printed says which).
fn cub_trials(have_gpu: bool) -> Vec<Trial> {
    let unavailable = if have_gpu { reduce_scan_cli::cub::available().err().map(|e| e.to_string()) } else { None };
    if let Some(why) = &unavailable {
        println!("typed scan CUB tests: ignored ({why})");
    }
    let ignored = !have_gpu || unavailable.is_some();
    let mut out = Vec::new();
    for elem in Elem::ALL {
        for op in Op::COMBINES {
            let name = format!("typed_scan::cub::{}_{}", elem.name(), op.name());
            let run = move || for_elem!(elem, cub_check(op));
            out.push(Trial::test(name, run).with_kind("gpu").with_ignored_flag(ignored));
        }
    }
    out
}

fn cub_check<T: Value>(op: Op) -> Result<(), Failed> {
    let n = (1 << 20) + 7;
    let data = typed::<T>(n, SEED ^ n as u64, Pattern::Random);
    let at = format!("CUB scan type {} op {} n={n}", T::ELEM.name(), op.name());
    let (timing, got) = reduce_scan_cli::cub::time_typed_scan(op, &data, 3).map_err(|e| format!("{at}: {e}"))?;
    if timing.times_us.len() != 3 || got.len() != n {
        return Err(format!("{at}: {} times, {} elements", timing.times_us.len(), got.len()).into());
    }
    // CUB's order of the adds is unknown: the bound of a sequential sum (depth n).
    cpu::check(op, Kind::Inclusive, &data, &got, n as u64).map_err(|e| format!("{at}: {e}").into())
}
