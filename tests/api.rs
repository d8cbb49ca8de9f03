//! The library objects for every element type × operator: `Reducer<T, Op>` and
//! `Scanner<T, Op>` synchronous on whole buffers (empty, one element, several tiles; float
//! min/max also with a NaN), synchronous on sub-ranges (an odd start and odd length, an aligned
//! start, a short and an empty range; the scanner's output past the range left alone), and
//! queued (`enqueue`, then `result` / `wait`, several launches in flight), and reducers called
//! repeatedly with one shape (CUDA graphs on a GPU) while the buffer's contents change. On the emulator, and
//! the same on the GPU with larger sizes, one per row of `SUM_PLAN` (ignored where there is
//! none). Inputs come from fixed seeds (`reduce_scan::input::typed`); a failure names the object,
//! form, type, operator, n and range, expected and actual.

use std::ops::Range;

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, DeviceBuffer};
use reduce_scan::cpu;
use reduce_scan::input::{Pattern, typed};
use reduce_scan::reduce::{geometry_of, sum_depth};
use reduce_scan::registry::Op;
use reduce_scan::scan::Kind;
use reduce_scan::scan::{cpu as scan_cpu, find, scan_depth};
use reduce_scan::sum::choose;
use reduce_scan::types::identity;
use reduce_scan::{Max, Min, OpKind, Reducer, Scanner, Sum, Value};

const SEED: u64 = 0xA9124;

/// Where the tests run and how large their inputs are.
#[derive(Clone, Copy)]
struct Place {
    /// `emulator` or `gpu`, as the trial names say.
    name: &'static str,
    backend: fn() -> Result<Backend, Failed>,
    /// Sizes of the whole-buffer form.
    whole: &'static [usize],
    /// Elements of the buffer the sub-range and queued forms work in.
    n: usize,
}

/// The emulator: a few tiles of the scans (9216 elements of 32 bits per typed tile).
const EMULATOR: Place = Place { name: "emulator", backend: emulator, whole: &[0, 1, 20_011], n: 20_011 };
/// The GPU: also one size in each row of `SUM_PLAN` (block 256, 512 and 1024).
const GPU: Place = Place {
    name: "gpu",
    backend: gpu,
    whole: &[0, 1, 20_011, (1 << 22) - 5, (1 << 24) + 3, (1 << 24) + (1 << 22) + 1],
    n: (1 << 20) + 7,
};

fn emulator() -> Result<Backend, Failed> {
    Ok(Backend::emulator())
}

fn gpu() -> Result<Backend, Failed> {
    Backend::gpu().map_err(|e| format!("gpu: {e}").into())
}

/// The sub-ranges of a buffer of `n ≥ 64`: odd start (on no 16-byte boundary) and odd length,
/// a start on a 16-byte boundary for every type (element 4) and odd length, a short one, and
/// an empty one.
fn ranges(n: usize) -> [Range<usize>; 4] {
    let odd = (n - 10) | 1;
    [5..5 + odd - 2, 4..4 + ((n / 2) | 1), 1..4, 7..7]
}

/// `Reducer<T, Op>` as it names itself in failures.
fn what<T: Value, O: OpKind>(object: &str) -> String {
    format!("{object}<{}, {}>", T::ELEM.name(), O::OP.name())
}

fn input<T: Value, O: OpKind>(n: usize, pattern: Pattern) -> Vec<T> {
    typed::<T>(n, SEED ^ n as u64 ^ ((O::OP as u64) << 40), pattern)
}

/// The depth of the addition tree the library's reduction of `n` elements uses (for the
/// float-sum bound; integers and min/max are exact whatever it is).
fn reduce_depth<T: Value, O: OpKind>(backend: &Backend, n: usize) -> Result<u64, Failed> {
    if n == 0 || !T::ELEM.is_float() || O::OP != Op::Sum {
        return Ok(1);
    }
    let choice = choose(T::ELEM, O::OP, n, backend.info().compute_capability).map_err(|e| e.to_string())?;
    let inst = choice.variant.instance::<T>(O::OP).map_err(|e| e.to_string())?;
    let g = geometry_of(backend, &inst, n, choice.block, choice.blocks_per_sm).map_err(|e| e.to_string())?;
    Ok(sum_depth(&inst, n, &g))
}

