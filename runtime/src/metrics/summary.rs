//! One value per column for a row ([`Summary`]): the launches of the row's timed run,
//! aggregated as the [module docs](super) say; from ncu's launches, or from the emulator's own
//! count ([`emulated_summary`]).

use std::collections::BTreeMap;

use super::columns::{
    ATOM_REQUESTS, ATOM_SECTORS, BULK_LD_BYTES, BULK_ST_BYTES, LD_PCT, LD_REQUESTS, LD_SECTORS, LDGSTS_REQUESTS,
    LDGSTS_SECTORS, Profile, RED_REQUESTS, RED_SECTORS, SH_ATOM_CONFLICTS, SH_ATOM_REQUESTS, SH_ATOM_WAVEFRONTS,
    SH_LD_CONFLICTS, SH_LD_REQUESTS, SH_LD_WAVEFRONTS, SH_ST_CONFLICTS, SH_ST_REQUESTS, SH_ST_WAVEFRONTS, ST_PCT,
    ST_REQUESTS, ST_SECTORS,
};
use super::launch::Launch;
use crate::output::Cell;

/// One value per column of [`METRICS`](super::METRICS) for one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Where the counters come from (which columns `values` holds).
    pub profile: Profile,
    /// How many launches were aggregated (the kernels of the timed run).
    pub launches: usize,
    /// One value per [`METRICS`](super::METRICS) entry (`None`: ncu gave no number).
    pub values: Vec<Option<f64>>,
}

impl Summary {
    /// The launches of the timed run: of the launches whose [`Launch::symbol`] is one of
    /// `symbols`, the last `1/runs` (the child made `runs` identical runs), or, when their
    /// number is not a multiple of `runs`, the last launch of each symbol.
    pub fn timed_run<'a>(launches: &'a [Launch], symbols: &[&str], runs: usize) -> Vec<&'a Launch> {
        let mine: Vec<&Launch> = launches.iter().filter(|l| symbols.contains(&l.symbol())).collect();
        let runs = runs.max(1);
        if mine.len().is_multiple_of(runs) {
            return mine[mine.len() - mine.len() / runs..].to_vec();
        }
        let mut last: Vec<&Launch> = Vec::new();
        for l in mine.iter().rev() {
            if !last.iter().any(|x| x.symbol() == l.symbol()) {
                last.push(l);
            }
        }
        last.reverse();
        last
    }

    /// The summary of the timed run ([`timed_run`](Self::timed_run)); `None` when none of
    /// `symbols` was profiled (e.g. the child skipped the variant).
    pub fn of_timed_run(launches: &[Launch], symbols: &[&str], runs: usize) -> Option<Self> {
        Self::of_timed_run_as(Profile::Ncu, launches, symbols, runs)
    }

    /// [`of_timed_run`](Self::of_timed_run) for the columns of `profile`.
    pub fn of_timed_run_as(profile: Profile, launches: &[Launch], symbols: &[&str], runs: usize) -> Option<Self> {
        let run = Self::timed_run(launches, symbols, runs);
        (!run.is_empty()).then(|| Self::of(profile, &run))
    }

    /// The summary of these launches, aggregated as the [module docs](super) say.
    pub fn of(profile: Profile, run: &[&Launch]) -> Self {
        Self { profile, launches: run.len(), values: profile.metrics().iter().map(|m| m.rule.value(run)).collect() }
    }

    /// The value of the column with this key.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.profile.metrics().iter().position(|m| m.column.key == key).and_then(|i| self.values[i])
    }
}

/// The emulator's summary of a row from its counted launches, in launch order: `runs` equal
/// runs were made (a warm-up, then the counted run); the last run's launches of `symbols`
/// count, as [`Summary::of_timed_run`] takes ncu's timed run.
pub fn emulated_summary(counted: &[crate::emu::Counted], symbols: &[&str], runs: usize) -> Option<Summary> {
    let launches: Vec<Launch> = counted.iter().enumerate().map(|(i, c)| emulated_launch(i as u64, c)).collect();
    Summary::of_timed_run_as(Profile::Emulator, &launches, symbols, runs)
}

