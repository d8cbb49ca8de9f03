//! Your own kernels, measured and checked as the project's are: the emulator's counters and
//! access picture, the GPU's time, and Nsight Compute's counters beside the emulator's.
//!
//! A kernel crate of your own (built to PTX by `reduce-scan-build`, launched through
//! [`module!`](crate::module!) or [`Kernel::of`](crate::backend::Kernel::of)) runs on either
//! [`Backend`]. On the emulator every launch is already checked as compute-sanitizer checks
//! (out-of-bounds and misaligned accesses, races in shared and global memory, reads of memory
//! nothing wrote, barriers not every thread reached), and a fault comes back as an error naming
//! the kernel, block, thread and your `file:line`. This module adds what `reduce --metrics` and
//! `reduce trace` give the project's kernels:
//!
//! | function | what | where |
//! |---|---|---|
//! | [`count`] | the counters of a run of your launches, named as `--metrics` names them (ncu's names where the emulator counts the same thing) | the emulator |
//! | [`trace`] | one block of your first launch drawn barrier interval by barrier interval (SVG), as `reduce trace` draws the project's | the emulator |
//! | [`time`] | device time by CUDA events, median of timed runs after an untimed one | the GPU (the emulator: its CPU time) |
//! | [`device_time`] | the device time of `iters` launches after an untimed one, for criterion's `iter_custom` (`cargo bench`) | the GPU (the emulator: its CPU time) |
//! | [`ncu_beside`] | Nsight Compute's counters of your kernel beside the emulator's count of the same launch | a GPU host with `ncu` |
//!
//! `examples/my_kernel.rs` and the template of the README ("Your kernel, your crate") use them
//! all.

use std::fmt;

use crate::backend::Backend;
use crate::metrics::{self, Launch, Profile, Summary};
use crate::output::{Cell, Column, Format, Report};
use crate::{Error, Result};

/// What the emulator counted of a run of launches: per kernel, and all together.
#[derive(Clone, Debug)]
pub struct Counters {
    /// The kernels counted, in launch order (each once).
    pub kernels: Vec<String>,
    /// Their launches' counters, aggregated as `--metrics` aggregates a row.
    pub summary: Summary,
    /// Each kernel's own launches' counters, in the order of [`kernels`](Self::kernels).
    pub per_kernel: Vec<Summary>,
}

impl Counters {
    /// The counter with this key (`gld_efficiency_pct`, `gld_requests`,
    /// `shared_ld_bank_conflicts`, …: the column keys of `reduce --metrics --format csv`), over
    /// every launch.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.summary.get(key)
    }

    /// The counters of the launches of one kernel (its PTX name: `dot__f32`), if it was
    /// launched.
    pub fn of(&self, kernel: &str) -> Option<&Summary> {
        self.kernels.iter().position(|k| k == kernel).map(|i| &self.per_kernel[i])
    }
}

impl fmt::Display for Counters {
    /// One counter a line; with more than one kernel, a column for all of them and one for
    /// each kernel (`k1`, `k2`, … in launch order, named in the title; the first
    /// [`KERNEL_COLUMNS`] kernels).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let launches = self.summary.launches;
        if self.kernels.len() == 1 {
            let title = format!("the emulator's counters of {launches} launch(es) of {}:", self.kernels[0]);
            return f.write_str(&counter_table(&title, &[("emulator", &self.summary)]));
        }
        let shown = self.kernels.len().min(KERNEL_COLUMNS.len());
        let named: Vec<String> =
            self.kernels[..shown].iter().zip(KERNEL_COLUMNS).map(|(k, c)| format!("{c} {k}")).collect();
        let title =
            format!("the emulator's counters of {launches} launches, all and per kernel ({}):", named.join(", "));
        let mut columns: Vec<(&str, &Summary)> = vec![("all", &self.summary)];
        columns.extend(KERNEL_COLUMNS.iter().copied().zip(&self.per_kernel[..shown]));
        f.write_str(&counter_table(&title, &columns))
    }
}

