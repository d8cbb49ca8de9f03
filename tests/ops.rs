//! The library's operations beyond the whole-buffer reduction (`reduce_scan::ops`): argmin,
//! argmax, dot product, sum of squares and norm, for every element type × blocks 32, 256, 1024
//! × sizes that hurt (1, around a warp, around 1024, 2^16 + 7), on random input, input full of
//! ties (few distinct values, all equal), the type's extremes, cancelling float input; NaN at
//! the first, a middle and the last position and two NaNs, ±0.0 ties; sub-ranges at odd starts
//! (the index counts from the buffer); the dot kernel with inputs at different offsets from a
//! 16-byte boundary; errors (mismatched lengths, ranges past the end). The same on the GPU with
//! 2^20 + 7 and 2^24 (ignored where there is none). A failure names the operation, type, n,
//! block, input, expected and actual.

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, LaunchConfig};
use reduce_scan::input::{Pattern, typed};
use reduce_scan::ops::{Answer, Operation, Prepared};
use reduce_scan::reduce::transform::{self, Transform};
use reduce_scan::types::{Elem, Value};
use reduce_scan::{ArgReducer, Max, Min, Reducer, Sum, cpu};

/// Sizes that hurt.
const SIZES: &[usize] = &[1, 31, 32, 33, 1023, 1024, 1025, (1 << 16) + 7];
/// The GPU's, beyond them.
const GPU_SIZES: &[usize] = &[(1 << 20) + 7, 1 << 24];
const BLOCKS: &[u32] = &[32, 256, 1024];
const SEED: u64 = 0x0A39;

fn emulator() -> Result<Backend, Failed> {
    Ok(Backend::emulator())
}

fn gpu() -> Result<Backend, Failed> {
    Backend::gpu().map_err(|e| format!("gpu: {e}").into())
}

/// `op` on `a` (and `b`) at `block`, launched once and checked; the failure names everything.
fn run<T: Value>(
    backend: &Backend,
    op: Operation,
    a: Vec<T>,
    b: Option<Vec<T>>,
    block: u32,
    what: &str,
) -> Result<(), Failed> {
    let n = a.len();
    let at = || format!("{} type {} n={n} block={block} ({what})", op.name(), T::ELEM.name());
    let mut p = Prepared::new(backend, op, a, b, Some(block)).map_err(|e| format!("{}: {e}", at()))?;
    p.enqueue().map_err(|e| format!("{}: {e}", at()))?;
    let got = p.answer().map_err(|e| format!("{}: {e}", at()))?;
    p.check(got).map_err(|e| format!("{}: {e}", at()).into())
}

/// Input with few distinct values (ties everywhere): the seed's random values modulo 5, as `T`.
fn ties<T: Value>(n: usize, seed: u64) -> Vec<T> {
    typed::<u64>(n, seed, Pattern::Random).iter().map(|&w| T::from_f64((w % 5) as f64 - 2.0)).collect()
}

/// Every size, several patterns; the second input of a dot product from another seed.
fn matrix<T: Value>(backend: &Backend, op: Operation, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    let second = |n: usize, p: Pattern| (op.inputs() == 2).then(|| typed::<T>(n, SEED ^ 0x55 ^ n as u64, p));
    for &n in sizes {
        let seed = SEED ^ n as u64;
        run(backend, op, typed::<T>(n, seed, Pattern::Random), second(n, Pattern::Random), block, "random")?;
        run(backend, op, ties::<T>(n, seed), second(n, Pattern::Random), block, "few values: ties")?;
        if n <= 1025 {
            let all_equal = typed::<T>(n, seed, Pattern::AllEqual);
            run(backend, op, all_equal, second(n, Pattern::AllEqual), block, "all equal")?;
            let for_sum = op.inputs() == 2 || matches!(op, Operation::SumOfSquares | Operation::Norm);
            // Float squares of values near MAX overflow to inf: the extremes of a sum, shrunk.
            let extremes = typed::<T>(n, seed, Pattern::Extremes { for_sum });
            let extremes = if for_sum && T::ELEM.is_float() { shrink(extremes) } else { extremes };
            run(backend, op, extremes, second(n, Pattern::Random), block, "extremes")?;
        }
    }
    if T::ELEM.is_float() {
        let n = 4099;
        run(
            backend,
            op,
            typed::<T>(n, SEED, Pattern::Cancelling),
            second(n, Pattern::Cancelling),
            block,
            "cancelling",
        )?;
    }
    Ok(())
}

