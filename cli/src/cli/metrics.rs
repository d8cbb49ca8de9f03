//! `--metrics`: each selected row profiled under Nsight Compute in a child run of this
//! executable ([`crate::metrics`]), or counted by the emulator on a rerun of its launches
//! ([`emulated`]: the rows' modules run them), before any row is printed, and its counters added
//! as a column group before the verdict.

use std::io::Write;

use super::{Session, progress, progress_done};
use crate::Result;
use crate::metrics::{Profile, Profiler, Summary};
use crate::scan::Kind;
use crate::types::{Elem, Op};

/// Runs in the child: one warm-up and one timed run (`--repeat 1`).
const CHILD_RUNS: usize = 2;

/// One child run to profile: what it is called, its kernels, its arguments.
struct Job {
    label: String,
    symbols: Vec<&'static str>,
    args: Vec<String>,
}

/// Where `--metrics` counts come from: Nsight Compute on a GPU, else the emulator.
pub(super) fn profile_of(session: &Session) -> Profile {
    if session.backend.is_gpu() { Profile::Ncu } else { Profile::Emulator }
}

/// Where a child run's input length comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Length {
    /// The session's n, passed as `--n`.
    SessionN,
    /// The child's own arguments (a matrix's `--rows` and `--cols`): no `--n`.
    InArgs,
}

/// The arguments every child run shares (`--n` where `length` says so).
fn common(session: &Session, length: Length) -> Vec<String> {
    common_args(session.n, session.seed, length)
}

/// [`common`]'s arguments for a session of `n` elements and `seed`.
fn common_args(n: usize, seed: u64, length: Length) -> Vec<String> {
    let mut all = vec!["--backend".to_string(), "gpu".into()];
    if length == Length::SessionN {
        all.extend(["--n".into(), n.to_string()]);
    }
    all.extend(["--seed".into(), seed.to_string()]);
    all.extend(["--repeat", "1", "--format", "csv"].map(String::from));
    all
}

/// The counters of a selection: where they come from, and one summary per row.
pub(super) type Counted = (Profile, Vec<Option<Summary>>);

/// The Nsight Compute summaries of the reduction rows `rows` (a variant's name and its row's
/// kernels; `None`: a row that cannot run here, not profiled), each a child run of the
/// variant at `block` (with `--type`/`--combine` for a `pair` other than `i32` sums).
pub(super) fn reductions(
    session: &Session,
    rows: &[Option<(&'static str, Vec<&'static str>)>],
    pair: Option<(Elem, Op)>,
    block: u32,
    err: &mut dyn Write,
) -> Result<Counted> {
    let jobs = rows.iter().map(|row| {
        let (name, symbols) = row.clone()?;
        let mut args = common(session, Length::SessionN);
        args.extend(["--variant".into(), name.into(), "--block".into(), block.to_string()]);
        if let Some((elem, op)) = pair {
            args.extend(["--type".into(), elem.name().into(), "--combine".into(), op.name().into()]);
        }
        Some(Job { label: name.into(), symbols, args })
    });
    Ok((Profile::Ncu, profile_all(session, jobs.collect(), err)?))
}

/// The Nsight Compute summaries of the scan rows `rows` (a variant, a kind and its row's
/// kernels; `None`: not profiled), in order.
pub(super) fn scans(
    session: &Session,
    rows: &[Option<(&'static str, Kind, Vec<&'static str>)>],
    pair: Option<(Elem, Op)>,
    err: &mut dyn Write,
) -> Result<Counted> {
    let jobs = rows.iter().map(|row| {
        let (name, kind, symbols) = row.clone()?;
        let mut args = common(session, Length::SessionN);
        args.extend(["--op", "scan", "--variant", name, "--kind", kind.name()].map(String::from));
        if let Some((elem, op)) = pair {
            args.extend(["--type".into(), elem.name().into(), "--combine".into(), op.name().into()]);
        }
        Some(Job { label: format!("{name} {}", kind.name()), symbols, args })
    });
    Ok((Profile::Ncu, profile_all(session, jobs.collect(), err)?))
}

/// The Nsight Compute summary of one row of an operation with a plan of its own (the
/// compactions, the histograms, the segmented reductions): a child run of this executable with
/// `args` after the common ones (`--op …`), its kernels `symbols`, its input's length from
/// `length` (a matrix's `--rows` and `--cols` set n themselves).
pub(super) fn one(
    session: &Session,
    label: String,
    symbols: Vec<&'static str>,
    (args, length): (Vec<String>, Length),
    err: &mut dyn Write,
) -> Result<Counted> {
    let mut all = common(session, length);
    all.extend(args);
    Ok((Profile::Ncu, profile_all(session, vec![Some(Job { label, symbols, args: all })], err)?))
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
             warp's k-th execution of one source line between two barriers (or whole-warp shuffles and votes) is \
             one request; gld eff%, requests, sectors and bank conflicts as ncu names them, emu_* the emulator's \
             own (docs/emulator.md, docs/counters.md)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Length, common_args};

    #[test]
    fn a_child_gets_n_unless_its_arguments_set_it() {
        let with = common_args(1000, 7, Length::SessionN);
        assert_eq!(with, ["--backend", "gpu", "--n", "1000", "--seed", "7", "--repeat", "1", "--format", "csv"]);
        let without = common_args(1000, 7, Length::InArgs);
        assert_eq!(without, ["--backend", "gpu", "--seed", "7", "--repeat", "1", "--format", "csv"]);
    }
}
