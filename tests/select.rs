//! The library's stream compaction (`reduce_scan::Select`): `i32`, `u32`, `f32`, `u8`, `u16` ×
//! every kind (if, flagged, unique, partition by predicate and by flags) × sizes around a warp, a
//! tile (7168, the narrow types' too) and several tiles, with predicates keeping about half, 1 %, none and all of the
//! elements; runs of random length for unique (and NaN, ±0.0 for `f32`); ranges at odd starts
//! (the misaligned load path) and flags over the same range; the object reused (a new epoch per
//! launch); every one of the 16 outcome sets a `Predicate` may hold (`f32` with NaN and ±0.0,
//! `i32`), as select and as partition. Every output is compared with the CPU's (`reduce_scan::select::cpu`), bit for bit,
//! and the output past what the kernel may write must be untouched; every bad request's
//! message. Run-length encoding (`Select::run_length_encode`) the same way, with runs of mean
//! length 1, 4 and 5000 (across tiles), its unique values and lengths against
//! `reduce_scan::select::cpu_run_length`. The same on the GPU where there is one, up to 2^24.

use libtest_mimic::{Failed, Trial};
use reduce_scan::Backend;
use reduce_scan::input::{Pattern, typed};
use reduce_scan::select::{CpuSelection, Predicate, Select, SelectElement, Selection, cpu, cpu_run_length, predicate};

const SEED: u64 = 0x5e1;
/// Around a warp, a block's 256 × 4, a tile (7168), two tiles, and many tiles.
const SIZES: [usize; 13] = [1, 31, 32, 33, 1023, 1024, 1025, 7167, 7168, 7169, 14_341, 70_001, 100_003];

fn err(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

/// An element type with the data the tests give it.
trait Case: SelectElement {
    /// A value from random bits: about uniform over a small range (so predicates and runs bite).
    fn value(w: u64) -> Self;
    /// A value the output buffer is filled with beforehand: the kernel must not write over it
    /// where it writes nothing.
    const SENTINEL: Self;
    /// Predicates keeping about half, 1 %, none, all, and others.
    const PREDICATES: &'static [&'static str];
}

impl Case for i32 {
    fn value(w: u64) -> i32 {
        (w % 2000) as i32 - 1000
    }
    const SENTINEL: i32 = 0x5e5e_5e5e;
    const PREDICATES: &'static [&'static str] = &["lt:0", "lt:-980", "gt:5000", "ge:-1000", "eq:7", "nonzero"];
}

impl Case for u32 {
    fn value(w: u64) -> u32 {
        (w % 2000) as u32
    }
    const SENTINEL: u32 = 0x5e5e_5e5e;
    const PREDICATES: &'static [&'static str] = &["lt:1000", "le:19", "gt:3000000000", "ge:0", "ne:5"];
}

impl Case for f32 {
    fn value(w: u64) -> f32 {
        match w % 97 {
            0 => f32::NAN,
            1 => -0.0,
            _ => ((w >> 8) % 2000) as f32 / 2.0 - 500.0,
        }
    }
    const SENTINEL: f32 = 1.5e30;
    const PREDICATES: &'static [&'static str] = &["lt:0", "le:-490", "gt:1e9", "ge:-1e9", "ne:0", "eq:0"];
}

impl Case for u8 {
    fn value(w: u64) -> u8 {
        (w % 200) as u8
    }
    const SENTINEL: u8 = 0xee;
    const PREDICATES: &'static [&'static str] = &["lt:100", "le:1", "gt:250", "ge:0", "eq:7", "nonzero"];
}

impl Case for u16 {
    fn value(w: u64) -> u16 {
        (w % 2000) as u16
    }
    const SENTINEL: u16 = 0x5e5e;
    const PREDICATES: &'static [&'static str] = &["lt:1000", "le:19", "gt:60000", "ge:0", "ne:5"];
}

/// `n` values from `seed`, each repeating the one before with probability 1 − 1/`run` (runs of
/// mean length `run`; 1: no repeats but by chance).
fn data<T: Case>(n: usize, seed: u64, run: u64) -> Vec<T> {
    let w = typed::<u64>(n, seed, Pattern::Random);
    let mut out: Vec<T> = Vec::with_capacity(n);
    for (i, &x) in w.iter().enumerate() {
        let repeat = i > 0 && x % run != 0;
        out.push(if repeat { out[i - 1] } else { T::value(x >> 2) });
    }
    out
}