/// Values whose squares and products stay finite: each divided by 2^600 (f64) or 2^70 (f32)
/// where it is large.
fn shrink<T: Value>(v: Vec<T>) -> Vec<T> {
    let limit = if T::ELEM == Elem::F32 { 2f64.powi(60) } else { 2f64.powi(500) };
    v.into_iter().map(|x| if x.to_f64().abs() > limit { T::from_f64(x.to_f64() / limit / limit) } else { x }).collect()
}

/// NaN at the first, a middle and the last position, two NaNs, and ±0.0 ties: the index
/// of the first NaN (or the first zero), whatever the block.
fn nan_and_zeros<T: Value>(backend: &Backend, op: Operation) -> Result<(), Failed> {
    let n = 2053;
    for at in [0, n / 2, n - 1] {
        let mut data = typed::<T>(n, SEED ^ at as u64, Pattern::Random);
        data[at] = T::from_f64(f64::NAN);
        run(backend, op, data.clone(), None, 256, &format!("NaN at {at}"))?;
        data[(at + 700) % n] = T::from_f64(f64::NAN);
        run(backend, op, data, None, 64, &format!("NaNs at {at} and {}", (at + 700) % n))?;
    }
    let zeros: Vec<T> = (0..n).map(|i| T::from_f64(if i % 3 == 1 { -0.0 } else { 0.0 })).collect();
    run(backend, op, zeros.clone(), None, 256, "±0.0, +0.0 first")?;
    run(backend, op, zeros[1..].to_vec(), None, 1024, "±0.0, −0.0 first")
}

/// Argmin or argmax over the operator's identity (+inf or MAX for argmin, −inf or MIN for
/// argmax): everywhere (the answer is index 0, though no element beats the identity a thread
/// starts from: what `Arg::update`'s "nothing held" rule is for), and with one value that beats
/// it late, early, or every 97th element.
fn identity_values<T: Value>(backend: &Backend, op: Operation) -> Result<(), Failed> {
    let (identity, beats) = crate::common::arg_identity_and_winner::<T>(matches!(op, Operation::ArgMin));
    for (n, block) in [(2053, 64), (65_539, 256), (65_539, 1024)] {
        let data = vec![identity; n];
        run(backend, op, data.clone(), None, block, "the identity everywhere")?;
        for at in [n - 1, 5] {
            let mut one = data.clone();
            one[at] = beats;
            run(backend, op, one, None, block, &format!("the identity but at {at}"))?;
        }
        let sprinkled: Vec<T> = (0..n).map(|i| if i % 97 == 40 { beats } else { identity }).collect();
        run(backend, op, sprinkled, None, block, "the identity but every 97th")?;
    }
    Ok(())
}

/// A float dot product, sum of squares or norm with a NaN (first, middle, last, and a second
/// one): NaN, as the CPU's sum and CUB's give, whatever the block.
fn transform_nan<T: Value>(backend: &Backend, op: Operation) -> Result<(), Failed> {
    let n = 2053;
    let second = |p: u64| (op.inputs() == 2).then(|| typed::<T>(n, SEED ^ p, Pattern::Random));
    for at in [0, n / 2, n - 1] {
        let mut data = typed::<T>(n, SEED ^ at as u64, Pattern::Random);
        data[at] = T::from_f64(f64::NAN);
        run(backend, op, data.clone(), second(1), 256, &format!("NaN at {at}"))?;
        data[(at + 700) % n] = T::from_f64(f64::NAN);
        run(backend, op, data, second(2), 64, &format!("NaNs at {at} and {}", (at + 700) % n))?;
    }
    // The NaN in the second input of a dot product.
    if op.inputs() == 2 {
        let mut b = typed::<T>(n, SEED ^ 3, Pattern::Random);
        b[n / 3] = T::from_f64(f64::NAN);
        run(backend, op, typed::<T>(n, SEED, Pattern::Random), Some(b), 1024, "NaN in b")?;
    }
    Ok(())
}