/// The column titles of the kernels of a count ([`Counters`]' table), in launch order.
pub const KERNEL_COLUMNS: [&str; 8] = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"];

/// Runs `launch` on a counting emulator that shares `backend`'s memory (so `backend`'s buffers
/// work there), and returns what its launches did, with the emulator's checks as ever. `launch`
/// gets the counting backend to launch on. On a GPU the counters are ncu's: [`ncu_beside`].
pub fn count(backend: &Backend, launch: impl FnOnce(&Backend) -> Result<()>) -> Result<Counters> {
    let counting = backend.counting().ok_or_else(|| {
        Error::Unsupported(
            "the emulator counts its own launches; on a GPU the counters are Nsight Compute's \
             (reduce_scan::experiment::ncu_beside)"
                .into(),
        )
    })?;
    launch(&counting)?;
    counters_of(&counting.take_counted())
}

/// The counters of counted launches: every launch, all kernels together.
fn counters_of(counted: &[crate::emu::Counted]) -> Result<Counters> {
    let mut kernels: Vec<String> = Vec::new();
    for c in counted {
        if !kernels.contains(&c.kernel) {
            kernels.push(c.kernel.clone());
        }
    }
    let symbols: Vec<&str> = kernels.iter().map(String::as_str).collect();
    let summary = metrics::emulated_summary(counted, &symbols, 1)
        .ok_or_else(|| Error::Invalid("nothing to count: the closure launched no kernel".into()))?;
    let per_kernel = symbols
        .iter()
        .map(|k| metrics::emulated_summary(counted, &[k], 1).expect("each kernel was launched"))
        .collect();
    Ok(Counters { kernels, summary, per_kernel })
}

/// Runs `launch` on an emulator that draws block `block` of each launch (a new emulator, with
/// `backend`'s memory), and returns the picture of the first launch as SVG text: the active
/// threads of each warp, the global words and 32-byte sectors and the shared words and banks
/// they touched, barrier interval by barrier interval. Emulator only.
pub fn trace(
    backend: &Backend,
    block: u32,
    title: &str,
    launch: impl FnOnce(&Backend) -> Result<()>,
) -> Result<String> {
    let tracing = backend.tracing(u64::from(block)).ok_or_else(|| {
        Error::Unsupported("the access picture is drawn by the emulator: run it with Backend::emulator()".into())
    })?;
    launch(&tracing)?;
    let counted = tracing.take_counted();
    let first = counted
        .iter()
        .find(|c| c.trace.is_some())
        .ok_or_else(|| Error::Invalid(format!("no launch had a block {block} to draw (the grids were smaller)")))?;
    let traced = crate::trace::Traced {
        title: title.to_string(),
        checked: None,
        input: (0, 0),
        kernels: vec![crate::trace::KernelTrace {
            kernel: first.kernel.clone(),
            grid_blocks: first.grid_blocks,
            trace: first.trace.clone().expect("found with a trace"),
        }],
        summary: counters_of(&counted).ok().map(|c| c.summary),
    };
    Ok(crate::trace::svg(&traced))
}

/// Device time of `launch`'s work in microseconds: one untimed run, then `runs` timed runs,
/// each by CUDA events around it ([`Backend::time`]; on the emulator its CPU time); the median,
/// fastest and slowest.
pub fn time(backend: &Backend, runs: u32, mut launch: impl FnMut() -> Result<()>) -> Result<crate::timing::Runs> {
    if runs == 0 {
        return Err(Error::Invalid("time: at least one timed run (got 0)".into()));
    }
    launch()?;
    backend.synchronize()?;
    let mut times = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        times.push(backend.time(&mut launch)?);
    }
    Ok(crate::timing::Runs { times_us: times, first_wrong: None })
}

