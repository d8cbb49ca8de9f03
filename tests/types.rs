//! Element types and operators: every generic variant × type × operator on the emulator at
//! sizes that hurt and several block sizes; float sums against the stated error bound on
//! cancellation-heavy input; NaN and ±0.0 for min and max; the same on the GPU (ignored
//! where there is none). Failures name variant, type, op, n, block, expected and actual.

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::Backend;
use reduce_scan::cpu;
use reduce_scan::input::{Pattern, typed};
use reduce_scan::reduce::Reduction;
use reduce_scan::registry::{self, Elem, Op, Variant};
use reduce_scan::types::Value;

/// A row of a generic variant: the variant, the element type, the operator.
type Row = (&'static Variant, Elem, Op);

/// Sizes that hurt: 1, around a warp, around 1024, and a large odd one.
const SIZES: &[usize] = &[1, 31, 32, 33, 1023, 1024, 1025, (1 << 16) + 7];
/// Blocks: the smallest, a middle one, the largest.
const BLOCKS: &[u32] = &[32, 256, 1024];
const SEED: u64 = 0x7E57;

/// Runs `tv`'s row of `T` on `data` with `block`; the failure names everything.
fn run_one<T: Value>(backend: &Backend, tv: Row, data: &[T], block: u32, what: &str) -> Result<(), Failed> {
    let (v, elem, op) = tv;
    let n = data.len();
    let at = || format!("variant {} type {} op {} n={n} block={block} ({what})", v.name, elem.name(), op.name());
    let buf = backend.upload(data).map_err(|e| format!("{}: upload: {e}", at()))?;
    let inst = v.instance::<T>(op).map_err(|e| format!("{}: {e}", at()))?;
    let mut r = Reduction::of(backend, inst, &buf, n, block).map_err(|e| format!("{}: {e}", at()))?;
    r.launch().map_err(|e| format!("{}: {e}", at()))?;
    let got = r.result().map_err(|e| format!("{}: {e}", at()))?;
    cpu::check(op, data, got, r.depth()).map_err(|e| format!("{}: {e}", at()).into())
}

/// Every size in `sizes`, random input, plus extremes at the smaller ones.
fn matrix<T: Value>(backend: &Backend, tv: Row, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    let for_sum = tv.2 == Op::Sum;
    for &n in sizes {
        run_one(backend, tv, &typed::<T>(n, SEED ^ n as u64, Pattern::Random), block, "random")?;
        if n <= 1025 {
            run_one(backend, tv, &typed::<T>(n, SEED ^ n as u64, Pattern::Extremes { for_sum }), block, "extremes")?;
            run_one(backend, tv, &typed::<T>(n, SEED ^ n as u64, Pattern::AllEqual), block, "all equal")?;
        }
    }
    run_one(backend, tv, &typed::<T>(4099, SEED, Pattern::Cancelling), block, "cancelling")
}

/// [`matrix`] for `tv`'s element type.
fn matrix_for(backend: &Backend, tv: Row, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    reduce_scan::with_elem!(tv.1, T => matrix::<T>(backend, tv, block, sizes))
}

/// NaN at the first, a middle and the last position, and ±0.0 only: min and max give the
/// canonical NaN and −0.0/+0.0, bit for bit, on every generic variant.
fn nan_and_zeros<T: Value>(backend: &Backend, tv: Row) -> Result<(), Failed> {
    let n = 2053;
    for at in [0, n / 2, n - 1] {
        let mut data = typed::<T>(n, SEED ^ at as u64, Pattern::Random);
        data[at] = T::from_f64(f64::NAN);
        run_one(backend, tv, &data, 256, &format!("NaN at {at}"))?;
        let got = {
            let buf = backend.upload(&data).map_err(|e| e.to_string())?;
            let inst = tv.0.instance::<T>(tv.2).map_err(|e| e.to_string())?;
            let mut r = Reduction::of(backend, inst, &buf, n, 256).map_err(|e| e.to_string())?;
            r.launch().map_err(|e| e.to_string())?;
            r.result().map_err(|e| e.to_string())?
        };
        if !got.is_nan_host() {
            return Err(format!(
                "variant {} type {} op {}: NaN at {at} did not propagate, got {got}",
                tv.0.name,
                tv.1.name(),
                tv.2.name()
            )
            .into());
        }
    }
    let zeros: Vec<T> = (0..n).map(|i| T::from_f64(if i % 3 == 0 { -0.0 } else { 0.0 })).collect();
    run_one(backend, tv, &zeros, 256, "±0.0")?;
    let negative_zeros: Vec<T> = vec![T::from_f64(-0.0); 100];
    run_one(backend, tv, &negative_zeros, 64, "−0.0 only")
}

/// A float sum at `n` on cancellation-heavy input, against [`cpu::float_sum_bound`].
fn cancelling_sum<T: Value>(backend: &Backend, tv: Row, n: usize) -> Result<(), Failed> {
    run_one(backend, tv, &typed::<T>(n, SEED ^ n as u64, Pattern::Cancelling), 256, "cancelling")
}

fn float_sum_trial(backend: fn() -> Result<Backend, Failed>, tv: Row, n: usize) -> Result<(), Failed> {
    let b = backend()?;
    match tv.1 {
        Elem::F32 => cancelling_sum::<f32>(&b, tv, n),
        Elem::F64 => cancelling_sum::<f64>(&b, tv, n),
        Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64 => Ok(()),
    }
}

fn emulator() -> Result<Backend, Failed> {
    Ok(Backend::emulator())
}

fn gpu() -> Result<Backend, Failed> {
    Backend::gpu().map_err(|e| e.to_string().into())
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let rows = registry::instances().filter(|(v, _, _)| v.is_generic());
    let mut out: Vec<Trial> = rows.flat_map(|tv| variant_trials(tv, have_gpu)).collect();
    out.extend(cub_trials(have_gpu));
    out.push(
        Trial::test("types::emulator::every_instantiation_reports_a_fault", every_instantiation_faults)
            .with_kind("emulator"),
    );
    out.push(Trial::test("types::cli_type_and_combine", || {
        let argv =
            ["reduce", "--backend", "emulator", "--n", "5003", "--repeat", "1", "--type", "f64", "--combine", "min"];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = reduce_scan_cli::cli::run_with(argv.iter().chain(&["--format", "csv"]), &mut out, &mut err);
        let out = String::from_utf8_lossy(&out);
        let rows: Vec<&str> = out.lines().filter(|l| l.contains(",f64,min,")).collect();
        if code != 0 || rows.len() != 4 || !rows.iter().all(|r| r.ends_with(",PASS")) {
            return Err(
                format!("exit {code}, want 0 and four PASS rows (one per generic variant) of f64 min:\n{out}").into()
            );
        }
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = reduce_scan_cli::cli::run_with(argv.iter().chain(&["--format", "json"]), &mut out, &mut err);
        let out = String::from_utf8_lossy(&out);
        if code != 0 || !out.contains("\"type\":\"f64\"") || !out.contains("\"combine\":\"min\"") {
            return Err(format!("exit {code}; json without type/combine:\n{out}").into());
        }
        Ok(())
    }));
    out.push(Trial::test("types::bound_at_2e24_on_the_cpu", || {
        // The stated bound at 2^24 for the deepest typed plan (atomic finish), against a
        // sequential f32 sum the bound does not cover (depth n) and a pairwise one it does.
        let data = typed::<f32>(1 << 24, SEED, Pattern::Cancelling);
        let (exact, abs) = cpu::exact_sum(&data);
        let pairwise = reduce_scan::types::combine_pairwise(Op::Sum, data.clone());
        let bound = cpu::float_sum_bound(f32::UNIT_ROUNDOFF, 25, abs);
        let err = (pairwise as f64 - exact).abs();
        if err > bound {
            return Err(format!("pairwise f32 sum at 2^24: error {err:e} > bound {bound:e}").into());
        }
        cpu::check(Op::Sum, &data, pairwise, 25).map_err(|e| e.into())
    }));
    out
}

/// The trials of one typed variant: every block on the emulator and the GPU, NaN and ±0.0 for
/// float min/max, the cancelling float sum.
fn variant_trials(tv: Row, have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    let (elem, op) = (tv.1, tv.2);
    let id = format!("{}::{}_{}", tv.0.name, elem.name(), op.name());
    for &block in BLOCKS {
        out.push(
            Trial::test(format!("types::emulator::{id}::block_{block}"), move || {
                matrix_for(&Backend::emulator(), tv, block, SIZES)
            })
            .with_kind("emulator"),
        );
        out.push(
            Trial::test(format!("types::gpu::{id}::block_{block}"), move || {
                let mut sizes = SIZES.to_vec();
                sizes.push(1 << 24);
                matrix_for(&gpu()?, tv, block, &sizes)
            })
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
        );
    }
    if elem.is_float() && op != Op::Sum {
        let run = move |b: &Backend| match elem {
            Elem::F32 => nan_and_zeros::<f32>(b, tv),
            _ => nan_and_zeros::<f64>(b, tv),
        };
        out.push(Trial::test(format!("types::emulator::{id}::nan_and_zeros"), move || run(&Backend::emulator())));
        out.push(
            Trial::test(format!("types::gpu::{id}::nan_and_zeros"), move || run(&gpu()?))
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
        );
    }
    if elem.is_float() && op == Op::Sum {
        // 2^24 is the size the bound is stated for; the emulator runs 2^20 + 3 (2^24 takes
        // minutes there), the GPU 2^24.
        out.push(Trial::test(format!("types::emulator::{id}::cancelling_2e20"), move || {
            float_sum_trial(emulator, tv, (1 << 20) + 3)
        }));
        out.push(
            Trial::test(format!("types::gpu::{id}::cancelling_2e24"), move || float_sum_trial(gpu, tv, 1 << 24))
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
        );
    }
    out
}

/// CUB's `DeviceReduce::Sum`/`Min`/`Max` for every type × operator at 2^20 + 7 through
/// `reduce_scan_cli::cub::time_typed` (what `--compare-cub` times): every call's result must pass the CPU
/// check. Ignored without a GPU or nvcc (the line printed says which).
fn cub_trials(have_gpu: bool) -> Vec<Trial> {
    let unavailable = if have_gpu { reduce_scan_cli::cub::available().err().map(|e| e.to_string()) } else { None };
    if let Some(why) = &unavailable {
        println!("typed CUB tests: ignored ({why})");
    }
    let ignored = !have_gpu || unavailable.is_some();
    let mut out = Vec::new();
    for elem in [Elem::I32, Elem::U32, Elem::I64, Elem::U64, Elem::F32, Elem::F64] {
        for op in [Op::Sum, Op::Min, Op::Max] {
            let name = format!("types::cub::{}_{}", elem.name(), op.name());
            let run = move || reduce_scan::with_elem!(elem, T => cub_check::<T>(op));
            out.push(Trial::test(name, run).with_kind("gpu").with_ignored_flag(ignored));
        }
    }
    out
}

fn cub_check<T: Value>(op: Op) -> Result<(), Failed> {
    let n = (1 << 20) + 7;
    let data = typed::<T>(n, SEED ^ n as u64, Pattern::Random);
    let at = format!("CUB type {} op {} n={n}", T::ELEM.name(), op.name());
    let (timing, results) = reduce_scan_cli::cub::time_typed(op, &data, 3).map_err(|e| format!("{at}: {e}"))?;
    if timing.times_us.len() != 3 || results.is_empty() {
        return Err(format!("{at}: {} times, {} results", timing.times_us.len(), results.len()).into());
    }
    for got in results {
        cpu::check(op, &data, got, n as u64).map_err(|e| format!("{at}: {e}"))?;
    }
    Ok(())
}

/// The emulator's fault detection covers every instantiation of every generic kernel: each row
/// of a generic reduction launched with a block of 48 threads (its second warp half empty, so
/// its warp step meets absent lanes) and each row of a generic scan with 48 threads (it traps on
/// a block it was not built for) must fail with an emulator report that names the kernel, never
/// return a value.
fn every_instantiation_faults() -> Result<(), Failed> {
    let backend = Backend::emulator();
    for (v, elem, op) in registry::instances().filter(|(v, _, _)| v.is_generic()) {
        reduce_scan::with_elem!(elem, T => reduction_faults::<T>(&backend, v, op))?;
    }
    for (v, elem, op) in reduce_scan::scan::instances().filter(|(v, _, _)| v.is_generic()) {
        reduce_scan::with_elem!(elem, T => scan_faults::<T>(&backend, v, op))?;
    }
    Ok(())
}

/// Buffers larger than any kernel reads or writes for n = 100 on one block, as `T`: the input
/// (100 elements), then room for partials, result words, value slots.
struct Room<T: reduce_scan::backend::Element> {
    bytes: reduce_scan::DeviceBuffer<u64>,
    ticket: reduce_scan::DeviceBuffer<u32>,
    status: reduce_scan::DeviceBuffer<u64>,
    at: std::marker::PhantomData<T>,
}

const FAULT_N: u32 = 100;

impl<T: Value> Room<T> {
    fn new(backend: &Backend) -> Result<Self, Failed> {
        let bytes = backend.alloc::<u64>(4 * FAULT_N as usize).map_err(|e| e.to_string())?;
        let ticket = backend.alloc::<u32>(1).map_err(|e| e.to_string())?;
        let status = backend.alloc::<u64>(1).map_err(|e| e.to_string())?;
        Ok(Self { bytes, ticket, status, at: std::marker::PhantomData })
    }
    fn input(&self) -> *const T {
        self.bytes.as_ptr().cast()
    }
    fn out(&mut self) -> *mut T {
        self.bytes.as_mut_ptr().cast::<u8>().wrapping_add(8 * FAULT_N as usize).cast()
    }
}

fn block48() -> reduce_scan::backend::LaunchConfig {
    reduce_scan::backend::LaunchConfig { grid: 1, block: 48, shared_bytes: 0 }
}

/// An emulator fault that names `name`, and nothing else, passes.
fn expect_fault(name: &str, r: reduce_scan::Result<()>) -> Result<(), Failed> {
    match r {
        Err(reduce_scan::Error::Emulator(e)) if e.to_string().contains(name) => Ok(()),
        other => Err(format!("{name} at block 48: want an emulator fault naming it, got {other:?}").into()),
    }
}

fn reduction_faults<T: Value>(backend: &Backend, v: &'static Variant, op: Op) -> Result<(), Failed> {
    use reduce_scan::reduce::plan::{Finish, KernelSel};
    let inst = v.instance::<T>(op).map_err(|e| e.to_string())?;
    let mut room = Room::<T>::new(backend)?;
    let (input, out, n, cfg) = (room.input(), room.out(), FAULT_N, block48());
    // SAFETY: every buffer is larger than the kernel reads or writes for n = 100 on one block
    // (input 100 elements of at most 8 bytes, partials and result after it); the emulator stops
    // the launch at its first fault.
    let r = unsafe {
        match inst.row.finish {
            Finish::HostAdds(KernelSel::One(k)) => backend.launch(&k, cfg, (input, out, n)),
            Finish::AtomicAccumulate(k) => backend.launch(&k, cfg, (input, out, n, 0)),
            Finish::LastBlock(k) => {
                backend.launch(&k, cfg, (input, out, room.ticket.as_mut_ptr(), out.wrapping_add(8), n))
            }
            other => return Err(format!("{}: no fault test for its finish {other:?}", inst.id()).into()),
        }
    };
    expect_fault(inst.symbols()[0], r)
}

fn scan_faults<T: Value>(backend: &Backend, v: &'static reduce_scan::scan::ScanVariant, op: Op) -> Result<(), Failed> {
    use reduce_scan::scan::ScanPlan;
    let inst = v.instance::<T>(op).map_err(|e| e.to_string())?;
    let mut room = Room::<T>::new(backend)?;
    let (input, out, n, cfg) = (room.input(), room.out(), FAULT_N, block48());
    let status = room.status.as_mut_ptr();
    // SAFETY: as above (status one word, value slots after the output); the kernel traps at its
    // first instruction on a block it was not compiled for.
    let r = unsafe {
        match inst.plan {
            ScanPlan::DecoupledLookback { kernel, .. } | ScanPlan::WarpSpecialized { kernel, .. } => {
                backend.launch(&kernel, cfg, (input, out, status, n, 1, 0))
            }
            ScanPlan::DecoupledLookbackValues { kernel, .. } => {
                backend.launch(&kernel, cfg, (input, out, status, out.wrapping_add(FAULT_N as usize), n, 1, 0))
            }
            other => return Err(format!("{}: no fault test for its plan {other:?}", inst.id()).into()),
        }
    };
    expect_fault(inst.plan.symbols()[0], r)
}
