//! The library objects as a caller uses them: `Reducer` and `Scanner` reused, launches queued
//! back to back with no host sync, several objects interleaved, 10,000 launches each checked,
//! a refused launch that must not corrupt the next answer, other streams and devices, and (on
//! a GPU) lengths past 2^31 where 32-bit index arithmetic breaks.

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::Backend;
use reduce_scan::emu::Emulator;
use reduce_scan::input::Input;
use reduce_scan::reduce::Reduction;
use reduce_scan::registry;
use reduce_scan::scan::Kind;
use reduce_scan::{Reducer, Scanner, Sum};

fn wrapping_sum(xs: &[i32]) -> i32 {
    xs.iter().fold(0i32, |a, &x| a.wrapping_add(x))
}

fn fail(what: &str, e: impl std::fmt::Display) -> Failed {
    format!("{what}: {e}").into()
}

/// A refused launch must leave the accumulating epoch where it was: the next launch then uses
/// the word the last good launch cleared (advancing it anyway sums into a dirty word).
fn refused_launch_keeps_the_epoch() -> Result<(), Failed> {
    // Launch 0 is good, launch 1 is refused, launch 2 must be right.
    let backend = Backend::with_emulator(Emulator::new().refusing_launch(1));
    let data = Input::full_range(3000, 0xE90C).data;
    let buf = backend.upload(&data).map_err(|e| fail("upload", e))?;
    let v = registry::find("atomic_accumulate").map_err(|e| fail("find", e))?;
    let mut r = Reduction::new(&backend, v, &buf, data.len(), 256).map_err(|e| fail("new", e))?;
    let want = wrapping_sum(&data);
    r.launch().map_err(|e| fail("launch 0", e))?;
    let got = r.result().map_err(|e| fail("result 0", e))?;
    if got != want {
        return Err(format!("launch 0: expected {want}, got {got}").into());
    }
    match r.launch() {
        Err(e) if e.to_string().contains("refused by fault injection") => {}
        other => return Err(format!("launch 1 should have been refused, got {other:?}").into()),
    }
    r.launch().map_err(|e| fail("launch 2", e))?;
    let got = r.result().map_err(|e| fail("result 2", e))?;
    if got != want {
        return Err(format!("launch 2 after a refused launch: expected {want}, got {got}").into());
    }
    Ok(())
}