/// The device time of `iters` launches (each made by `launch`, each timed by CUDA events around
/// it, as the project's benches time theirs), after one untimed launch, for criterion's
/// `iter_custom`:
///
/// ```ignore
/// b.iter_custom(|iters| experiment::device_time(&backend, iters, &mut launch).unwrap());
/// ```
///
/// On the emulator, its CPU time. The untimed launch comes first in every call, so that no
/// measurement ever contains a process's first launch (module load, the device runtime's setup:
/// issue #37 saw a first launch of a nested kernel triple its median of 5); criterion's own
/// warm-up does the same across calls.
pub fn device_time(
    backend: &Backend,
    iters: u64,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<std::time::Duration> {
    launch()?;
    backend.synchronize()?;
    let mut us = 0.0;
    for _ in 0..iters {
        us += backend.time(&mut launch)?;
    }
    Ok(std::time::Duration::from_secs_f64(us * 1e-6))
}

/// The environment variable that marks the child run [`ncu_beside`] starts under ncu.
pub const NCU_CHILD: &str = "REDUCE_SCAN_NCU_CHILD";

/// Is this process the child run that [`ncu_beside`] profiles? It runs the same program with the
/// same arguments on the GPU; a program may skip what ncu need not see.
pub fn under_ncu() -> bool {
    std::env::var_os(NCU_CHILD).is_some()
}

/// Nsight Compute's counters of `kernels` (their PTX names: `dot__f32`) beside the emulator's
/// `counted` of the same launches, one table a kernel, one counter a line: this program is run
/// again, with the same arguments, as a child under `ncu` (the child sees [`under_ncu`], and
/// does not profile again), and ncu's first launch of each kernel is compared with the
/// emulator's counters of that kernel ([`Counters::of`]; all of them where it counted none of
/// that name). `Ok(None)` in the child itself; an error says in one line why there are no
/// counters (no ncu, no permission for the counters, a kernel ncu did not see, …).
pub fn ncu_beside(kernels: &[&str], counted: &Counters) -> Result<Option<String>> {
    if under_ncu() {
        return Ok(None);
    }
    let ncu = metrics::find_ncu().ok_or_else(|| {
        Error::Unsupported(
            "Nsight Compute: no ncu here (set NCU, put ncu on the PATH, or install the CUDA toolkit)".into(),
        )
    })?;
    let exe = std::env::current_exe().map_err(|e| Error::Unsupported(format!("cannot find this executable: {e}")))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = metrics::run_ncu_with_env(&ncu, &exe, kernels, &args, &[(NCU_CHILD, "1")])?;
    let launches = metrics::parse_csv(&text)?;
    let mut tables = String::new();
    for &kernel in kernels {
        let first: Vec<&Launch> = launches.iter().filter(|l| l.symbol() == kernel).take(1).collect();
        if first.is_empty() {
            return Err(Error::Unsupported(format!("ncu profiled no launch of {kernel} in the child run")));
        }
        let gpu = Summary::of(Profile::Ncu, &first);
        let emu = counted.of(kernel).unwrap_or(&counted.summary);
        let title = format!(
            "Nsight Compute on the first launch of {kernel} beside the emulator's count ({} launch(es)):",
            emu.launches
        );
        tables.push_str(&counter_table(&title, &[("emulator", emu), ("ncu", &gpu)]));
    }
    Ok(Some(tables))
}

/// One counter a line: its `--metrics` key, then its value in each of `columns` (a title and the
/// counters: the emulator's, ncu's, a kernel's). The emulator's counters first (ncu's names where
/// it counts the same thing), then, where a column is ncu's, ncu's own.
fn counter_table(title: &str, columns: &[(&'static str, &Summary)]) -> String {
    // Counts are integers, efficiencies and ratios keep their decimals (as `--metrics` prints them).
    let is_count = |key: &str| {
        let all = Profile::Emulator.metrics().iter().chain(Profile::Ncu.metrics());
        all.into_iter().find(|m| m.column.key == key).is_some_and(|m| m.count)
    };
    let value = |s: &Summary, key: &str| match s.get(key) {
        Some(v) if is_count(key) => Cell::Int(v.round() as i64),
        Some(v) => Cell::Num(v),
        None => Cell::Empty,
    };
    let mut header = vec![Column::new("counter", "counter", 34, 0)];
    header.extend(columns.iter().map(|&(name, _)| Column::new(name, name, 14, 2)));
    let mut keys: Vec<&str> = Profile::Emulator.metrics().iter().map(|m| m.column.key).collect();
    if columns.iter().any(|(name, _)| *name == "ncu") {
        let ncu_only: Vec<&str> =
            Profile::Ncu.metrics().iter().map(|m| m.column.key).filter(|k| !keys.contains(k)).collect();
        keys.extend(ncu_only);
    }
    let mut out = Vec::new();
    let mut report = Report::new(Format::Table, &mut out, header);
    report.note(title);
    report.header();
    for key in keys {
        let mut cells = vec![Cell::Text(key.into())];
        cells.extend(columns.iter().map(|(_, s)| value(s, key)));
        report.row(&cells);
    }
    report.finish(Default::default(), &[]);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_a_closure_that_launches_nothing_says_so() {
        let backend = Backend::emulator();
        let e = count(&backend, |_| Ok(())).unwrap_err().to_string();
        assert!(e.contains("launched no kernel") && !e.contains('\n'), "{e}");
    }

    /// Every timed measurement begins with an untimed launch (issue #37): `time` and
    /// `device_time` launch once more than they time.
    #[test]
    fn the_first_launch_is_never_timed() {
        let backend = Backend::emulator();
        let mut launches = 0;
        let runs = time(&backend, 3, || {
            launches += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((launches, runs.times_us.len()), (4, 3));
        let mut launches = 0;
        device_time(&backend, 5, || {
            launches += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(launches, 6);
    }

    /// Two kernels counted in one closure: the counters of all of them, and of each, each one's
    /// own launches (a table with a column per kernel).
    #[test]
    fn a_count_of_two_kernels_has_a_row_of_each() {
        static M: crate::ptx::Module = crate::ptx::Module::new("m", &[]);
        let backend = Backend::emulator();
        let data: Vec<i32> = (0..1024).collect();
        let counted = count(&backend, |e| {
            let cfg = crate::LaunchConfig { grid: 4, block: 256, shared_bytes: 0 };
            for k in [
                crate::kernel_in!(&M, kernels::reduce::interleaved(a, b, n)),
                crate::kernel_in!(&M, kernels::reduce::neighbored(a, b, n)),
                crate::kernel_in!(&M, kernels::reduce::neighbored(a, b, n)),
            ] {
                let (mut input, mut out) = (e.upload(&data)?, e.alloc::<i32>(4)?);
                // SAFETY: 1024 elements in 4 blocks of 256, one partial a block.
                unsafe { e.launch(&k, cfg, (input.as_mut_ptr(), out.as_mut_ptr(), 1024)) }?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(counted.kernels, ["interleaved", "neighbored"]);
        assert_eq!(counted.summary.launches, 3);
        let launches = |k: &str| counted.of(k).map(|s| s.launches);
        assert_eq!((launches("interleaved"), launches("neighbored"), launches("x")), (Some(1), Some(2), None));
        let requests = |s: &Summary| s.get("gld_requests").unwrap();
        let each = requests(counted.of("interleaved").unwrap()) + requests(counted.of("neighbored").unwrap());
        assert_eq!(requests(&counted.summary), each, "the total is the kernels' sum");
        let table = counted.to_string();
        assert!(
            table.contains("k1 interleaved, k2 neighbored") && table.lines().nth(1).unwrap().contains("k2"),
            "{table}"
        );
    }

    #[test]
    fn zero_timed_runs_are_refused() {
        let e = time(&Backend::emulator(), 0, || Ok(())).unwrap_err().to_string();
        assert!(e.contains("at least one"), "{e}");
    }
}