/// Checks a reduction's answer `got` over `data`; the failure names everything.
fn check_reduction<T: Value, O: OpKind>(backend: &Backend, form: &str, data: &[T], got: T) -> Result<(), Failed> {
    let depth = reduce_depth::<T, O>(backend, data.len())?;
    cpu::check(O::OP, data, got, depth)
        .map_err(|e| format!("{} {form} n={}: {e}", what::<T, O>("Reducer"), data.len()).into())
}

/// The whole-buffer inputs of `n` elements: random values, and for float min/max the same
/// with a NaN a third of the way in.
fn whole_inputs<T: Value, O: OpKind>(n: usize) -> Vec<(&'static str, Vec<T>)> {
    let mut inputs = vec![("random", input::<T, O>(n, Pattern::Random))];
    if T::ELEM.is_float() && O::OP != Op::Sum && n > 2 {
        let mut nan = input::<T, O>(n, Pattern::Random);
        nan[n / 3] = T::from_f64(f64::NAN);
        inputs.push(("NaN at n/3", nan));
    }
    inputs
}

/// `reduce` on whole buffers of every size; float min/max also with a NaN in the middle.
fn reducer_whole<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let mut reducer = Reducer::<T, O>::new(&backend);
    for &n in place.whole {
        for (pattern, data) in whole_inputs::<T, O>(n) {
            let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
            let form = format!("reduce ({pattern})");
            let got = reducer.reduce(&buf).map_err(|e| format!("{} {form} n={n}: {e}", what::<T, O>("Reducer")))?;
            check_reduction::<T, O>(&backend, &form, &data, got)?;
        }
    }
    Ok(())
}

/// `reduce_range` on the sub-ranges of one buffer, with one reducer.
fn reducer_range<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let data = input::<T, O>(place.n, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
    let mut reducer = Reducer::<T, O>::new(&backend);
    for range in ranges(place.n) {
        let form = format!("reduce_range {range:?} of a buffer of {}", place.n);
        let got = reducer
            .reduce_range(&buf, range.clone())
            .map_err(|e| format!("{} {form}: {e}", what::<T, O>("Reducer")))?;
        check_reduction::<T, O>(&backend, &form, &data[range], got)?;
    }
    Ok(())
}

/// `enqueue` then `result`: nothing queued yet is an error; three reducers with launches in
/// flight at once; an empty range gives the identity.
fn reducer_enqueue<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let name = what::<T, O>("Reducer");
    let data = input::<T, O>(place.n, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
    let mut reducers: Vec<Reducer<'_, T, O>> = (0..3).map(|_| Reducer::new(&backend)).collect();
    if let Ok(got) = reducers[0].result() {
        return Err(format!("{name}: result() before any enqueue gave {got}, expected an error").into());
    }
    let [a, b, ..] = ranges(place.n);
    let jobs = [0..place.n, a, b];
    for round in 0..2 {
        for (r, range) in reducers.iter_mut().zip(&jobs) {
            r.enqueue(&buf, range.clone()).map_err(|e| format!("{name} enqueue {range:?} (round {round}): {e}"))?;
        }
        for (r, range) in reducers.iter().zip(&jobs) {
            let form = format!("enqueue {range:?} + result (round {round})");
            let got = r.result().map_err(|e| format!("{name} {form}: {e}"))?;
            check_reduction::<T, O>(&backend, &form, &data[range.clone()], got)?;
        }
    }
    reducers[1].enqueue(&buf, 3..3).map_err(|e| format!("{name} enqueue 3..3: {e}"))?;
    let (got, want) = (reducers[1].result().map_err(|e| e.to_string())?, identity::<T>(O::OP));
    if !got.same_bits(want) {
        return Err(format!("{name} enqueue 3..3 + result: expected the identity {want}, got {got}").into());
    }
    Ok(())
}