/// Several reducers and scanners interleaved, launches queued with no sync in between.
fn interleaved_objects(backend: &Backend) -> Result<(), Failed> {
    let inputs: Vec<Vec<i32>> = (0..3).map(|k| Input::full_range(5000 + 777 * k, 0x1A7E + k as u64).data).collect();
    let bufs =
        inputs.iter().map(|d| backend.upload(d)).collect::<Result<Vec<_>, _>>().map_err(|e| fail("upload", e))?;
    let mut reducers: Vec<Reducer<'_>> = (0..3).map(|_| Reducer::new(backend)).collect();
    for round in 0..4 {
        for (k, r) in reducers.iter_mut().enumerate() {
            r.enqueue(&bufs[k], 0..bufs[k].len()).map_err(|e| fail(&format!("round {round}, reducer {k}"), e))?;
        }
        for (k, r) in reducers.iter().enumerate() {
            let (want, got) = (wrapping_sum(&inputs[k]), r.result().map_err(|e| fail("result", e))?);
            if got != want {
                return Err(format!("round {round}, reducer {k}: expected {want}, got {got}").into());
            }
        }
    }
    let mut outs = inputs
        .iter()
        .map(|d| backend.alloc::<i32>(d.len()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail("alloc", e))?;
    let mut scanners: Vec<Scanner<'_>> = (0..3).map(|_| Scanner::new(backend)).collect();
    for (k, (s, out)) in scanners.iter_mut().zip(outs.iter_mut()).enumerate() {
        s.enqueue(Kind::Inclusive, &bufs[k], 0..bufs[k].len(), out).map_err(|e| fail(&format!("scanner {k}"), e))?;
    }
    for (k, out) in outs.iter().enumerate() {
        let got = backend.download(out).map_err(|e| fail("download", e))?;
        if got != reduce_scan::scan::cpu::inclusive_scan(&inputs[k]) {
            return Err(format!("scanner {k}: the scan differs from the CPU's").into());
        }
    }
    Ok(())
}

/// `count` launches of one `Reduction`, queued back to back, every result read and checked.
fn many_launches(backend: &Backend, count: usize) -> Result<(), Failed> {
    let data = Input::full_range(1000, 0x10_000).data;
    let want = wrapping_sum(&data);
    let buf = backend.upload(&data).map_err(|e| fail("upload", e))?;
    let v = registry::find("atomic_accumulate").map_err(|e| fail("find", e))?;
    let mut r = Reduction::new(backend, v, &buf, data.len(), 32).map_err(|e| fail("new", e))?;
    for i in 0..count {
        r.launch().map_err(|e| fail(&format!("launch {i}"), e))?;
        let got = r.result().map_err(|e| fail(&format!("result {i}"), e))?;
        if got != want {
            return Err(format!("launch {i} of {count}: expected {want}, got {got}").into());
        }
    }
    // Back to back with no sync at all, then one read.
    for i in 0..100 {
        r.launch().map_err(|e| fail(&format!("queued launch {i}"), e))?;
    }
    let got = r.result().map_err(|e| fail("result after 100 queued launches", e))?;
    if got != want { Err(format!("after 100 queued launches: expected {want}, got {got}").into()) } else { Ok(()) }
}

/// A stream of its own, and a device that does not exist.
fn streams_and_devices() -> Result<(), Failed> {
    let base = Backend::gpu().map_err(|e| fail("gpu", e))?;
    let own = base.with_new_stream().map_err(|e| fail("new stream", e))?;
    interleaved_objects(&own)?;
    let dev0 = Backend::gpu_device(0).map_err(|e| fail("device 0", e))?;
    interleaved_objects(&dev0)?;
    match Backend::gpu_device(4096) {
        Err(e) if e.to_string().contains("there is no device 4096") => Ok(()),
        other => Err(format!("device 4096 should not exist: {:?}", other.map(|b| b.info().name.clone())).into()),
    }
}

/// `Scanner<T, Sum>` and `Scanner<T, Max>` on this GPU, for every element type, at each size
/// where the per-device table (`host/src/scan/plan_by_device.csv`) changes variant for that type,
/// and just below it, inclusive and exclusive, whole buffers and an unaligned sub-range (staged):
/// every element checked (`scan::cpu::check`: integers and max exact, float sums within the
/// bound), and the variant the plan picks named in the failure.
fn scanner_on_the_device_table() -> Result<(), Failed> {
    use reduce_scan::Max;
    use reduce_scan::scan::by_device::table;
    use reduce_scan::types::Elem;
    let backend = Backend::gpu().map_err(|e| fail("gpu", e))?;
    let info = backend.info().clone();
    let rows = table().map_err(|e| fail("table", e))?;
    for elem in Elem::ALL {
        let mut sizes: Vec<usize> = vec![1 << 20];
        let here = |r: &&reduce_scan::scan::by_device::DeviceRow| {
            r.size_from > 1 && info.name.contains(r.device.as_str()) && r.elem.is_none_or(|e| e == elem)
        };
        for r in rows.iter().filter(here) {
            sizes.extend([r.size_from - 1, r.size_from + 7]);
        }
        reduce_scan::with_elem!(elem, T => {
            scanner_at::<T, Sum>(&backend, &sizes)?;
            scanner_at::<T, Max>(&backend, &sizes)?;
        });
    }
    Ok(())
}

/// `Scanner<T, O>` at every size of `sizes` (see [`scanner_on_the_device_table`]).
fn scanner_at<T: reduce_scan::types::Value, O: reduce_scan::types::OpKind>(
    backend: &Backend,
    sizes: &[usize],
) -> Result<(), Failed> {
    use reduce_scan::input::{Pattern, typed};
    use reduce_scan::scan::{choose_on, cpu, scan_depth};
    let info = backend.info().clone();
    let most = *sizes.iter().max().unwrap_or(&1) + 1;
    if (most * 3 * T::ELEM.size()) as u64 + (64 << 20) > info.memory_bytes {
        return Err(format!("{most} elements need more memory than the GPU's {} bytes", info.memory_bytes).into());
    }
    let data = typed::<T>(most, 0x5CA7, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| fail("upload", e))?;
    let mut out = backend.alloc::<T>(most).map_err(|e| fail("alloc", e))?;
    let mut scanner = Scanner::<T, O>::new(backend);
    for &n in sizes {
        let inst = choose_on::<T>(O::OP, &info, n).map_err(|e| fail("plan", e))?;
        for (kind, start) in [(Kind::Inclusive, 0), (Kind::Exclusive, 0), (Kind::Inclusive, 1)] {
            let at = format!("Scanner {kind} of {}..{} on {} ({})", start, start + n, info.name, inst.id());
            scanner.enqueue(kind, &buf, start..start + n, &mut out).map_err(|e| fail(&at, e))?;
            scanner.wait().map_err(|e| fail(&at, e))?;
            let got = backend.download_prefix(&out, n).map_err(|e| fail(&at, e))?;
            cpu::check(O::OP, kind, &data[start..start + n], &got, scan_depth(&inst.plan, n))
                .map_err(|e| fail(&at, e))?;
        }
    }
    Ok(())
}

/// The full reduction and the look-back scan on `n` elements (n past 2^31): values `i % 7 - 3`
/// so that the CPU references are quick, and every element of the scan compared.
fn huge(n: usize) -> Result<(), Failed> {
    let backend = Backend::gpu().map_err(|e| fail("gpu", e))?;
    let need = n as u64 * 8 + (64 << 20);
    if need > backend.info().memory_bytes {
        return Err(format!("n = {n} needs {need} bytes; the GPU has {}", backend.info().memory_bytes).into());
    }
    let data: Vec<i32> = (0..n).map(|i| (i % 7) as i32 - 3).collect();
    let buf = backend.upload(&data).map_err(|e| fail("upload", e))?;
    let want = wrapping_sum(&data);
    let got = Reducer::<i32, Sum>::new(&backend).reduce(&buf).map_err(|e| fail(&format!("sum n={n}"), e))?;
    if got != want {
        return Err(format!("sum of n = {n}: expected {want}, got {got}").into());
    }
    let mut out = backend.alloc::<i32>(n).map_err(|e| fail("alloc", e))?;
    drop(data);
    Scanner::<i32, Sum>::new(&backend).inclusive(&buf, &mut out).map_err(|e| fail(&format!("scan n={n}"), e))?;
    let got = backend.download(&out).map_err(|e| fail("download", e))?;
    let mut acc = 0i32;
    for (i, &g) in got.iter().enumerate() {
        acc = acc.wrapping_add((i % 7) as i32 - 3);
        if g != acc {
            return Err(format!("inclusive scan of n = {n}: index {i}: expected {acc}, got {g}").into());
        }
    }
    Ok(())
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let gpu = |name: &str, f: fn() -> Result<(), Failed>| {
        Trial::test(format!("library::{name}::gpu"), f).with_kind("gpu").with_ignored_flag(!have_gpu)
    };
    vec![
        Trial::test("library::refused_launch_keeps_the_epoch::emulator", refused_launch_keeps_the_epoch)
            .with_kind("emulator"),
        Trial::test("library::interleaved_objects::emulator", || interleaved_objects(&Backend::emulator()))
            .with_kind("emulator"),
        Trial::test("library::ten_thousand_launches::emulator", || many_launches(&Backend::emulator(), 10_000))
            .with_kind("emulator"),
        gpu("interleaved_objects", || interleaved_objects(&Backend::gpu().map_err(|e| fail("gpu", e))?)),
        gpu("ten_thousand_launches", || many_launches(&Backend::gpu().map_err(|e| fail("gpu", e))?, 10_000)),
        gpu("streams_and_devices", streams_and_devices),
        gpu("scanner_on_every_row_of_the_device_table", scanner_on_the_device_table),
        gpu("n_2_31_plus_5", || huge((1 << 31) + 5)),
        gpu("n_2_32_minus_1", || huge(u32::MAX as usize)),
    ]
}