/// The flag bytes: 0 about half the time, else 1, 2 or 255 (every non-zero byte selects).
fn flags(n: usize, seed: u64) -> Vec<u8> {
    typed::<u64>(n, seed, Pattern::Random).iter().map(|&w| [0, 0, 0, 1, 2, 255][(w % 6) as usize]).collect()
}

/// The kinds, by name, for the messages.
#[derive(Clone, Copy, Debug)]
enum Kind {
    If,
    Flagged,
    Unique,
    PartitionIf,
    PartitionFlagged,
}
const KINDS: [Kind; 5] = [Kind::If, Kind::Flagged, Kind::Unique, Kind::PartitionIf, Kind::PartitionFlagged];

/// One compaction of `values[range]` on `backend` with `select`, against the CPU.
fn check<T: Case>(
    backend: &Backend,
    select: &mut Select<'_, T>,
    (values, flag_bytes): (&[T], &[u8]),
    range: std::ops::Range<usize>,
    kind: Kind,
    (pred, p): (&str, Predicate<T>),
) -> Result<(), Failed> {
    let n = range.len();
    let ty = T::NAME;
    let what = format!("select {kind:?} {ty} n={n} (from {}) predicate={pred}", range.start);
    let f = &flag_bytes[range.clone()];
    let want_what = match kind {
        Kind::If => CpuSelection::If(p),
        Kind::Flagged => CpuSelection::Flagged(f),
        Kind::Unique => CpuSelection::Unique,
        Kind::PartitionIf => CpuSelection::PartitionIf(p),
        Kind::PartitionFlagged => CpuSelection::PartitionFlagged(f),
    };
    let (want, want_kept) = cpu(&values[range.clone()], want_what);
    let input = backend.upload(values).map_err(err)?;
    let flags_dev = backend.upload(flag_bytes).map_err(err)?;
    let sel = match kind {
        Kind::If => Selection::If(p),
        Kind::Flagged => Selection::Flagged(&flags_dev),
        Kind::Unique => Selection::Unique,
        Kind::PartitionIf => Selection::PartitionIf(p),
        Kind::PartitionFlagged => Selection::PartitionFlagged(&flags_dev),
    };
    // Room for 3 more than n: the sentinels past n must survive, as must those past the kept
    // elements of a selection.
    let mut output = backend.upload(&vec![T::SENTINEL; n + 3]).map_err(err)?;
    let mut count = backend.upload(&[u32::MAX]).map_err(err)?;
    select.enqueue(&input, range.clone(), sel, &mut output, &mut count).map_err(|e| format!("{what}: {e}"))?;
    let kept = backend.download(&count).map_err(err)?[0] as usize;
    if kept != want_kept {
        return Err(format!("{what}: kept {kept}, the CPU keeps {want_kept}").into());
    }
    let got = backend.download(&output).map_err(err)?;
    let written = want.len();
    if let Some(i) = (0..written).find(|&i| !got[i].same_bits(want[i])) {
        return Err(format!("{what}: output[{i}] = {}, the CPU's {} (kept {kept})", got[i], want[i]).into());
    }
    if let Some(i) = (written..n + 3).find(|&i| !got[i].same_bits(T::SENTINEL)) {
        return Err(format!("{what}: output[{i}] = {} was written (only {written} may be)", got[i]).into());
    }
    let after = backend.download(&input).map_err(err)?;
    if after.iter().zip(values).any(|(a, b)| !a.same_bits(*b)) {
        return Err(format!("{what}: the input was modified").into());
    }
    Ok(())
}

