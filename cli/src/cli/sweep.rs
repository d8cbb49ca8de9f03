//! `--sweep`: the selected variants at every size of a range, into one CSV, like
//! cuda-samples' `--shmoo`. Each size is one ordinary run (same checks, same columns); the
//! CSV header is written once. Progress goes to the caller's error writer: the size, each
//! variant, and an estimate of the time left from the sizes done so far (each size takes about
//! its share of the elements).

use std::io::Write;
use std::time::Instant;

use super::{Args, FormatArg, OpArg};
use crate::{Error, Result};

/// The sizes a sweep spec names: `LO..HI` (powers of two, 0 ≤ LO ≤ HI ≤ 31) or `seed`
/// (10^2 … 10^9).
pub(super) fn sizes(spec: &str) -> Result<Vec<u64>> {
    if spec == "seed" {
        return Ok((2..=9).map(|k| 10u64.pow(k)).collect());
    }
    let bad = || {
        Error::Invalid(format!(
            "--sweep {spec}: allowed: LO..HI with 0 <= LO <= HI <= 31 (n = 2^LO … 2^HI), or seed (10^2 … 10^9)"
        ))
    };
    let (lo, hi) = spec.split_once("..").ok_or_else(bad)?;
    let (lo, hi): (u32, u32) = (lo.parse().map_err(|_| bad())?, hi.parse().map_err(|_| bad())?);
    if lo > hi || hi > 31 {
        return Err(bad());
    }
    Ok((lo..=hi).map(|k| 1u64 << k).collect())
}

/// Runs the sweep; `Ok(false)` when any row of any size failed.
pub(super) fn run(args: &Args, spec: &str, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let sizes = sizes(spec)?;
    if matches!(args.format, FormatArg::Json) {
        return Err(Error::Invalid("--sweep writes one CSV; --format json does not apply to it".into()));
    }
    if args.list || args.metrics {
        return Err(Error::Invalid("--sweep does not combine with --list or --metrics".into()));
    }
    let total: u64 = sizes.iter().sum();
    let (start, mut done, mut all_passed) = (Instant::now(), 0u64, true);
    for (i, &n) in sizes.iter().enumerate() {
        let mut one = args.clone();
        (one.n, one.log2, one.sweep, one.format) = (Some(n), None, None, FormatArg::Csv);
        one.sweep_step = Some((i, sizes.len()));
        let eta = (done > 0).then(|| start.elapsed().as_secs_f64() / done as f64 * (total - done) as f64);
        let _ = writeln!(
            err,
            "sweep: size {}/{} (n = {n}){}",
            i + 1,
            sizes.len(),
            eta.map_or(String::new(), |s| format!(", about {s:.0} s left"))
        );
        let mut csv = Vec::new();
        all_passed &= match (one.op, one.op.operation()) {
            (OpArg::Scan, _) => super::scan::run(&one, &mut csv, err)?,
            (OpArg::Segmented, _) => super::segmented::run(&one, false, &mut csv, err)?,
            (OpArg::Rows, _) => super::segmented::run(&one, true, &mut csv, err)?,
            (OpArg::Histogram, _) => super::histogram::run(&one, false, &mut csv, err)?,
            (OpArg::Bincount, _) => super::histogram::run(&one, true, &mut csv, err)?,
            (OpArg::Select | OpArg::Partition | OpArg::Unique | OpArg::RunLength, _) => {
                super::select::run(&one, &mut csv, err)?
            }
            (_, Some(operation)) => super::ops::run(&one, operation, &mut csv, err)?,
            (_, None) => super::reduce::run(&one, &mut csv, err)?,
        };
        // The header once: every size's CSV starts with the same one.
        let text = String::from_utf8_lossy(&csv);
        let body = if i == 0 { &text[..] } else { text.split_once('\n').map_or("", |(_, rest)| rest) };
        let _ = out.write_all(body.as_bytes());
        let _ = out.flush();
        done += n;
    }
    let _ = writeln!(err, "sweep: {} sizes in {:.0} s", sizes.len(), start.elapsed().as_secs_f64());
    Ok(all_passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_specs() {
        assert_eq!(sizes("10..12").unwrap(), vec![1024, 2048, 4096]);
        assert_eq!(sizes("seed").unwrap().len(), 8);
        for bad in ["12..10", "0..32", "x..3", "10", ""] {
            let e = sizes(bad).unwrap_err().to_string();
            assert!(e.contains("LO..HI") && e.contains("seed"), "{bad}: {e}");
        }
    }
}
