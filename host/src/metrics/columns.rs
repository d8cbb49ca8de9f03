//! The column group of `--metrics`: each column, the book's nvprof metric it stands for, and
//! how its value follows from ncu's metrics of the kernels of a row ([`Rule`]); ncu's columns
//! ([`METRICS`]) and the emulator's ([`EMU_METRICS`]).

use super::launch::Launch;
use crate::output::{Column, Shown};

/// How a column's value follows from the kernels of the timed run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// The sum over the kernels of `metric`, times the factor.
    Sum(&'static str, f64),
    /// The mean over the kernels of `metric` weighted by `weight`, times `scale`.
    Mean {
        /// The ncu metric.
        metric: &'static str,
        /// The ncu metric that weights each kernel.
        weight: &'static str,
        /// Factor applied to the mean.
        scale: f64,
    },
    /// The sum of the first over the sum of the second.
    Quotient(&'static str, &'static str),
}

impl Rule {
    /// The ncu metrics it reads.
    pub(super) fn reads(&self) -> [&'static str; 2] {
        match *self {
            Rule::Sum(m, _) => [m, m],
            Rule::Mean { metric, weight, .. } => [metric, weight],
            Rule::Quotient(a, b) => [a, b],
        }
    }

    /// Its value over `run`; `None` when a kernel lacks a metric it reads, or `run` is empty.
    pub(super) fn value(&self, run: &[&Launch]) -> Option<f64> {
        let sum = |m: &str| run.iter().map(|l| l.get(m)).sum::<Option<f64>>();
        if run.is_empty() {
            return None;
        }
        match *self {
            Rule::Sum(m, factor) => sum(m).map(|s| s * factor),
            Rule::Quotient(a, b) => Some(sum(a)? / sum(b)?).filter(|q| q.is_finite()),
            Rule::Mean { metric, weight, scale } => {
                let pairs: Vec<(f64, f64)> =
                    run.iter().map(|l| Some((l.get(metric)?, l.get(weight)?))).collect::<Option<_>>()?;
                let total: f64 = pairs.iter().map(|(_, w)| w).sum();
                let mean = if total > 0.0 {
                    pairs.iter().map(|(v, w)| v * w).sum::<f64>() / total
                } else {
                    pairs.iter().map(|(v, _)| v).sum::<f64>() / pairs.len() as f64
                };
                Some(mean * scale)
            }
        }
    }
}

/// One column of the group: the report column, the book's nvprof name, and its rule.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// The report column (its key is the CSV header and JSON key).
    pub column: Column,
    /// The nvprof metric of the book that it stands for.
    pub nvprof: &'static str,
    /// How it is computed from ncu's metrics.
    pub rule: Rule,
    /// Is it a count (an integer cell)?
    pub count: bool,
}

pub(super) const INST: &str = "smsp__inst_executed.sum";
pub(super) const DURATION: &str = "gpu__time_duration.sum";
pub(super) const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
pub(super) const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";

const fn count(key: &'static str, title: &'static str, width: usize, nvprof: &'static str, m: &'static str) -> Metric {
    Metric { column: Column::new(key, title, width, 0), nvprof, rule: Rule::Sum(m, 1.0), count: true }
}

const fn mean(
    key: &'static str,
    title: &'static str,
    nvprof: &'static str,
    m: &'static str,
    w: &'static str,
) -> Metric {
    let rule = Rule::Mean { metric: m, weight: w, scale: 1.0 };
    Metric { column: Column::new(key, title, title.len() + 1, 1), nvprof, rule, count: false }
}