/// Every size × kind × predicate of `T` on one object (reused: a new epoch each launch), whole
/// buffers and ranges starting at elements 1 to 3 (not 16-byte aligned).
fn matrix<T: Case>(backend: &Backend, sizes: &[usize]) -> Result<(), Failed> {
    let mut select = Select::<T>::new(backend);
    for &n in sizes {
        let seed = SEED ^ n as u64;
        let fl = flags(n + 3, seed ^ 1);
        for kind in KINDS {
            let values = data::<T>(n + 3, seed, if matches!(kind, Kind::Unique) { 4 } else { 1 });
            let preds: &[&str] =
                if matches!(kind, Kind::If | Kind::PartitionIf) { T::PREDICATES } else { &["nonzero"] };
            for pred in preds {
                let p = (*pred, predicate::<T>(pred).map_err(err)?);
                check(backend, &mut select, (&values[..n], &fl[..n]), 0..n, kind, p)?;
            }
            let first = (preds[0], predicate::<T>(preds[0]).map_err(err)?);
            for start in 1..4 {
                check(backend, &mut select, (&values, &fl), start..start + n, kind, first)?;
            }
        }
        // Run-length encoding: runs of mean length 1, 4 and 5000 (across tiles).
        for run in [1, 4, 5000] {
            let values = data::<T>(n + 3, seed ^ run, run);
            check_run_length(backend, &mut select, &values[..n], 0..n)?;
            for start in 1..4 {
                check_run_length(backend, &mut select, &values, start..start + n)?;
            }
        }
    }
    Ok(())
}

/// Every one of the 16 outcome sets a library `Predicate` may hold (the command line names only
/// seven), as `select` and as `partition`, on `f32` values with NaN and ±0.0 (operands 0 and
/// a value inside the data's range) and on `i32`, at sizes around one and two tiles: each set
/// takes its own path through the kernel's comparison and flip (`Predicate::split`).
fn every_outcome_set(backend: &Backend) -> Result<(), Failed> {
    fn sets<T: Case>(backend: &Backend, operands: &[T]) -> Result<(), Failed> {
        let mut select = Select::<T>::new(backend);
        for n in [1025, 7169] {
            let values = data::<T>(n, SEED ^ 0x16 ^ n as u64, 1);
            let no_flags = vec![0u8; n];
            for &operand in operands {
                for outcomes in 0..16 {
                    let label = format!("outcomes {outcomes:#06b} operand {operand}");
                    for kind in [Kind::If, Kind::PartitionIf] {
                        let p = Predicate { outcomes, operand };
                        check(backend, &mut select, (&values, &no_flags), 0..n, kind, (&label, p))?;
                    }
                }
            }
        }
        Ok(())
    }
    sets::<f32>(backend, &[0.0, -250.5])?;
    sets::<i32>(backend, &[0, -3])
}

/// One run-length encoding of `values[range]` on `backend` with `select`, against the CPU: the
/// unique values bit for bit, the lengths, the run count; the sentinels past the runs in both
/// outputs untouched, the input unchanged.
fn check_run_length<T: Case>(
    backend: &Backend,
    select: &mut Select<'_, T>,
    values: &[T],
    range: std::ops::Range<usize>,
) -> Result<(), Failed> {
    const LENGTH_SENTINEL: u32 = 0x5e5e_5e5e;
    let n = range.len();
    let what = format!("run-length {} n={n} (from {})", T::NAME, range.start);
    let (want, want_lengths) = cpu_run_length(&values[range.clone()]);
    let input = backend.upload(values).map_err(err)?;
    let mut unique = backend.upload(&vec![T::SENTINEL; n + 3]).map_err(err)?;
    let mut lengths = backend.upload(&vec![LENGTH_SENTINEL; n + 3]).map_err(err)?;
    let mut runs = backend.upload(&[u32::MAX]).map_err(err)?;
    select
        .enqueue_run_length(&input, range, &mut unique, &mut lengths, &mut runs)
        .map_err(|e| format!("{what}: {e}"))?;
    let k = backend.download(&runs).map_err(err)?[0] as usize;
    if k != want.len() {
        return Err(format!("{what}: {k} runs, the CPU finds {}", want.len()).into());
    }
    let (got, got_lengths) = (backend.download(&unique).map_err(err)?, backend.download(&lengths).map_err(err)?);
    if let Some(i) = (0..k).find(|&i| !got[i].same_bits(want[i]) || got_lengths[i] != want_lengths[i]) {
        return Err(format!(
            "{what}: run {i} = {} × {}, the CPU's {} × {} ({k} runs)",
            got[i], got_lengths[i], want[i], want_lengths[i]
        )
        .into());
    }
    if let Some(i) = (k..n + 3).find(|&i| !got[i].same_bits(T::SENTINEL) || got_lengths[i] != LENGTH_SENTINEL) {
        return Err(format!(
            "{what}: unique[{i}] = {} or lengths[{i}] = {} was written ({k} runs)",
            got[i], got_lengths[i]
        )
        .into());
    }
    let after = backend.download(&input).map_err(err)?;
    if after.iter().zip(values).any(|(a, b)| !a.same_bits(*b)) {
        return Err(format!("{what}: the input was modified").into());
    }
    Ok(())
}