/// `reduce_range` called again and again with one shape, then another, then the first again,
/// with an `enqueue` among them and the buffer's contents replaced in place between two repeats
/// (on a GPU the `i32` sum's repeats are a CUDA graph, which must read the memory as it is now).
fn reducer_repeat<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let name = what::<T, O>("Reducer");
    let first = input::<T, O>(place.n, Pattern::Random);
    let second = input::<T, O>(place.n + 1, Pattern::Random)[1..].to_vec();
    let mut buf = backend.upload(&first).map_err(|e| format!("upload: {e}"))?;
    let other = backend.upload(&second).map_err(|e| format!("upload: {e}"))?;
    let mut reducer = Reducer::<T, O>::new(&backend);
    let [odd, ..] = ranges(place.n);
    let calls = [(0..place.n, 3), (odd.clone(), 2), (0..place.n, 2), (odd, 1)];
    for (data, contents) in [(&first, "first"), (&second, "second")] {
        for (range, times) in calls.iter().cloned() {
            for call in 0..times {
                let form = format!("reduce_range {range:?} call {call} ({contents} contents)");
                let got = reducer.reduce_range(&buf, range.clone()).map_err(|e| format!("{name} {form}: {e}"))?;
                check_reduction::<T, O>(&backend, &form, &data[range.clone()], got)?;
            }
        }
        let form = format!("enqueue 0..{} + result ({contents} contents)", place.n);
        reducer.enqueue(&buf, 0..place.n).map_err(|e| format!("{name} {form}: {e}"))?;
        let got = reducer.result().map_err(|e| format!("{name} {form}: {e}"))?;
        check_reduction::<T, O>(&backend, &form, data, got)?;
        backend.copy(&other, &mut buf).map_err(|e| format!("copy: {e}"))?;
    }
    Ok(())
}

/// Checks the first `data.len()` elements of `out` against the `kind` scan of `data`, and that
/// the elements after them still hold `guard`.
fn check_scan<T: Value, O: OpKind>(
    backend: &Backend,
    form: &str,
    kind: Kind,
    data: &[T],
    out: &DeviceBuffer<T>,
    guard: T,
) -> Result<(), Failed> {
    let n = data.len();
    let at = |e: String| -> Failed { format!("{} {form} {kind} n={n}: {e}", what::<T, O>("Scanner")).into() };
    let got = backend.download(out).map_err(|e| at(e.to_string()))?;
    let plan = find("lookback").and_then(|v| v.instance::<T>(O::OP)).map_err(|e| at(e.to_string()))?.plan;
    let depth = scan_depth(&plan, n.max(1));
    scan_cpu::check(O::OP, kind, data, &got[..n], depth).map_err(at)?;
    match got[n..].iter().position(|g| !g.same_bits(guard)) {
        Some(i) => Err(at(format!(
            "element {} past the scanned ones: expected {guard} (untouched), got {}",
            n + i,
            got[n + i]
        ))),
        None => Ok(()),
    }
}

/// An output of `len` elements, every one `guard`.
fn guarded<T: Value>(backend: &Backend, len: usize, guard: T) -> Result<DeviceBuffer<T>, Failed> {
    backend.upload(&vec![guard; len]).map_err(|e| format!("upload: {e}").into())
}

/// A value no scan of the inputs here produces by chance.
fn guard<T: Value>() -> T {
    T::from_bits_u64(0x5A5A_5A5A_5A5A_5A5A)
}

/// `inclusive` and `exclusive` on whole buffers of every size (an output one longer, whose
/// last element must stay as it was); float min/max also with a NaN.
fn scanner_whole<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let mut scanner = Scanner::<T, O>::new(&backend);
    for &n in place.whole {
        for (pattern, data) in whole_inputs::<T, O>(n) {
            let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
            for kind in Kind::ALL {
                let mut out = guarded(&backend, n + 1, guard::<T>())?;
                let form = format!("{kind} ({pattern})");
                let run = match kind {
                    Kind::Inclusive => scanner.inclusive(&buf, &mut out),
                    Kind::Exclusive => scanner.exclusive(&buf, &mut out),
                };
                run.map_err(|e| format!("{} {form} n={n}: {e}", what::<T, O>("Scanner")))?;
                check_scan::<T, O>(&backend, &form, kind, &data, &out, guard::<T>())?;
            }
        }
    }
    Ok(())
}

