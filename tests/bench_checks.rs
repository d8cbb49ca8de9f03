//! The benches' per-launch checks (issue #12) on the emulator: the check kernels of
//! `kernels::check` through `reduce_scan::verify::DeviceCheck` (a mismatch counted, a match not, a
//! float within its bound not counted and one outside or NaN counted, one counter per launch),
//! on real scan outputs, and the typed reductions' per-launch result slots.

use libtest_mimic::{Failed, Trial};
use reduce_scan::Backend;
use reduce_scan::input::{Input, Pattern, typed};
use reduce_scan::reduce::Reduction;
use reduce_scan::registry::{self, Elem, Op};
use reduce_scan::scan::{Kind, Scan, cpu, find};
use reduce_scan::types::Value;
use reduce_scan::verify::{DeviceCheck, Expected, batch_verdict};

/// Enough elements that every thread of the emulator's grid loops several times.
const N: usize = 20_011;

/// Counts of `outputs` checked as launches 0, 1, … of one batch.
fn counts<T: Value>(backend: &Backend, check: &mut DeviceCheck<T>, outputs: &[Vec<T>]) -> Result<Vec<u64>, Failed> {
    check.start_batch(backend, outputs.len())?;
    let bufs: Vec<_> = outputs.iter().map(|o| backend.upload(o)).collect::<Result<_, _>>()?;
    for (i, b) in bufs.iter().enumerate() {
        check.enqueue(backend, b, i)?;
    }
    Ok(check.counts(backend)?)
}

/// `want` with the elements at `at` replaced by `f(old)`.
fn corrupt<T: Copy>(want: &[T], at: &[usize], f: impl Fn(T) -> T) -> Vec<T> {
    let mut v = want.to_vec();
    for &i in at {
        v[i] = f(v[i]);
    }
    v
}

fn exact_words() -> Result<(), Failed> {
    let b = Backend::emulator();
    let want: Vec<i32> = Input::full_range(N, 7).data;
    let mut check = DeviceCheck::exact(&b, &want)?;
    let bad = corrupt(&want, &[0, 4096, N - 1], |x| x ^ 1);
    let got = counts(&b, &mut check, &[want.clone(), bad, want.clone()])?;
    assert_eq!(got, [0, 3, 0]);
    assert!(batch_verdict(&got, N).unwrap_err().starts_with("launch 1 of 3: 3 of 20011 elements"));
    // A second batch starts from zeroed counters.
    assert_eq!(counts(&b, &mut check, &[want])?, [0]);

    // 64-bit words compare bits: −0.0 is not +0.0, and a NaN with the same bits matches.
    let mut want: Vec<f64> = typed::<f64>(N, 3, Pattern::Random);
    want[17] = f64::NAN;
    let mut check = DeviceCheck::exact(&b, &want)?;
    let signed_zero = corrupt(&want, &[5, 6], |_| -0.0);
    let mut zeros = want.clone();
    zeros[5] = 0.0;
    zeros[6] = 0.0;
    let mut c2 = DeviceCheck::exact(&b, &zeros)?;
    assert_eq!(counts(&b, &mut check, &[want.clone()])?, [0]);
    assert_eq!(counts(&b, &mut c2, &[signed_zero, zeros.clone()])?, [2, 0]);
    Ok(())
}

/// `got` of `T` at `exact + offset·bound` for a few elements: within (offset ≤ 1) or not.
fn float_bound<T: Value>() -> Result<(), Failed> {
    let b = Backend::emulator();
    let exact: Vec<f64> = (0..N).map(|i| (i as f64) * 0.5 - 1000.0).collect();
    let bound: Vec<f64> = (0..N).map(|i| 0.25 + (i % 7) as f64 * 0.125).collect();
    let mut check = DeviceCheck::<T>::within(&b, &exact, &bound)?;
    let on_target: Vec<T> = exact.iter().map(|&e| T::from_f64(e)).collect();
    let at = |i: usize, k: f64| T::from_f64(exact[i] + k * bound[i]);
    let mut edge = on_target.clone();
    edge[10] = at(10, 1.0); // exactly on the bound: inside
    edge[11] = at(11, -1.0);
    let mut outside = on_target.clone();
    outside[12] = at(12, 1.5);
    outside[N - 3] = at(N - 3, -2.0);
    outside[100] = T::from_f64(f64::NAN);
    let got = counts(&b, &mut check, &[on_target, edge, outside])?;
    if got != [0, 0, 3] {
        return Err(format!("{}: counts {got:?}, expected [0, 0, 3]", T::ELEM.name()).into());
    }
    assert!(DeviceCheck::<i64>::within(&b, &exact, &bound).is_err());
    Ok(())
}

