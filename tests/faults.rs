//! The emulator's fault reports, on the deliberately broken kernels of `kernels::broken`.
//! Each report must name the kernel, the block and what went wrong, and come quickly.

use std::time::{Duration, Instant};

use host::backend::{Backend, LaunchConfig};
use host::emu::{EmuErrorKind, Emulator};
use host::{Error, kernel_ref};
use libtest_mimic::{Failed, Trial};

/// Launches a one-pointer broken kernel on 2 blocks of 64 threads; returns its error.
fn launch_broken(kernel: host::backend::Kernel<(*mut i32,)>, budget: Duration) -> Result<(Error, Duration), Failed> {
    let backend = Backend::with_emulator(Emulator::new().with_budget(budget));
    let mut out = backend.alloc::<i32>(128).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let cfg = LaunchConfig { grid: 2, block: 64, shared_bytes: 0 };
    // SAFETY: `out` holds one element per thread of the grid, which is all these kernels touch.
    let r = unsafe { backend.launch(&kernel, cfg, (out.as_mut_ptr(),)) };
    let took = start.elapsed();
    match r {
        Ok(()) => Err(format!("kernel `{}` ran without a reported fault", kernel.name).into()),
        Err(e) => Ok((e, took)),
    }
}

fn expect(
    kernel: host::backend::Kernel<(*mut i32,)>,
    kind: EmuErrorKind,
    must_mention: &'static [&'static str],
) -> Result<(), Failed> {
    let (err, took) = launch_broken(kernel, Duration::from_secs(10))?;
    let Error::Emulator(e) = &err else { return Err(format!("expected an emulator error, got: {err}").into()) };
    if e.kind != kind {
        return Err(format!("expected {kind:?}, got {:?}: {e}", e.kind).into());
    }
    let text = e.to_string();
    for m in must_mention.iter().chain(&[kernel.name, "block ("]) {
        if !text.contains(m) {
            return Err(format!("the report does not mention `{m}`: {text}").into());
        }
    }
    if took > Duration::from_secs(1) {
        return Err(format!("the fault took {took:?} to report (must be under 1 s): {text}").into());
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::divergent_barrier", || {
            expect(
                kernel_ref!(kernels::broken::divergent_barrier(o)),
                EmuErrorKind::BarrierDivergence,
                &["broken.rs:", "reached by 16 of 64 threads", "threads 16-63 exited"],
            )
        }),
        Trial::test("faults::early_return_barrier", || {
            expect(
                kernel_ref!(kernels::broken::early_return_barrier(o)),
                EmuErrorKind::BarrierDivergence,
                &["exited without reaching it"],
            )
        }),
        Trial::test("faults::split_barrier", || {
            expect(
                kernel_ref!(kernels::broken::split_barrier(o)),
                EmuErrorKind::BarrierDivergence,
                &["different sync_threads calls"],
            )
        }),
        Trial::test("faults::shared_out_of_bounds", || {
            expect(
                kernel_ref!(kernels::broken::shared_out_of_bounds(o)),
                EmuErrorKind::SharedOutOfBounds,
                &["index 32 of an array of 32", "thread 31"],
            )
        }),
        Trial::test("faults::divergent_shuffle", || {
            expect(
                kernel_ref!(kernels::broken::divergent_shuffle(o)),
                EmuErrorKind::WarpDivergence,
                &["__shfl_down_sync", "lanes 16-31"],
            )
        }),
        Trial::test("faults::trap", || {
            expect(kernel_ref!(kernels::broken::traps(o)), EmuErrorKind::Trap, &["thread 3", "impossible value"])
        }),
        Trial::test("faults::spin_past_budget", || {
            let backend = Backend::with_emulator(Emulator::new().with_budget(Duration::from_millis(200)));
            let mut flag = backend.alloc::<u32>(1).map_err(|e| e.to_string())?;
            let k = kernel_ref!(kernels::broken::spin_forever(f));
            let start = Instant::now();
            let cfg = LaunchConfig { grid: 1, block: 32, shared_bytes: 0 };
            // SAFETY: `flag` is one valid u32.
            let r = unsafe { backend.launch(&k, cfg, (flag.as_mut_ptr(),)) };
            let took = start.elapsed();
            match r {
                Err(Error::Emulator(e)) if e.kind == EmuErrorKind::Timeout => {
                    if took > Duration::from_secs(2) {
                        return Err(format!("stopped only after {took:?}").into());
                    }
                    Ok(())
                }
                other => Err(format!("expected a timeout, got {other:?}").into()),
            }
        }),
        Trial::test("faults::bad_launch_is_an_error", || {
            let backend = Backend::emulator();
            let mut out = backend.alloc::<i32>(1).map_err(|e| e.to_string())?;
            let k = kernel_ref!(kernels::broken::traps(o));
            let cfg = LaunchConfig { grid: 1, block: 2048, shared_bytes: 0 };
            // SAFETY: the launch is refused before any thread runs.
            match unsafe { backend.launch(&k, cfg, (out.as_mut_ptr(),)) } {
                Err(Error::Emulator(e)) if e.kind == EmuErrorKind::BadLaunch => Ok(()),
                other => Err(format!("expected BadLaunch, got {other:?}").into()),
            }
        }),
    ]
}