/// `inclusive_range` and `exclusive_range` on the sub-ranges of one buffer (an unaligned start
/// goes through the staging copy, an aligned one is scanned in place).
fn scanner_range<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let data = input::<T, O>(place.n, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
    let mut scanner = Scanner::<T, O>::new(&backend);
    for range in ranges(place.n) {
        for kind in Kind::ALL {
            let mut out = guarded(&backend, range.len() + 3, guard::<T>())?;
            let form = format!("{kind}_range {range:?} of a buffer of {}", place.n);
            let run = match kind {
                Kind::Inclusive => scanner.inclusive_range(&buf, range.clone(), &mut out),
                Kind::Exclusive => scanner.exclusive_range(&buf, range.clone(), &mut out),
            };
            run.map_err(|e| format!("{} {form}: {e}", what::<T, O>("Scanner")))?;
            check_scan::<T, O>(&backend, &form, kind, &data[range.clone()], &out, guard::<T>())?;
        }
    }
    Ok(())
}

/// `enqueue` of four scans back to back (both kinds, the whole buffer and an unaligned
/// sub-range, four outputs), then one `wait`, then every output checked.
fn scanner_enqueue<T: Value, O: OpKind>(place: Place) -> Result<(), Failed> {
    let backend = (place.backend)()?;
    let name = what::<T, O>("Scanner");
    let data = input::<T, O>(place.n, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| format!("upload: {e}"))?;
    let [odd, ..] = ranges(place.n);
    let jobs = [
        (Kind::Inclusive, 0..place.n),
        (Kind::Exclusive, odd.clone()),
        (Kind::Exclusive, 0..place.n),
        (Kind::Inclusive, odd),
    ];
    let mut outs =
        jobs.iter().map(|(_, r)| guarded(&backend, r.len() + 1, guard::<T>())).collect::<Result<Vec<_>, _>>()?;
    let mut scanner = Scanner::<T, O>::new(&backend);
    for ((kind, range), out) in jobs.iter().zip(outs.iter_mut()) {
        scanner
            .enqueue(*kind, &buf, range.clone(), out)
            .map_err(|e| format!("{name} enqueue {kind} {range:?}: {e}"))?;
    }
    scanner.wait().map_err(|e| format!("{name} wait: {e}"))?;
    for ((kind, range), out) in jobs.iter().zip(&outs) {
        let form = format!("enqueue {range:?} + wait");
        check_scan::<T, O>(&backend, &form, *kind, &data[range.clone()], out, guard::<T>())?;
    }
    Ok(())
}

/// One form's check at one place.
type Form = fn(Place) -> Result<(), Failed>;

/// The seven trials of one type × operator at one place.
fn pair_trials<T: Value, O: OpKind>(place: Place, ignored: bool) -> Vec<Trial> {
    let forms: [(&str, Form); 7] = [
        ("reducer::whole", reducer_whole::<T, O>),
        ("reducer::range", reducer_range::<T, O>),
        ("reducer::enqueue", reducer_enqueue::<T, O>),
        ("reducer::repeat", reducer_repeat::<T, O>),
        ("scanner::whole", scanner_whole::<T, O>),
        ("scanner::range", scanner_range::<T, O>),
        ("scanner::enqueue", scanner_enqueue::<T, O>),
    ];
    let pair = format!("{}_{}", T::ELEM.name(), O::OP.name());
    forms
        .into_iter()
        .map(|(form, f)| {
            Trial::test(format!("api::{}::{form}::{pair}", place.name), move || f(place))
                .with_kind(place.name)
                .with_ignored_flag(ignored)
        })
        .collect()
}

/// [`pair_trials`] for every type × operator.
macro_rules! every_pair {
    ($place:expr, $ignored:expr; $($t:ty),*) => {{
        let mut out = Vec::new();
        $(
            out.extend(pair_trials::<$t, Sum>($place, $ignored));
            out.extend(pair_trials::<$t, Min>($place, $ignored));
            out.extend(pair_trials::<$t, Max>($place, $ignored));
        )*
        out
    }};
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = every_pair!(EMULATOR, false; i32, u32, i64, u64, f32, f64);
    out.extend(every_pair!(GPU, !have_gpu; i32, u32, i64, u64, f32, f64));
    out
}