/// The plain forms (they wait and return the count) on a small input, and unique's edges:
/// NaN runs, ±0.0, one long run across tiles.
fn forms(backend: &Backend) -> Result<(), Failed> {
    let mut s = Select::<f32>::new(backend);
    let v = [1.0f32, 1.0, f32::NAN, f32::NAN, 0.0, -0.0, 2.0, 2.0];
    let input = backend.upload(&v).map_err(err)?;
    let mut out = backend.alloc::<f32>(8).map_err(err)?;
    let k = s.unique(&input, &mut out).map_err(err)?;
    let got = backend.download_prefix(&out, k).map_err(err)?;
    let want = [1.0f32, f32::NAN, f32::NAN, 0.0, 2.0];
    if k != 5 || got.iter().zip(&want).any(|(a, b)| !reduce_scan::Value::same_bits(*a, *b)) {
        return Err(format!("unique of {v:?}: {got:?}, want {want:?}").into());
    }
    let mut lengths = backend.alloc::<u32>(8).map_err(err)?;
    let k = s.run_length_encode(&input, &mut out, &mut lengths).map_err(err)?;
    let (got, got_lengths) =
        (backend.download_prefix(&out, k).map_err(err)?, backend.download_prefix(&lengths, k).map_err(err)?);
    if k != 5
        || got.iter().zip(&want).any(|(a, b)| !reduce_scan::Value::same_bits(*a, *b))
        || got_lengths != [2, 1, 1, 2, 2]
    {
        return Err(
            format!("run_length_encode of {v:?}: {got:?} × {got_lengths:?}, want {want:?} × [2, 1, 1, 2, 2]").into()
        );
    }
    let k = s.select_if(&input, predicate("gt:0.5").map_err(err)?, &mut out).map_err(err)?;
    if (k, backend.download_prefix(&out, k).map_err(err)?) != (4, vec![1.0, 1.0, 2.0, 2.0]) {
        return Err(format!("select_if gt:0.5 of {v:?}: kept {k}").into());
    }
    let k = s.partition_if(&input, predicate("ne:0").map_err(err)?, &mut out).map_err(err)?;
    if k != 6 {
        return Err(format!("partition_if ne:0 of {v:?}: kept {k}, want 6").into());
    }
    let long = vec![7i32; 3 * 7168 + 11];
    let input = backend.upload(&long).map_err(err)?;
    let mut out = backend.alloc::<i32>(long.len()).map_err(err)?;
    let mut s = Select::<i32>::new(backend);
    let k = s.unique(&input, &mut out).map_err(err)?;
    let flags = backend.upload(&vec![0u8; long.len()]).map_err(err)?;
    let none = s.flagged(&input, &flags, &mut out).map_err(err)?;
    let all = s.partition_flagged(&input, &flags, &mut out).map_err(err)?;
    let mut lengths = backend.alloc::<u32>(long.len()).map_err(err)?;
    let runs = s.run_length_encode(&input, &mut out, &mut lengths).map_err(err)?;
    let length = backend.download_prefix(&lengths, 1).map_err(err)?[0] as usize;
    if (k, none, all, runs, length) != (1, 0, 0, 1, long.len()) {
        return Err(format!(
            "one run of {}: unique kept {k}, none flagged kept {none}, partition {all}, run-length {runs} run of {length}",
            long.len()
        )
        .into());
    }
    Ok(())
}

