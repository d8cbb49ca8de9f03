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

// Nsight Compute's metric names: every name `--metrics` asks ncu for is here, once (the
// columns below, the emulator's columns and the emulator's launches, `summary.rs`, use these).
// `scripts/gpu/ncu_names.sh` checks each against `ncu --query-metrics` on a GPU host; a name a
// newer ncu spells otherwise is corrected here alone. ncu's Kernel Profiling Guide ("Metrics
// Reference", "Memory Tables") documents them.
pub(super) const INST: &str = "smsp__inst_executed.sum";
pub(super) const WARPS_LAUNCHED: &str = "smsp__warps_launched.sum";
pub(super) const THREAD_INST_RATIO: &str = "smsp__thread_inst_executed_per_inst_executed.ratio";
pub(super) const DURATION: &str = "gpu__time_duration.sum";
pub(super) const OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
pub(super) const DRAM_PCT: &str = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
pub(super) const STALL_BARRIER: &str = "smsp__warp_issue_stalled_barrier_per_warp_active.pct";
/// Global loads (SASS `LDG` and generic loads of global memory; not `LDGSTS`): requests,
/// sectors, and bytes used per sector fetched.
pub(super) const LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
pub(super) const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
pub(super) const LD_PCT: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
/// Global stores (`STG`, generic stores of global memory).
pub(super) const ST_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
pub(super) const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
pub(super) const ST_PCT: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";
/// `cp.async` (SASS `LDGSTS`, sm_80+): its global side's requests and sectors, which ncu keeps
/// out of the global loads above. The SASS-level names: `l1tex__t_{requests,sectors}_…_op_ldgsts`
/// are not metrics (`ncu --query-metrics` on the H100, gh100; `scripts/gpu/ncu_names.sh`).
pub(super) const LDGSTS_REQUESTS: &str = "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum";
pub(super) const LDGSTS_SECTORS: &str = "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum";
/// Bulk copies through the tensor memory accelerator (`cp.async.bulk`, sm_90+): no LSU request;
/// the bytes they read from L2 into L1 (into shared memory) and write from L1 to L2.
pub(super) const BULK_LD_BYTES: &str = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum";
pub(super) const BULK_ST_BYTES: &str = "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum";
/// Shared memory: instructions (= warp requests), wavefronts, and bank conflicts. The wavefronts
/// are the SASS-level count, from each instruction's addresses (`smsp__sass_…`): the hardware's
/// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*` adds passes on conflict-free requests (on
/// the H100 at n = 5·2^20 + 3, block 128: `smem` 726,229 against the SASS-level 696,337 = its
/// load instructions; `redux`, `warp_shuffle` likewise), which the bank-conflict counters below
/// (hardware-level: ncu has no SASS-level one for `LDS`/`STS`) still include.
pub(super) const SH_LD_REQUESTS: &str = "smsp__sass_inst_executed_op_shared_ld.sum";
pub(super) const SH_LD_WAVEFRONTS: &str = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
pub(super) const SH_LD_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
pub(super) const SH_ST_REQUESTS: &str = "smsp__sass_inst_executed_op_shared_st.sum";
pub(super) const SH_ST_WAVEFRONTS: &str = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
pub(super) const SH_ST_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";

/// Atomics (issue #59). Global: warp requests and sectors of `ATOMG` (PTX `atom` whose old value
/// is used) and of `REDG` (PTX `red`, and an `atom` whose old value is unused: ptxas makes it a
/// `REDG`). Shared: `ATOMS` instructions, wavefronts and bank conflicts. Seen with these names and
/// counts in ncu 2025.3 on the H200 (`docs/counters.md`, "Atomics").
pub(super) const ATOM_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum";
pub(super) const ATOM_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum";
pub(super) const RED_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum";
pub(super) const RED_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum";
pub(super) const SH_ATOM_REQUESTS: &str = "smsp__sass_inst_executed_op_shared_atom.sum";
pub(super) const SH_ATOM_WAVEFRONTS: &str = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum";
pub(super) const SH_ATOM_CONFLICTS: &str = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum";