/// Real scans, every launch checked on the device: the i32 look-back and the typed f32 sum
/// (bounded) and u64 max (exact).
fn scans_checked_per_launch() -> Result<(), Failed> {
    let b = Backend::emulator();
    let data = Input::full_range(N, 11).data;
    let input = b.upload(&data)?;
    let mut out = b.alloc::<i32>(N)?;
    let mut check = DeviceCheck::exact(&b, &cpu::inclusive_scan(&data))?;
    let mut s = Scan::new(&b, reduce_scan::scan::find("lookback")?, Kind::Inclusive, &input, &mut out, N)?;
    check.start_batch(&b, 2)?;
    for i in 0..2 {
        s.launch()?;
        check.enqueue(&b, s.output(), i)?;
    }
    assert_eq!(check.counts(&b)?, [0, 0]);
    typed_scan::<f32>(&b, Op::Sum)?;
    typed_scan::<u64>(&b, Op::Max)
}

fn typed_scan<T: Value>(b: &Backend, op: Op) -> Result<(), Failed> {
    let data = typed::<T>(N, 5, Pattern::Random);
    let input = b.upload(&data)?;
    let mut out = b.alloc::<T>(N)?;
    let mut s = Scan::of(b, find("lookback")?.instance::<T>(op)?, Kind::Inclusive, &input, &mut out, N)?;
    let mut check = DeviceCheck::for_scan(b, op, Kind::Inclusive, &data, s.depth())?;
    check.start_batch(b, 3)?;
    for i in 0..3 {
        s.launch()?;
        check.enqueue(b, s.output(), i)?;
    }
    batch_verdict(&check.counts(b)?, N).map_err(|e| format!("{} {}: {e}", T::ELEM.name(), op.name()).into())
}

/// Every generic variant's row of `T` with `op`: three launches into three slots, each answer
/// passes; a slot no launch wrote fails and is named.
fn slots<T: Value>(op: Op) -> Result<(), Failed> {
    let b = Backend::emulator();
    let data = typed::<T>(N, 9, Pattern::Random);
    let input = b.upload(&data)?;
    for v in registry::all().filter(|v| v.is_generic()) {
        let tv = v.instance::<T>(op)?;
        let mut r = Reduction::of(&b, tv, &input, N, 256)?;
        let expected = Expected::of(op, &data, r.depth());
        let mut slots = r.alloc_slots(3)?;
        for i in 0..3 {
            r.launch_into(&mut slots, i)?;
        }
        expected.first_wrong(&r.slot_answers(&slots, 3)?).map_err(|e| format!("{}: {e}", tv.id()))?;
        let mut fresh = r.alloc_slots(3)?;
        r.launch_into(&mut fresh, 0)?;
        r.launch_into(&mut fresh, 1)?;
        let e = expected.first_wrong(&r.slot_answers(&fresh, 3)?).unwrap_err();
        assert!(e.starts_with("launch 2 of 3:"), "{}: {e}", tv.id());
        assert!(r.launch_into(&mut fresh, 3).is_err());
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("bench_checks::exact_words_counted", exact_words),
        Trial::test("bench_checks::float_bound_f32", float_bound::<f32>),
        Trial::test("bench_checks::float_bound_f64", float_bound::<f64>),
        Trial::test("bench_checks::scans_checked_per_launch", scans_checked_per_launch),
        Trial::test("bench_checks::typed_slots_f32_sum", || slots::<f32>(Op::Sum)),
        Trial::test("bench_checks::typed_slots_u32_sum", || slots::<u32>(Op::Sum)),
        Trial::test("bench_checks::typed_slots_i64_min", || slots::<i64>(Op::Min)),
        Trial::test("bench_checks::typed_slots_f64_max", || slots::<f64>(Op::Max)),
        Trial::test("bench_checks::elem_of_reference_bytes", || {
            assert_eq!(reduce_scan::verify::reference_bytes(Elem::U64, Op::Sum, 2), 16);
            Ok(())
        }),
    ]
}