/// Each bad request: one line, before any launch.
fn errors() -> Result<(), Failed> {
    let b = Backend::emulator();
    let input = b.upload(&[1i32, 2, 3, 4]).map_err(err)?;
    let mut short = b.alloc::<i32>(3).map_err(err)?;
    let mut out = b.alloc::<i32>(4).map_err(err)?;
    let three = b.upload(&[1u8, 0, 1]).map_err(err)?;
    let mut count = b.alloc::<u32>(1).map_err(err)?;
    let (mut lengths, mut short_lengths) = (b.alloc::<u32>(4).map_err(err)?, b.alloc::<u32>(2).map_err(err)?);
    let mut s = Select::<i32>::new(&b);
    let lt = predicate::<i32>("lt:3").map_err(err)?;
    let got = [
        s.select_if(&input, lt, &mut short).err().map(|e| e.to_string()),
        s.flagged(&input, &three, &mut out).err().map(|e| e.to_string()),
        s.enqueue(&input, 2..2, Selection::Unique, &mut out, &mut count).err().map(|e| e.to_string()),
        s.enqueue(&input, 3..6, Selection::Unique, &mut out, &mut count).err().map(|e| e.to_string()),
        s.run_length_encode(&input, &mut short, &mut lengths).err().map(|e| e.to_string()),
        s.run_length_encode(&input, &mut out, &mut short_lengths).err().map(|e| e.to_string()),
        s.enqueue_run_length(&input, 1..1, &mut out, &mut lengths, &mut count).err().map(|e| e.to_string()),
        predicate::<i32>("lt:x").err().map(|e| e.to_string()),
        predicate::<i32>("below:3").err().map(|e| e.to_string()),
        predicate::<f32>("lt").err().map(|e| e.to_string()),
    ];
    let want = [
        "invalid request: select of 4 elements into an output of 3: the output must hold at least as many elements as the input",
        "invalid request: select by a flag array of 3 bytes over an input of 4 elements: one flag per element",
        "invalid request: select: n = 0; the kernels take n in 1..=4294967295",
        "invalid request: select of elements 3..6 of a buffer of 4: the range must lie within the buffer",
        "invalid request: run-length encoding of 4 elements into an output of 3: the output must hold at least as many elements as the input",
        "invalid request: run-length encoding of 4 elements into lengths of 2: the lengths must hold at least as many elements as the input",
        "invalid request: run-length encoding: n = 0; the kernels take n in 1..=4294967295",
        "invalid request: predicate `lt:x`: `x` is not a value of type i32; expected lt:X, le:X, gt:X, ge:X, eq:X, ne:X (X of type i32) or nonzero",
        "invalid request: predicate `below:3`: unknown comparison `below`; expected lt:X, le:X, gt:X, ge:X, eq:X, ne:X (X of type i32) or nonzero",
        "invalid request: predicate `lt`: no `:` before its operand; expected lt:X, le:X, gt:X, ge:X, eq:X, ne:X (X of type f32) or nonzero",
    ];
    for (got, want) in got.into_iter().zip(want) {
        if got.as_deref() != Some(want) {
            return Err(format!("want `{want}`, got {got:?}").into());
        }
    }
    Ok(())
}

