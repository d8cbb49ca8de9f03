//! Timing, shared by reductions and scans: one untimed warm-up, then repeated timed runs,
//! each after an untimed reset, and the statistics the reports show.
//!
//! **What is timed.** [`Backend::time`]: CUDA events around the launches of one run on the GPU
//! (wall clock in the emulator). Whatever a run consumes (the scratch copy of an in-place
//! kernel) is restored by [`Rerun::reset`] before the start event, so it is never timed.
//!
//! **Every timed run is checked.** [`timed_runs`] asks the job for its result after each
//! timed run ([`Rerun::check`], outside the timing), so that an intermittent failure cannot
//! hide behind a good median: the first wrong run is reported with its index.

use crate::backend::Backend;
use crate::error::Result;

/// Timed runs every job gets, however slow.
pub const MIN_RUNS: u32 = 3;
/// Past this much timed work (µs) a job stops repeating once it has [`MIN_RUNS`] runs.
pub const RUN_BUDGET_US: f64 = 3e6;

/// Something that runs on the device again and again: a prepared reduction or scan.
pub trait Rerun {
    /// Restores what a run consumes (untimed).
    fn reset(&mut self) -> Result<()>;
    /// Enqueues one run (the timed work).
    fn launch(&mut self) -> Result<()>;
    /// After a run: `None` when its result is right, else what was wrong (one line). Not timed.
    fn check(&mut self) -> Result<Option<String>>;
}

/// The times of a job's timed runs and the verdict of each run's result.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// Time of each timed run, µs.
    pub times_us: Vec<f64>,
    /// The first timed run whose result was wrong: `(run index, what was wrong)`.
    pub first_wrong: Option<(usize, String)>,
}

impl Runs {
    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        median(&self.times_us)
    }

    /// Fastest run, µs.
    pub fn min_us(&self) -> f64 {
        self.times_us.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Slowest run, µs.
    pub fn max_us(&self) -> f64 {
        self.times_us.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

/// One untimed run (warm-up: module load, JIT, caches), then `repeat` timed runs, each after an
/// untimed reset and followed by an untimed check of its result. A slow enough job (the
/// one-thread sum of squares at 2^28) stops after [`MIN_RUNS`] runs once the runs have taken
/// [`RUN_BUDGET_US`]: the reports show how many runs each row got.
pub fn timed_runs(backend: &Backend, r: &mut impl Rerun, repeat: u32) -> Result<Runs> {
    r.reset()?;
    r.launch()?;
    backend.synchronize()?;
    let mut runs = Runs { times_us: Vec::with_capacity(repeat as usize), first_wrong: None };
    let mut spent = 0.0;
    for i in 0..repeat.max(1) {
        if i >= MIN_RUNS && spent > RUN_BUDGET_US {
            break;
        }
        r.reset()?;
        let t = backend.time(&mut || r.launch())?;
        spent += t;
        runs.times_us.push(t);
        if runs.first_wrong.is_none()
            && let Some(why) = r.check()?
        {
            runs.first_wrong = Some((i as usize, why));
        }
    }
    Ok(runs)
}

/// Median of a list (mean of the middle two for even lengths; NaN when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.is_empty() {
        f64::NAN
    } else if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    /// A job whose third run (index 2) returns a wrong result.
    struct Flaky(u32);
    impl Rerun for Flaky {
        fn reset(&mut self) -> Result<()> {
            Ok(())
        }
        fn launch(&mut self) -> Result<()> {
            self.0 += 1;
            Ok(())
        }
        fn check(&mut self) -> Result<Option<String>> {
            // Launch 1 is the warm-up; timed run i is launch i + 2.
            Ok((self.0 == 4).then(|| "expected 7, got 8".to_string()))
        }
    }

    #[test]
    fn every_timed_run_is_checked() {
        let b = Backend::emulator();
        let runs = timed_runs(&b, &mut Flaky(0), 5).unwrap();
        assert_eq!(runs.times_us.len(), 5);
        assert_eq!(runs.first_wrong, Some((2, "expected 7, got 8".to_string())));
    }
}