/// One emulator launch's counters as a [`Launch`] whose values carry ncu's metric names where
/// the emulator counts the same thing (so that [`Summary`] aggregates both alike).
///
/// ncu's global load requests and sectors (`l1tex__t_…_op_ld`, counted where L1 takes the
/// request) include the `cp.async` copies' (SASS `LDGSTS`), and its global load efficiency
/// (`smsp__sass_…_op_ld.pct`, counted per SASS instruction) does not: on the H100 at 2^20,
/// `lookback`'s 8,577 load requests and 135,301 sectors in ncu are the emulator's 8,136 LDGSTS
/// requests and 130,176 sectors plus its few hundred polls, while ncu's 46 % efficiency is the
/// polls' alone (`docs/measurements/2026-11-25-h100/counters/`, `docs/counters.md`). So the
/// emulator's launch carries them the same way.
pub fn emulated_launch(id: u64, counted: &crate::emu::Counted) -> Launch {
    let c = &counted.counters;
    let values: [(&str, f64); 29] = [
        (LD_SECTORS, (c.gld_sectors + c.ldgsts_sectors) as f64),
        (LD_REQUESTS, (c.gld_requests + c.ldgsts_requests) as f64),
        (LD_PCT, c.gld_efficiency_pct()),
        (ST_SECTORS, c.gst_sectors as f64),
        (ST_REQUESTS, c.gst_requests as f64),
        (ST_PCT, c.gst_efficiency_pct()),
        (LDGSTS_REQUESTS, c.ldgsts_requests as f64),
        (LDGSTS_SECTORS, c.ldgsts_sectors as f64),
        (BULK_LD_BYTES, c.bulk_ld_bytes as f64),
        (BULK_ST_BYTES, c.bulk_st_bytes as f64),
        (SH_LD_CONFLICTS, c.shared_ld_conflicts() as f64),
        (SH_ST_CONFLICTS, c.shared_st_conflicts() as f64),
        (SH_LD_REQUESTS, c.shared_ld_requests as f64),
        (SH_LD_WAVEFRONTS, c.shared_ld_wavefronts as f64),
        (SH_ST_REQUESTS, c.shared_st_requests as f64),
        (SH_ST_WAVEFRONTS, c.shared_st_wavefronts as f64),
        ("emu__request_lanes.sum", c.request_lanes as f64),
        ("emu__requests.sum", c.requests() as f64),
        ("emu__barriers.sum", c.barriers as f64),
        ("emu__blocks.sum", c.blocks as f64),
        ("emu__warp_collectives.sum", c.warp_collectives as f64),
        ("emu__atomics.sum", c.atomics as f64),
        (ATOM_REQUESTS, c.gatom_requests as f64),
        (ATOM_SECTORS, c.gatom_sectors as f64),
        (RED_REQUESTS, c.gred_requests as f64),
        (RED_SECTORS, c.gred_sectors as f64),
        (SH_ATOM_REQUESTS, c.shared_atom_requests as f64),
        (SH_ATOM_WAVEFRONTS, c.shared_atom_wavefronts as f64),
        (SH_ATOM_CONFLICTS, c.shared_atom_conflicts() as f64),
    ];
    let map: BTreeMap<String, f64> = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    Launch { id, kernel: counted.kernel.clone(), values: map }
}

/// The cells of the group for one row (all empty without a summary).
pub fn cells(profile: Profile, summary: Option<&Summary>) -> Vec<Cell> {
    profile
        .metrics()
        .iter()
        .enumerate()
        .map(|(i, m)| match summary.and_then(|s| s.values[i]) {
            None => Cell::Empty,
            Some(v) if m.count => Cell::Int(v.round() as i64),
            Some(v) => Cell::Num(v),
        })
        .collect()
}
