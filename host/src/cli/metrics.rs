//! `--metrics`: each selected variant profiled under Nsight Compute in a child run of this
//! executable ([`crate::metrics`]), before any row is printed, and its counters added as a
//! column group before the verdict.

use std::io::Write;

use super::{Session, progress, progress_done};
use crate::Result;
use crate::metrics::{Profile, Profiler, Summary};
use crate::registry::Variant;
use crate::scan::{Kind, ScanVariant};

/// Runs in the child: one warm-up and one timed run (`--repeat 1`).
const CHILD_RUNS: usize = 2;

/// One child run to profile: what it is called, its kernels, its arguments.
struct Job {
    label: String,
    symbols: Vec<&'static str>,
    args: Vec<String>,
}

/// The arguments every child run shares.
fn common(session: &Session) -> Vec<String> {
    let n = session.n.to_string();
    let seed = session.seed.to_string();
    ["--backend", "gpu", "--n", &n, "--seed", &seed, "--repeat", "1", "--format", "csv"].map(String::from).to_vec()
}

/// The counters of a selection: where they come from, and one summary per row.
pub(super) type Counted = (Profile, Vec<Option<Summary>>);

/// The summaries of `variants` (reductions at `block`), one per variant, in order; a variant
/// that cannot run here at this block (the row says SKIP) is not profiled. On the emulator,
/// its own counters ([`emulated`]).
pub(super) fn reductions(
    session: &Session,
    variants: &[&'static Variant],
    block: u32,
    err: &mut dyn Write,
) -> Result<Counted> {
    if !session.backend.is_gpu() {
        return Ok((Profile::Emulator, super::reduce::counted(session, variants, block, err)?));
    }
    let jobs = variants.iter().map(|v| {
        let mut args = common(session);
        args.extend(["--variant".into(), v.name.into(), "--block".into(), block.to_string()]);
        let runs = crate::reduce::geometry(&session.backend, v, session.n, block, None).is_ok();
        runs.then(|| Job { label: v.name.into(), symbols: v.symbols(), args })
    });
    Ok((Profile::Ncu, profile_all(session, jobs.collect(), err)?))
}

/// The summaries of every (scan variant, kind) pair, in order; a pair that cannot run here
/// (a kind the variant lacks, an older GPU) is not profiled. On the emulator, its own counters.
pub(super) fn scans(session: &Session, pairs: &[(&'static ScanVariant, Kind)], err: &mut dyn Write) -> Result<Counted> {
    if !session.backend.is_gpu() {
        return Ok((Profile::Emulator, super::scan::counted(session, pairs, err)?));
    }
    let jobs = pairs.iter().map(|(v, kind)| {
        let mut args = common(session);
        args.extend(["--op", "scan", "--variant", v.name, "--kind", kind.name()].map(String::from));
        let runs = v.kinds.contains(kind) && session.info().compute_capability >= v.min_cc;
        runs.then(|| Job { label: format!("{} {}", v.name, kind.name()), symbols: v.symbols(), args })
    });
    Ok((Profile::Ncu, profile_all(session, jobs.collect(), err)?))
}

/// The emulator's summary of one row: `run` makes the row's launches once as the warm-up and
/// once as the counted run, on a counting copy of the session's emulator; the counted run is
/// the second half of the launches (as ncu's timed run is).
pub(super) fn emulated(session: &Session, symbols: &[&str], run: impl FnOnce(&Session)) -> Option<Summary> {
    let counting = session.counting()?;
    run(&counting);
    crate::metrics::emulated_summary(&counting.backend.take_counted(), symbols, CHILD_RUNS)
}

/// Profiles every job (`None`: nothing to profile, empty cells). No GPU, no ncu, no permission
/// for the counters, or a first job that ncu cannot profile: an error (nothing is printed,
/// exit status 2). A later job that fails: a line on `err` and empty cells.
fn profile_all(session: &Session, jobs: Vec<Option<Job>>, err: &mut dyn Write) -> Result<Vec<Option<Summary>>> {
    let profiler = Profiler::new()?;
    let mut summaries = Vec::with_capacity(jobs.len());
    let mut first = true;
    for job in &jobs {
        let Some(job) = job else {
            summaries.push(None);
            continue;
        };
        progress(session, err, &format!("profiling {} under {}", job.label, profiler.ncu().display()));
        let launches = match profiler.profile(&job.symbols, &job.args) {
            Ok(l) => l,
            Err(e) if first => return Err(e),
            Err(e) => {
                let _ = writeln!(err, "{}: no metrics ({e})", job.label);
                summaries.push(None);
                continue;
            }
        };
        first = false;
        progress_done(session, err);
        summaries.push(Summary::of_timed_run(&launches, &job.symbols, CHILD_RUNS));
    }
    Ok(summaries)
}

/// `items` with `group` inserted before the last one (the verdict stays last).
pub(super) fn before_last<T>(mut items: Vec<T>, group: Vec<T>) -> Vec<T> {
    let at = items.len().saturating_sub(1);
    items.splice(at..at, group);
    items
}

/// The note above the table.
pub(super) fn note(profile: Profile) -> &'static str {
    match profile {
        Profile::Ncu => {
            "metrics: Nsight Compute (ncu) on a child run per row (--repeat 1), its timed run only; counts summed over \
             the row's kernels, ratios weighted means (docs/metrics.md)"
        }
        Profile::Emulator => {
            "metrics: the emulator's counters, every block of the row's counted run (a warm-up, then one run): a \
             warp's k-th execution of one source line between two barriers is one request; gld eff%, requests, \
             sectors and bank conflicts as ncu names them, emu_* the emulator's own (docs/emulator.md)"
        }
    }
}