/// Sub-ranges at odd starts and lengths: the index counts from the start of the buffer.
fn ranges<T: Value>(backend: &Backend) -> Result<(), Failed> {
    let data = ties::<T>(20_011, SEED);
    let buf = backend.upload(&data).map_err(|e| e.to_string())?;
    let mut max = ArgReducer::<T, Max>::new(backend);
    let mut min = ArgReducer::<T, Min>::new(backend);
    let mut sums = Reducer::<T, Sum>::with_transform_block(backend, 128).map_err(|e| e.to_string())?;
    for r in [5..19_998, 1..4, 4..4, 7..8, 3..20_011] {
        let at = |what: &str| format!("{what} type {} range {r:?}", T::ELEM.name());
        let shift = |x: Option<(T, u64)>| x.map(|(v, i)| (v, i + r.start as u64));
        let got = max.reduce_range(&buf, r.clone()).map_err(|e| format!("{}: {e}", at("argmax")))?;
        cpu::check_arg(false, &data[r.clone()], got.map(|e| (e.value, e.index - r.start as u64)))
            .map_err(|e| format!("{}: {e}", at("argmax")))?;
        let got = min.reduce_range(&buf, r.clone()).map_err(|e| format!("{}: {e}", at("argmin")))?;
        let want = shift(cpu::arg_reference(true, &data[r.clone()]));
        if got.map(|e| (e.value.bits(), e.index)) != want.map(|(v, i)| (v.bits(), i)) {
            return Err(format!("{}: expected {want:?}, got {got:?}", at("argmin")).into());
        }
        let got = sums.dot_range(&buf, &buf, r.clone()).map_err(|e| format!("{}: {e}", at("dot")))?;
        cpu::check_transform(&data[r.clone()], Some(&data[r.clone()]), got, 64 + r.len() as u64)
            .map_err(|e| format!("{}: {e}", at("dot")))?;
    }
    Ok(())
}

/// The dot kernel on inputs at different offsets from a 16-byte boundary (the one-by-one path
/// no `DeviceBuffer` range reaches: both ranges start at the same element of aligned
/// allocations), at every offset pair, against the reference.
fn misaligned_dot<T: Value>(backend: &Backend) -> Result<(), Failed> {
    let n = 5003;
    let (a, b) = (ties::<T>(n + 4, SEED), ties::<T>(n + 4, SEED ^ 9));
    let (da, db) = (backend.upload(&a).map_err(|e| e.to_string())?, backend.upload(&b).map_err(|e| e.to_string())?);
    let mut out = backend.alloc::<T>(64).map_err(|e| e.to_string())?;
    let mut ticket = backend.alloc::<u32>(1).map_err(|e| e.to_string())?;
    let k = transform::kernel::<T>(Transform::Product);
    for (i, j) in [(0, 1), (1, 0), (1, 3), (3, 2), (2, 2)] {
        let cfg = LaunchConfig { grid: 7, block: 64, shared_bytes: 0 };
        let args =
            (da.as_ptr().wrapping_add(i), db.as_ptr().wrapping_add(j), out.as_mut_ptr(), ticket.as_mut_ptr(), n as u32);
        // SAFETY: a[i..i + n] and b[j..j + n] lie within their buffers (n + 4 elements, i, j ≤ 3);
        // the partials hold 64 ≥ grid + 1 elements; the ticket is zeroed, and each launch leaves
        // it at 0 before the next on the same stream.
        unsafe { backend.launch(&k, cfg, args) }.map_err(|e| format!("dot at offsets {i}, {j}: {e}"))?;
        let got = backend.read_element(&out, 7).map_err(|e| e.to_string())?;
        cpu::check_transform(&a[i..i + n], Some(&b[j..j + n]), got, 200)
            .map_err(|e| format!("dot type {} at offsets {i}, {j}: {e}", T::ELEM.name()))?;
    }
    Ok(())
}