/// The columns of the group, in order.
pub const METRICS: [Metric; 19] = [
    mean(
        "gld_efficiency_pct",
        "gld eff%",
        "gld_efficiency",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
        LD_SECTORS,
    ),
    Metric {
        column: Column::new("warp_execution_efficiency_pct", "warp eff%", 9, 1),
        nvprof: "warp_execution_efficiency",
        rule: Rule::Mean {
            metric: "smsp__thread_inst_executed_per_inst_executed.ratio",
            weight: INST,
            scale: 100.0 / 32.0,
        },
        count: false,
    },
    count("inst_executed", "instructions", 12, "inst_executed", INST),
    Metric {
        column: Column::new("inst_per_warp", "inst/warp", 9, 1),
        nvprof: "inst_per_warp",
        rule: Rule::Quotient(INST, "smsp__warps_launched.sum"),
        count: false,
    },
    mean(
        "achieved_occupancy_pct",
        "occup%",
        "achieved_occupancy",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        DURATION,
    ),
    mean(
        "dram_throughput_pct",
        "DRAM%",
        "dram_utilization",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        DURATION,
    ),
    count(
        "shared_ld_bank_conflicts",
        "bank ld",
        8,
        "shared_ld_bank_conflict",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    ),
    count(
        "shared_st_bank_conflicts",
        "bank st",
        8,
        "shared_st_bank_conflict",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    ),
    mean("stall_barrier_pct", "bar stall%", "stall_sync", "smsp__warp_issue_stalled_barrier_per_warp_active.pct", INST),
    data(count("gld_requests", "gld req", 0, "gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
    data(count("gld_sectors", "gld sectors", 0, "gld_transactions", LD_SECTORS)),
    data(count("gst_requests", "gst req", 0, "gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
    data(count("gst_sectors", "gst sectors", 0, "gst_transactions", ST_SECTORS)),
    data(mean(
        "gst_efficiency_pct",
        "gst eff%",
        "gst_efficiency",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
        ST_SECTORS,
    )),
    data(count(
        "shared_ld_requests",
        "sh ld req",
        0,
        "shared_load_transactions",
        "smsp__sass_inst_executed_op_shared_ld.sum",
    )),
    data(count(
        "shared_ld_wavefronts",
        "sh ld wf",
        0,
        "(none)",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    )),
    data(count(
        "shared_st_requests",
        "sh st req",
        0,
        "shared_store_transactions",
        "smsp__sass_inst_executed_op_shared_st.sum",
    )),
    data(count(
        "shared_st_wavefronts",
        "sh st wf",
        0,
        "(none)",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    )),
    Metric {
        column: Column::new("ncu_duration_us", "ncu µs", 9, 2),
        nvprof: "(kernel time)",
        rule: Rule::Sum(DURATION, 1e-3),
        count: false,
    },
];

/// Where the counters come from: Nsight Compute on a GPU, or the emulator's own counting
/// (`reduce_scan::emu::counters`), which names a counter as ncu does where it means the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// ncu's hardware counters: the columns of [`METRICS`].
    Ncu,
    /// The emulator's counters: the columns of [`EMU_METRICS`].
    Emulator,
}

impl Profile {
    /// The columns it gives.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Profile::Ncu => &METRICS,
            Profile::Emulator => &EMU_METRICS,
        }
    }
}

pub(super) const ST_PCT: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";

const fn emu(key: &'static str, title: &'static str, width: usize, rule: Rule, count: bool) -> Metric {
    let decimals = if count { 0 } else { 2 };
    Metric { column: Column::new(key, title, width, decimals), nvprof: "(emulator)", rule, count }
}

/// The columns of `--metrics` on the emulator, in order: ncu's names where the emulator
/// counts the same thing (efficiencies with two decimals), `emu_…` for its own.
pub const EMU_METRICS: [Metric; 16] = [
    emu(
        "gld_efficiency_pct",
        "gld eff%",
        9,
        Rule::Mean {
            metric: "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
            weight: LD_SECTORS,
            scale: 1.0,
        },
        false,
    ),
    emu("gst_efficiency_pct", "gst eff%", 9, Rule::Mean { metric: ST_PCT, weight: ST_SECTORS, scale: 1.0 }, false),
    emu("emu_lanes_per_request", "lanes/req", 9, Rule::Quotient("emu__request_lanes.sum", "emu__requests.sum"), false),
    emu(
        "shared_ld_bank_conflicts",
        "bank ld",
        8,
        Rule::Sum("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 1.0),
        true,
    ),
    emu(
        "shared_st_bank_conflicts",
        "bank st",
        8,
        Rule::Sum("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 1.0),
        true,
    ),
    emu("emu_barriers_per_block", "bar/block", 9, Rule::Quotient("emu__barriers.sum", "emu__blocks.sum"), false),
    data(emu("gld_requests", "gld req", 0, Rule::Sum("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1.0), true)),
    data(emu("gld_sectors", "gld sectors", 0, Rule::Sum(LD_SECTORS, 1.0), true)),
    data(emu("gst_requests", "gst req", 0, Rule::Sum("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 1.0), true)),
    data(emu("gst_sectors", "gst sectors", 0, Rule::Sum(ST_SECTORS, 1.0), true)),
    data(emu("shared_ld_requests", "sh ld req", 0, Rule::Sum("smsp__sass_inst_executed_op_shared_ld.sum", 1.0), true)),
    data(emu(
        "shared_ld_wavefronts",
        "sh ld wf",
        0,
        Rule::Sum("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 1.0),
        true,
    )),
    data(emu("shared_st_requests", "sh st req", 0, Rule::Sum("smsp__sass_inst_executed_op_shared_st.sum", 1.0), true)),
    data(emu(
        "shared_st_wavefronts",
        "sh st wf",
        0,
        Rule::Sum("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 1.0),
        true,
    )),
    data(emu("emu_warp_collectives", "warp ops", 0, Rule::Sum("emu__warp_collectives.sum", 1.0), true)),
    data(emu("emu_atomics", "atomics", 0, Rule::Sum("emu__atomics.sum", 1.0), true)),
];

/// `m`, shown in CSV and JSON only (the request and sector counts would make the table too wide).
const fn data(m: Metric) -> Metric {
    Metric { column: m.column.only(Shown::DataOnly), ..m }
}

/// The ncu metrics that [`METRICS`] read, each once, in order (the `--metrics` list).
pub fn ncu_metrics() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for m in METRICS.iter().flat_map(|m| m.rule.reads()) {
        if !names.contains(&m) {
            names.push(m);
        }
    }
    names
}

/// The report columns of the group.
pub fn columns() -> Vec<Column> {
    METRICS.iter().map(|m| m.column).collect()
}

/// The report columns of `profile`'s group.
pub fn columns_of(profile: Profile) -> Vec<Column> {
    profile.metrics().iter().map(|m| m.column).collect()
}