/// `reduce --op select`, `partition`, `unique` and `run_length` on the emulator: one PASS row for
/// each type and kind (a predicate, flags, runs), the table's note, and a sweep.
fn cli() -> Result<(), Failed> {
    let run = crate::common::reduce_on_the_emulator;
    for (op, ty, extra) in [
        ("select", "i32", &[][..]),
        ("select", "u32", &["--predicate", "flags"]),
        ("select", "f32", &["--predicate", "ge:999"]),
        ("partition", "i32", &["--predicate", "ne:3"]),
        ("partition", "f32", &["--predicate", "flags"]),
        ("unique", "u32", &["--run", "16"]),
        ("unique", "f32", &[]),
        ("run_length", "i32", &["--run", "16"]),
        ("run_length", "u32", &[]),
        ("run_length", "f32", &["--run", "3"]),
        ("select", "u8", &[]),
        ("partition", "u16", &["--predicate", "flags"]),
        ("unique", "u8", &["--run", "3"]),
        ("run_length", "u16", &[]),
    ] {
        let mut args = vec!["--op", op, "--type", ty, "--n", "20003", "--format", "csv"];
        args.extend(extra);
        let (code, out, err) = run(&args);
        let rows: Vec<&str> = out.lines().skip(1).collect();
        if code != 0 || rows.len() != 1 || !rows[0].starts_with(&format!("{op},{ty},")) || !rows[0].ends_with(",PASS") {
            return Err(format!("{}: exit {code}, want 0 and one PASS row:\n{out}{err}", args.join(" ")).into());
        }
    }
    let (code, out, _) = run(&["--op", "select", "--type", "u32", "--n", "3000", "--predicate", "lt:10"]);
    if code != 0
        || !out.contains("select of 3000 u32 values uniform over [0, 1000), keep lt:10")
        || !out.contains("PASS")
    {
        return Err(format!("table: exit {code}\n{out}").into());
    }
    let (code, out, _) = run(&["--op", "select", "--type", "u8", "--n", "3000"]);
    if code != 0
        || !out.contains("select of 3000 u8 values uniform over [0, 256), keep lt:128")
        || !out.contains("PASS")
    {
        return Err(format!("u8 table: exit {code}\n{out}").into());
    }
    // --metrics: the emulator's counters of the row's one kernel. The 13 whole tiles of 100,003
    // elements are copied to shared memory by cp.async exactly once (7168 × 4 bytes each, in
    // 32-byte sectors), and the heads' indices go in by plain 16-bit stores (no shared atomics).
    let (code, out, err) = run(&["--op", "run_length", "--n", "100003", "--metrics", "--format", "csv"]);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    let header: Vec<&str> = lines.first().map_or(vec![], |h| h.split(',').collect());
    let row: Vec<&str> = lines.get(1).map_or(vec![], |r| r.split(',').collect());
    let cell = |name: &str| header.iter().position(|h| *h == name).and_then(|i| row.get(i).copied());
    let count = |name: &str| cell(name).and_then(|v| v.parse::<u64>().ok());
    if code != 0
        || cell("verdict") != Some("PASS")
        || count("ldgsts_sectors").map(|s| s * 32) != Some(13 * 7168 * 4)
        || count("shared_atom_requests").is_none_or(|r| r != 0)
    {
        return Err(format!("run_length --metrics: exit {code}, want 0, a PASS row, ldgsts_sectors × 32 = {} and no shared atomics:\n{out}{err}", 13 * 7168 * 4).into());
    }
    let (code, out, _) = run(&["--op", "unique", "--sweep", "8..10"]);
    let rows = out.lines().filter(|l| l.starts_with("unique,i32,run:4,") && l.ends_with(",PASS")).count();
    if code != 0 || rows != 3 {
        return Err(format!("--sweep 8..10: exit {code}, {rows} PASS rows, want 3\n{out}").into());
    }
    Ok(())
}

fn on(gpu: bool) -> Result<Backend, Failed> {
    if gpu { Backend::gpu().map_err(err) } else { Ok(Backend::emulator()) }
}

macro_rules! per_type {
    ($out:ident, $have_gpu:ident, $($t:ty),*) => {$(
        $out.push(
            Trial::test(format!("select::emulator::{}", <$t as SelectElement>::NAME), || {
                matrix::<$t>(&Backend::emulator(), &SIZES)
            })
            .with_kind("emulator"),
        );
        $out.push(
            Trial::test(format!("select::gpu::{}", <$t as SelectElement>::NAME), move || {
                matrix::<$t>(&on(true)?, &[1, 33, 9217, 100_003, (1 << 20) + 7, 1 << 24])
            })
            .with_kind("gpu")
            .with_ignored_flag(!$have_gpu),
        );
    )*};
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = vec![
        Trial::test("select::errors", errors),
        Trial::test("select::cli", cli).with_kind("emulator"),
        Trial::test("select::emulator::forms", || forms(&Backend::emulator())).with_kind("emulator"),
        Trial::test("select::gpu::forms", || forms(&on(true)?)).with_kind("gpu").with_ignored_flag(!have_gpu),
        Trial::test("select::emulator::every_outcome_set", || every_outcome_set(&Backend::emulator()))
            .with_kind("emulator"),
        Trial::test("select::gpu::every_outcome_set", || every_outcome_set(&on(true)?))
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
    ];
    per_type!(out, have_gpu, i32, u32, f32, u8, u16);
    out
}