/// Errors: one line each, before any launch.
fn errors() -> Result<(), Failed> {
    let b = Backend::emulator();
    let (x, y) =
        (b.upload(&[1.0f32, 2.0, 3.0]).map_err(|e| e.to_string())?, b.upload(&[1.0f32]).map_err(|e| e.to_string())?);
    let mut r = Reducer::<f32, Sum>::new(&b);
    let want = [
        (r.dot(&x, &y).err(), "invalid request: dot of buffers of 3 and 1 elements: the lengths must match"),
        (
            r.dot_range(&x, &y, 0..2).err(),
            "invalid request: dot of elements 0..2 of buffers of 3 and 1 elements: the range must lie within both",
        ),
        (
            r.norm_range(&x, 2..4).err(),
            "invalid request: sum of squares of elements 2..4 of a buffer of 3: the range must lie within the buffer",
        ),
        (
            ArgReducer::<f32, Max>::with_block(&b, 2048).err(),
            "invalid request: block 2048 is not allowed; block must be a power of two in 32..=1024",
        ),
    ];
    for (got, want) in want {
        match got {
            Some(e) if e.to_string() == want => {}
            other => return Err(format!("want `{want}`, got {other:?}").into()),
        }
    }
    let empty = b.alloc::<f32>(0).map_err(|e| e.to_string())?;
    if r.dot(&empty, &empty).ok() != Some(0.0) || r.norm(&empty).ok() != Some(0.0) || r.result().ok() != Some(0.0) {
        return Err("empty input: want 0 (and a norm of 0.0) from dot, norm and result".into());
    }
    match ArgReducer::<f32, Min>::new(&b).reduce(&empty) {
        Ok(None) => Ok(()),
        other => Err(format!("argmin of an empty buffer: want Ok(None), got {other:?}").into()),
    }
}

/// Repeated calls of one object at changing sizes reuse its storage and stay right (the ticket
/// is back at 0 after each launch).
fn reuse() -> Result<(), Failed> {
    let b = Backend::emulator();
    let data = typed::<f64>(40_000, SEED, Pattern::Random);
    let buf = b.upload(&data).map_err(|e| e.to_string())?;
    let mut max = ArgReducer::<f64, Max>::new(&b);
    let mut r = Reducer::<f64, Sum>::new(&b);
    for n in [40_000usize, 17, 4096, 1, 33_333, 40_000] {
        let got = max.reduce_range(&buf, 0..n).map_err(|e| e.to_string())?.map(|e| (e.value, e.index));
        cpu::check_arg(false, &data[..n], got).map_err(|e| format!("argmax n={n}: {e}"))?;
        let got = r.sum_of_squares_range(&buf, 0..n).map_err(|e| e.to_string())?;
        cpu::check_transform(&data[..n], None, got, 80).map_err(|e| format!("sum of squares n={n}: {e}"))?;
    }
    Ok(())
}

/// `reduce --op OP --type T`: every operation × type on the emulator, one CSV row each, PASS;
/// the table and JSON forms; `--list`; a sweep.
fn cli() -> Result<(), Failed> {
    let run = crate::common::reduce_on_the_emulator;
    for op in Operation::ALL {
        for elem in Elem::ALL {
            let (code, out, err) = run(&["--op", op.name(), "--type", elem.name(), "--n", "5003", "--format", "csv"]);
            let rows: Vec<&str> = out.lines().skip(1).collect();
            let head = format!("{},{},5003,", op.name(), elem.name());
            if code != 0 || rows.len() != 1 || !rows[0].starts_with(&head) || !rows[0].ends_with(",PASS") {
                return Err(format!(
                    "--op {} --type {}: exit {code}, want 0 and one PASS row:\n{out}{err}",
                    op.name(),
                    elem.name()
                )
                .into());
            }
        }
    }
    let (code, out, _) = run(&["--op", "argmax", "--type", "i64", "--n", "3000", "--block", "64"]);
    if code != 0
        || !out.contains("argmax of 3000 i64 elements")
        || !out.contains("arg_reduce__i64_max")
        || !out.contains("PASS")
    {
        return Err(format!("table: exit {code}\n{out}").into());
    }
    let (code, out, _) = run(&["--op", "norm", "--type", "f64", "--n", "3000", "--format", "json"]);
    if code != 0 || !out.contains("\"operation\":\"norm\"") || !out.contains("\"verdict\":\"PASS\"") {
        return Err(format!("json: exit {code}\n{out}").into());
    }
    let (code, out, _) = run(&["--op", "dot", "--list"]);
    if code != 0 || out.lines().count() != Operation::ALL.len() || !out.contains("torch.linalg.vector_norm") {
        return Err(format!("--list: exit {code}\n{out}").into());
    }
    let (code, out, _) = run(&["--op", "argmin", "--type", "u32", "--sweep", "8..10"]);
    let rows = out.lines().filter(|l| l.starts_with("argmin,u32,") && l.ends_with(",PASS")).count();
    if code != 0 || rows != 3 {
        return Err(format!("--sweep 8..10: exit {code}, {rows} PASS rows, want 3\n{out}").into());
    }
    Ok(())
}