/// The metrics only newer GPUs have, with the first compute capability that has each: an older
/// GPU's ncu is not asked for them (a run never names a metric its GPU does not have), and their
/// columns stay empty there, where no kernel can make such a copy.
pub const NEWER_METRICS: [(&str, (u32, u32)); 4] =
    [(LDGSTS_REQUESTS, (8, 0)), (LDGSTS_SECTORS, (8, 0)), (BULK_LD_BYTES, (9, 0)), (BULK_ST_BYTES, (9, 0))];

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
pub const METRICS: [Metric; 30] = [
    mean("gld_efficiency_pct", "gld eff%", "gld_efficiency", LD_PCT, LD_SECTORS),
    Metric {
        column: Column::new("warp_execution_efficiency_pct", "warp eff%", 9, 1),
        nvprof: "warp_execution_efficiency",
        rule: Rule::Mean { metric: THREAD_INST_RATIO, weight: INST, scale: 100.0 / 32.0 },
        count: false,
    },
    count("inst_executed", "instructions", 12, "inst_executed", INST),
    Metric {
        column: Column::new("inst_per_warp", "inst/warp", 9, 1),
        nvprof: "inst_per_warp",
        rule: Rule::Quotient(INST, WARPS_LAUNCHED),
        count: false,
    },
    mean("achieved_occupancy_pct", "occup%", "achieved_occupancy", OCCUPANCY, DURATION),
    mean("dram_throughput_pct", "DRAM%", "dram_utilization", DRAM_PCT, DURATION),
    count("shared_ld_bank_conflicts", "bank ld", 8, "shared_ld_bank_conflict", SH_LD_CONFLICTS),
    count("shared_st_bank_conflicts", "bank st", 8, "shared_st_bank_conflict", SH_ST_CONFLICTS),
    mean("stall_barrier_pct", "bar stall%", "stall_sync", STALL_BARRIER, INST),
    data(count("gld_requests", "gld req", 0, "gld_requests", LD_REQUESTS)),
    data(count("gld_sectors", "gld sectors", 0, "gld_transactions", LD_SECTORS)),
    data(count("gst_requests", "gst req", 0, "gst_requests", ST_REQUESTS)),
    data(count("gst_sectors", "gst sectors", 0, "gst_transactions", ST_SECTORS)),
    data(mean("gst_efficiency_pct", "gst eff%", "gst_efficiency", ST_PCT, ST_SECTORS)),
    data(count("shared_ld_requests", "sh ld req", 0, "shared_load_transactions", SH_LD_REQUESTS)),
    data(count("shared_ld_wavefronts", "sh ld wf", 0, "(none)", SH_LD_WAVEFRONTS)),
    data(count("shared_st_requests", "sh st req", 0, "shared_store_transactions", SH_ST_REQUESTS)),
    data(count("shared_st_wavefronts", "sh st wf", 0, "(none)", SH_ST_WAVEFRONTS)),
    data(count("ldgsts_requests", "ldgsts req", 0, "(none: cp.async, sm_80+)", LDGSTS_REQUESTS)),
    data(count("ldgsts_sectors", "ldgsts sectors", 0, "(none: cp.async, sm_80+)", LDGSTS_SECTORS)),
    data(count("bulk_ld_bytes", "bulk ld bytes", 0, "(none: cp.async.bulk, sm_90+)", BULK_LD_BYTES)),
    data(count("bulk_st_bytes", "bulk st bytes", 0, "(none: cp.async.bulk, sm_90+)", BULK_ST_BYTES)),
    data(count("gatom_requests", "gatom req", 0, "global_atomic_requests", ATOM_REQUESTS)),
    data(count("gatom_sectors", "gatom sectors", 0, "(none)", ATOM_SECTORS)),
    data(count("gred_requests", "gred req", 0, "global_reduction_requests", RED_REQUESTS)),
    data(count("gred_sectors", "gred sectors", 0, "(none)", RED_SECTORS)),
    data(count("shared_atom_requests", "sh atom req", 0, "inst_executed_shared_atomics", SH_ATOM_REQUESTS)),
    data(count("shared_atom_wavefronts", "sh atom wf", 0, "(none)", SH_ATOM_WAVEFRONTS)),
    data(count("shared_atom_bank_conflicts", "bank atom", 0, "(none)", SH_ATOM_CONFLICTS)),
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

const fn emu(key: &'static str, title: &'static str, width: usize, rule: Rule, count: bool) -> Metric {
    let decimals = if count { 0 } else { 2 };
    Metric { column: Column::new(key, title, width, decimals), nvprof: "(emulator)", rule, count }
}

/// An emulator column that sums `metric` (its count under ncu's name), in CSV and JSON only.
const fn emu_count(key: &'static str, title: &'static str, metric: &'static str) -> Metric {
    data(emu(key, title, 0, Rule::Sum(metric, 1.0), true))
}

/// The columns of `--metrics` on the emulator, in order: ncu's names where the emulator
/// counts the same thing (efficiencies with two decimals), `emu_…` for its own.
pub const EMU_METRICS: [Metric; 27] = [
    emu("gld_efficiency_pct", "gld eff%", 9, Rule::Mean { metric: LD_PCT, weight: LD_SECTORS, scale: 1.0 }, false),
    emu("gst_efficiency_pct", "gst eff%", 9, Rule::Mean { metric: ST_PCT, weight: ST_SECTORS, scale: 1.0 }, false),
    emu("emu_lanes_per_request", "lanes/req", 9, Rule::Quotient("emu__request_lanes.sum", "emu__requests.sum"), false),
    emu("shared_ld_bank_conflicts", "bank ld", 8, Rule::Sum(SH_LD_CONFLICTS, 1.0), true),
    emu("shared_st_bank_conflicts", "bank st", 8, Rule::Sum(SH_ST_CONFLICTS, 1.0), true),
    emu("emu_barriers_per_block", "bar/block", 9, Rule::Quotient("emu__barriers.sum", "emu__blocks.sum"), false),
    emu_count("gld_requests", "gld req", LD_REQUESTS),
    emu_count("gld_sectors", "gld sectors", LD_SECTORS),
    emu_count("gst_requests", "gst req", ST_REQUESTS),
    emu_count("gst_sectors", "gst sectors", ST_SECTORS),
    emu_count("shared_ld_requests", "sh ld req", SH_LD_REQUESTS),
    emu_count("shared_ld_wavefronts", "sh ld wf", SH_LD_WAVEFRONTS),
    emu_count("shared_st_requests", "sh st req", SH_ST_REQUESTS),
    emu_count("shared_st_wavefronts", "sh st wf", SH_ST_WAVEFRONTS),
    emu_count("ldgsts_requests", "ldgsts req", LDGSTS_REQUESTS),
    emu_count("ldgsts_sectors", "ldgsts sectors", LDGSTS_SECTORS),
    emu_count("bulk_ld_bytes", "bulk ld bytes", BULK_LD_BYTES),
    emu_count("bulk_st_bytes", "bulk st bytes", BULK_ST_BYTES),
    emu_count("emu_warp_collectives", "warp ops", "emu__warp_collectives.sum"),
    emu_count("emu_atomics", "atomics", "emu__atomics.sum"),
    emu_count("gatom_requests", "gatom req", ATOM_REQUESTS),
    emu_count("gatom_sectors", "gatom sectors", ATOM_SECTORS),
    emu_count("gred_requests", "gred req", RED_REQUESTS),
    emu_count("gred_sectors", "gred sectors", RED_SECTORS),
    emu_count("shared_atom_requests", "sh atom req", SH_ATOM_REQUESTS),
    emu_count("shared_atom_wavefronts", "sh atom wf", SH_ATOM_WAVEFRONTS),
    emu_count("shared_atom_bank_conflicts", "bank atom", SH_ATOM_CONFLICTS),
];

/// `m`, shown in CSV and JSON only (the request and sector counts would make the table too wide).
const fn data(m: Metric) -> Metric {
    Metric { column: m.column.only(Shown::DataOnly), ..m }
}

/// The ncu metrics that [`METRICS`] read, each once, in order (the `--metrics` list).
pub fn ncu_metrics() -> Vec<&'static str> {
    ncu_metrics_for(None)
}

/// [`ncu_metrics`] that a GPU of compute capability `cc` has: without the [`NEWER_METRICS`]
/// it is older than (all of them for `None`, a GPU not known).
pub fn ncu_metrics_for(cc: Option<(u32, u32)>) -> Vec<&'static str> {
    let lacks = |m: &str| cc.is_some_and(|cc| NEWER_METRICS.iter().any(|&(name, since)| name == m && cc < since));
    let mut names: Vec<&'static str> = Vec::new();
    for m in METRICS.iter().flat_map(|m| m.rule.reads()) {
        if !names.contains(&m) && !lacks(m) {
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