/// One operation's trials for one element type: its matrix at every block size on the
/// emulator and the GPU, and its NaN cases for a float type.
fn op_trials(op: Operation, elem: Elem, have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    let id = format!("{}::{}", op.name(), elem.name());
    for &block in BLOCKS {
        out.push(
            Trial::test(
                format!("ops::emulator::{id}::block_{block}"),
                move || reduce_scan::with_elem!(elem, T => matrix::<T>(&emulator()?, op, block, SIZES)),
            )
            .with_kind("emulator"),
        );
        out.push(
            Trial::test(format!("ops::gpu::{id}::block_{block}"), move || {
                let sizes: Vec<usize> = SIZES.iter().chain(GPU_SIZES).copied().collect();
                reduce_scan::with_elem!(elem, T => matrix::<T>(&gpu()?, op, block, &sizes))
            })
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
        );
    }
    // The trials `ops::emulator::{id}::$name` and `ops::gpu::{id}::$name`: `$check::<T>(backend,
    // op)` on each backend.
    macro_rules! on_both {
        ($name:literal, $check:ident) => {
            out.push(Trial::test(
                format!("ops::emulator::{id}::{}", $name),
                move || reduce_scan::with_elem!(elem, T => $check::<T>(&emulator()?, op)),
            ));
            out.push(
                Trial::test(
                    format!("ops::gpu::{id}::{}", $name),
                    move || reduce_scan::with_elem!(elem, T => $check::<T>(&gpu()?, op)),
                )
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
            );
        };
    }
    let arg = matches!(op, Operation::ArgMin | Operation::ArgMax);
    if elem.is_float() && !arg {
        on_both!("nan", transform_nan);
    }
    if arg {
        on_both!("identity_values", identity_values);
    }
    if elem.is_float() && arg {
        on_both!("nan_and_zeros", nan_and_zeros);
    }
    out
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    for op in Operation::ALL {
        for elem in Elem::ALL {
            out.extend(op_trials(op, elem, have_gpu));
        }
    }
    for elem in Elem::ALL {
        out.push(Trial::test(
            format!("ops::emulator::ranges::{}", elem.name()),
            move || reduce_scan::with_elem!(elem, T => ranges::<T>(&emulator()?)),
        ));
        out.push(Trial::test(
            format!("ops::emulator::misaligned_dot::{}", elem.name()),
            move || reduce_scan::with_elem!(elem, T => misaligned_dot::<T>(&emulator()?)),
        ));
        out.push(
            Trial::test(
                format!("ops::gpu::ranges::{}", elem.name()),
                move || reduce_scan::with_elem!(elem, T => ranges::<T>(&gpu()?)),
            )
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
        );
    }
    out.push(Trial::test("ops::errors", errors));
    out.push(Trial::test("ops::cli", cli));
    out.push(Trial::test("ops::reuse", reuse));
    out.push(Trial::test("ops::answers_print", || {
        let e = reduce_scan::Extremum { value: 2.5f32, index: 7 };
        let shown = [Answer::Position(Some(e)).to_string(), Answer::<f32>::Position(None).to_string()];
        if shown != ["2.5 at 7", "none"] {
            return Err(format!("{shown:?}").into());
        }
        Ok(())
    }));
    out
}
