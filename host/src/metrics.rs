//! Hardware counters per variant through NVIDIA Nsight Compute (`ncu`): the profiler metrics
//! of the book's nvprof tables (gld efficiency, warp execution efficiency, instructions,
//! occupancy, bank conflicts, barrier stalls…) as a column group of the `reduce` report
//! (`reduce --metrics`; docs/metrics.md maps each column to its nvprof and ncu names).
//!
//! Three separate steps:
//!
//! * [`Profiler::profile`] runs `ncu` (the only step that needs it): a **child run of this
//!   executable** (`reduce --backend gpu --variant NAME --repeat 1 --format csv …`, metrics
//!   off) under `ncu --csv --metrics … --target-processes application-only -k
//!   regex:'^(SYMBOLS)$' --log-file TMP.csv`, so that only the variant's own kernels are
//!   profiled; it returns ncu's CSV text.
//! * [`parse_csv`] turns that text into [`Launch`]es (one per profiled kernel launch, in
//!   order; `==PROF==`/`==WARNING==` chatter skipped, thousands separators removed).
//! * [`Summary::of_timed_run`] keeps the launches of the child's **timed run** and aggregates
//!   them into one value per column of [`METRICS`].
//!
//! # Aggregation
//!
//! The child makes `runs` identical runs (one warm-up, then `--repeat 1` timed run), so the
//! timed run is the last `1/runs` of the variant's launches, in ncu's order (if the count does
//! not divide, the last launch of each symbol). Over the kernels of that run (several for the
//! scans, e.g. `bit_build` + `bit_query`, or a reduction with a device-side finish):
//!
//! * counts (instructions, requests, sectors, bank conflicts, duration) are **summed**;
//! * instructions per warp is the summed instructions over the summed warps launched;
//! * ratios and percentages are **weighted means**: gld efficiency weighted by global load
//!   sectors (which makes it exact), warp execution efficiency and barrier stalls by
//!   instructions executed, occupancy and DRAM throughput by kernel duration. A kernel that
//!   lacks a metric or its weight leaves the column empty; where every weight is 0 (no global
//!   load at all), the plain mean.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::output::{Cell, Column, Shown};
use crate::{Error, Result};

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
    fn reads(&self) -> [&'static str; 2] {
        match *self {
            Rule::Sum(m, _) => [m, m],
            Rule::Mean { metric, weight, .. } => [metric, weight],
            Rule::Quotient(a, b) => [a, b],
        }
    }

    /// Its value over `run`; `None` when a kernel lacks a metric it reads, or `run` is empty.
    fn value(&self, run: &[&Launch]) -> Option<f64> {
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

const INST: &str = "smsp__inst_executed.sum";
const DURATION: &str = "gpu__time_duration.sum";
const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";

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

const ST_PCT: &str = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";

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

/// The emulator's summary of a row from its counted launches, in launch order: `runs` equal
/// runs were made (a warm-up, then the counted run); the last run's launches of `symbols`
/// count, as [`Summary::of_timed_run`] takes ncu's timed run.
pub fn emulated_summary(counted: &[crate::emu::Counted], symbols: &[&str], runs: usize) -> Option<Summary> {
    let launches: Vec<Launch> = counted.iter().enumerate().map(|(i, c)| emulated_launch(i as u64, c)).collect();
    Summary::of_timed_run_as(Profile::Emulator, &launches, symbols, runs)
}

/// One emulator launch's counters as a [`Launch`] whose values carry ncu's metric names where
/// the emulator counts the same thing (so that [`Summary`] aggregates both alike).
pub fn emulated_launch(id: u64, counted: &crate::emu::Counted) -> Launch {
    let c = &counted.counters;
    let values: [(&str, f64); 16] = [
        (LD_SECTORS, c.gld_sectors as f64),
        ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", c.gld_requests as f64),
        ("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", c.gld_efficiency_pct()),
        (ST_SECTORS, c.gst_sectors as f64),
        ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", c.gst_requests as f64),
        (ST_PCT, c.gst_efficiency_pct()),
        ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", c.shared_ld_conflicts() as f64),
        ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", c.shared_st_conflicts() as f64),
        ("smsp__sass_inst_executed_op_shared_ld.sum", c.shared_ld_requests as f64),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", c.shared_ld_wavefronts as f64),
        ("smsp__sass_inst_executed_op_shared_st.sum", c.shared_st_requests as f64),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", c.shared_st_wavefronts as f64),
        ("emu__request_lanes.sum", c.request_lanes as f64),
        ("emu__requests.sum", c.requests() as f64),
        ("emu__barriers.sum", c.barriers as f64),
        ("emu__blocks.sum", c.blocks as f64),
    ];
    let mut map: BTreeMap<String, f64> = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    map.insert("emu__warp_collectives.sum".into(), c.warp_collectives as f64);
    map.insert("emu__atomics.sum".into(), c.atomics as f64);
    Launch { id, kernel: counted.kernel.clone(), values: map }
}

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

/// One kernel launch that ncu profiled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Launch {
    /// ncu's launch ID.
    pub id: u64,
    /// The kernel as ncu names it: `interleaved`, or `reduceInterleaved(int *, int *, unsigned int)`.
    pub kernel: String,
    /// Metric name → value (units as ncu gives them: %, ns, counts).
    pub values: BTreeMap<String, f64>,
}

impl Launch {
    /// The function's base name: `void reduceCompleteUnroll<512>(int *, …)` → `reduceCompleteUnroll`.
    pub fn symbol(&self) -> &str {
        let k = self.kernel.trim();
        let k = k.strip_prefix("void ").unwrap_or(k);
        k.split(['(', '<']).next().unwrap_or(k).trim()
    }

    /// The value of `metric`, if ncu gave a number.
    pub fn get(&self, metric: &str) -> Option<f64> {
        self.values.get(metric).copied()
    }
}

/// A metric value: `"165,344"` → 165344.0; `None` for `n/a` and the like.
fn number(text: &str) -> Option<f64> {
    text.trim().replace(',', "").parse().ok()
}

/// Parses ncu's `--csv` output (the `--log-file`, or stdout): one row per (launch, metric)
/// under the header `"ID","Process ID",…,"Kernel Name",…,"Metric Name","Metric Unit","Metric
/// Value"`. Lines starting with `==` (ncu's `==PROF==`, `==WARNING==` chatter) are skipped.
/// Text without the header (nothing was profiled) gives no launches. The launches come in
/// ncu's order (the order they ran), one per run of rows with the same ID.
pub fn parse_csv(text: &str) -> Result<Vec<Launch>> {
    let body: String = text.lines().filter(|l| !l.starts_with("==")).flat_map(|l| [l, "\n"]).collect();
    let Some(start) = body.find("\"ID\",") else { return Ok(Vec::new()) };
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(&body.as_bytes()[start..]);
    let bad = |m: String| Error::Unsupported(format!("ncu's CSV: {m}"));
    let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let at = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| bad(format!("no `{name}` column")));
    let (id, kernel, name, value) = (at("ID")?, at("Kernel Name")?, at("Metric Name")?, at("Metric Value")?);
    let mut launches: Vec<Launch> = Vec::new();
    for record in reader.records() {
        let r = record.map_err(|e| bad(e.to_string()))?;
        let field = |i: usize| r.get(i).ok_or_else(|| bad(format!("a row without field {}: {r:?}", i + 1)));
        let launch_id: u64 = field(id)?.parse().map_err(|_| bad(format!("launch ID `{}`", &r[id])))?;
        if launches.last().is_none_or(|l| l.id != launch_id) {
            launches.push(Launch { id: launch_id, kernel: field(kernel)?.to_string(), ..Launch::default() });
        }
        if let Some(v) = number(field(value)?) {
            let last = launches.last_mut().expect("pushed above");
            last.values.insert(field(name)?.to_string(), v);
        }
    }
    Ok(launches)
}

/// One value per column of [`METRICS`] for one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Where the counters come from (which columns `values` holds).
    pub profile: Profile,
    /// How many launches were aggregated (the kernels of the timed run).
    pub launches: usize,
    /// One value per [`METRICS`] entry (`None`: ncu gave no number).
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

    /// The summary of these launches, aggregated as the [module](self) says.
    pub fn of(profile: Profile, run: &[&Launch]) -> Self {
        Self { profile, launches: run.len(), values: profile.metrics().iter().map(|m| m.rule.value(run)).collect() }
    }

    /// The value of the column with this key.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.profile.metrics().iter().position(|m| m.column.key == key).and_then(|i| self.values[i])
    }
}

/// The report columns of `profile`'s group.
pub fn columns_of(profile: Profile) -> Vec<Column> {
    profile.metrics().iter().map(|m| m.column).collect()
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

/// `ncu`: `$NCU`, else the first on the `PATH`, else `/usr/local/cuda/bin/ncu`, else the
/// newest `/usr/local/cuda-*/bin/ncu` (the same search as for nvcc, [`crate::cub`]).
pub fn find_ncu() -> Option<PathBuf> {
    crate::cub::find_cuda_tool("NCU", "ncu")
}

/// Runs child runs of this executable under ncu.
#[derive(Clone, Debug)]
pub struct Profiler {
    ncu: PathBuf,
    exe: PathBuf,
}

impl Profiler {
    /// A profiler for a run on a GPU, or why there is none, in one line
    /// ([`Error::Unsupported`]): there is no ncu. (The emulator counts for itself:
    /// [`emulated_launch`].)
    pub fn new() -> Result<Self> {
        let ncu = find_ncu().ok_or_else(|| {
            Error::Unsupported(
                "--metrics needs Nsight Compute: no ncu (set NCU, put ncu on the PATH, or install the CUDA toolkit \
                 in /usr/local/cuda)"
                    .into(),
            )
        })?;
        let exe = std::env::current_exe()
            .map_err(|e| Error::Unsupported(format!("--metrics: cannot find this executable: {e}")))?;
        Ok(Self { ncu, exe })
    }

    /// The ncu it runs.
    pub fn ncu(&self) -> &Path {
        &self.ncu
    }

    /// Profiles `symbols` in a child run of this executable with `args`, and parses what
    /// ncu wrote.
    pub fn profile(&self, symbols: &[&str], args: &[String]) -> Result<Vec<Launch>> {
        parse_csv(&run_ncu(&self.ncu, &self.exe, symbols, args)?)
    }
}

/// Runs `exe args` under `ncu` with the [`ncu_metrics`], profiling only the kernels named
/// `symbols`, and returns ncu's CSV log. An error says, in one line, why ncu gave nothing:
/// no permission for the counters (`ERR_NVGPUCTRPERM`), an `==ERROR==` line, or the failure.
pub fn run_ncu(ncu: &Path, exe: &Path, symbols: &[&str], args: &[String]) -> Result<String> {
    run_ncu_with_env(ncu, exe, symbols, args, &[])
}

/// [`run_ncu`] with these variables set in the environment ncu and the child inherit.
pub fn run_ncu_with_env(
    ncu: &Path,
    exe: &Path,
    symbols: &[&str],
    args: &[String],
    env: &[(&str, &str)],
) -> Result<String> {
    // ncu writes its log into a private folder of ours (random name, mode 0700, removed after).
    let dir = crate::private::PrivateDir::new("reduce-ncu-")?;
    let log = dir.path().join("ncu.csv");
    let out = Command::new(ncu)
        .args(["--csv", "--metrics", &ncu_metrics().join(","), "--target-processes", "application-only"])
        .args(["-k", &format!("regex:^({})$", symbols.join("|")), "--log-file"])
        .arg(&log)
        .arg(exe)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Unsupported(format!("--metrics: cannot run {}: {e}", ncu.display())))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    drop(dir);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let all = [text.as_str(), stdout.as_ref(), stderr.as_ref()];
    if all.iter().any(|t| t.contains("ERR_NVGPUCTRPERM")) {
        return Err(Error::Unsupported(
            "--metrics: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let \
             users profile (NVreg_RestrictProfilingToAdminUsers=0)"
                .into(),
        ));
    }
    if text.contains("\"ID\",") {
        return Ok(text);
    }
    let error = all.iter().flat_map(|t| t.lines()).find(|l| l.starts_with("==ERROR=="));
    match error {
        Some(line) => Err(Error::Unsupported(format!("--metrics: {}: {}", ncu.display(), line.trim()))),
        None if !out.status.success() && !stdout.contains(',') => Err(Error::Unsupported(format!(
            "--metrics: {} exited with {}: {}",
            ncu.display(),
            out.status,
            crate::cub::last_line(&stderr)
        ))),
        // The child ran and nothing matched (e.g. it skipped the variant): no launches.
        None => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLOBAL: &str = include_str!("../../docs/measurements/2026-11-22-h100/ncu_global_2e24.csv");
    const SHARED: &str = include_str!("../../docs/measurements/2026-11-22-h100/ncu_shared_2e24.csv");

    fn summary(csv: &str, symbol: &str) -> Summary {
        let launches = parse_csv(csv).unwrap();
        Summary::of_timed_run(&launches, &[symbol], 2).unwrap_or_else(|| panic!("no {symbol}"))
    }

    fn close(got: Option<f64>, want: f64) {
        let got = got.expect("a value");
        assert!((got - want).abs() < 1e-6 * want.abs().max(1.0), "got {got}, want {want}");
    }

    #[test]
    fn parses_the_committed_h100_sample() {
        let launches = parse_csv(GLOBAL).unwrap();
        assert_eq!(launches.len(), 36, "18 Rust + 18 C launches");
        assert!(launches.iter().all(|l| l.values.len() == 14), "14 metrics per launch");
        assert_eq!(launches[0].kernel, "neighbored");
        assert_eq!(launches[0].get(DURATION), Some(165_344.0));
        assert_eq!(launches[18].symbol(), "reduceNeighbored");
        assert_eq!(launches[35].symbol(), "reduceCompleteUnroll");
        assert_eq!(parse_csv(SHARED).unwrap().len(), 16);
        let chatter = "==PROF== Disconnected from process 1\n==WARNING== No kernels were profiled.\n";
        assert!(parse_csv(chatter).unwrap().is_empty());
    }

    #[test]
    fn summarises_the_timed_run() {
        let s = summary(GLOBAL, "interleaved");
        assert_eq!(s.launches, 1);
        close(s.get("gld_efficiency_pct"), 96.15);
        close(s.get("warp_execution_efficiency_pct"), 31.56 / 32.0 * 100.0);
        close(s.get("stall_barrier_pct"), 36.81); // the timed launch (ID 5), not the warm-up's 36.78
        let n = summary(GLOBAL, "neighbored");
        close(n.get("inst_executed"), 102_301_696.0);
        close(n.get("warp_execution_efficiency_pct"), 26.90 / 32.0 * 100.0);
        close(n.get("gld_efficiency_pct"), 25.02);
        close(n.get("ncu_duration_us"), 165.472);
        close(n.get("gld_requests"), 6_258_688.0);
        close(n.get("gst_sectors"), 8_388_608.0);
        let warps = 32768.0 * 512.0 / 32.0;
        close(n.get("inst_per_warp"), 102_301_696.0 / warps);
        assert_eq!(cells(Profile::Ncu, Some(&n))[2], Cell::Int(102_301_696));
        assert_eq!(cells(Profile::Ncu, None), vec![Cell::Empty; METRICS.len()]);
        let c = summary(GLOBAL, "reduceInterleaved");
        assert!(c.get("gld_efficiency_pct").is_some());
    }

    #[test]
    fn multi_kernel_runs_sum_counts_and_weight_ratios() {
        let launch = |id, kernel: &str, inst: f64, ratio: f64| Launch {
            id,
            kernel: kernel.into(),
            values: [(INST.to_string(), inst), ("smsp__thread_inst_executed_per_inst_executed.ratio".into(), ratio)]
                .into_iter()
                .collect(),
        };
        let launches = [
            launch(0, "bit_build", 1.0, 0.0),
            launch(1, "bit_query", 1.0, 0.0),
            launch(2, "bit_build", 300.0, 32.0),
            launch(3, "bit_query", 100.0, 16.0),
            launch(4, "other", 1e9, 1.0),
        ];
        let s = Summary::of_timed_run(&launches, &["bit_build", "bit_query"], 2).unwrap();
        assert_eq!(s.launches, 2);
        close(s.get("inst_executed"), 400.0);
        close(s.get("warp_execution_efficiency_pct"), (300.0 * 32.0 + 100.0 * 16.0) / 400.0 / 32.0 * 100.0);
        assert_eq!(s.get("gld_efficiency_pct"), None);
        // Three launches cannot be two equal runs: the last launch of each symbol.
        let run = Summary::timed_run(&launches[1..], &["bit_build", "bit_query"], 2);
        assert_eq!(run.iter().map(|l| l.id).collect::<Vec<_>>(), [2, 3]);
        assert!(Summary::of_timed_run(&launches, &["nothing"], 2).is_none());
    }

    #[test]
    fn the_metric_list_is_the_nineteen_ncu_names() {
        let names = ncu_metrics();
        assert_eq!(names.len(), 19, "{names:?}");
        for name in ["smsp__warps_launched.sum", DURATION, "smsp__sass_inst_executed_op_shared_ld.sum"] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        let mut keys: Vec<_> = METRICS.iter().map(|m| m.column.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), METRICS.len());
    }

    /// A stand-in for ncu in a private folder of its own (removed when the first value is
    /// dropped): a shell script that records its arguments and runs `body` with `$log` set to
    /// the `--log-file` path.
    fn fake_ncu(body: &str) -> (crate::private::PrivateDir, PathBuf, PathBuf) {
        let dir = crate::private::PrivateDir::new("reduce-fake-ncu-").unwrap();
        let (script, args) = (dir.path().join("ncu"), dir.path().join("args"));
        let text = format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --log-file ] && log=$2; shift; done\n{body}\n",
            args.display()
        );
        crate::private::tests::write_script(&script, &text);
        (dir, script, args)
    }

    #[test]
    fn runs_ncu_on_a_child_run_and_reads_its_log() {
        let (dir, ncu, args) = fake_ncu("cp \"$(dirname \"$0\")/sample.csv\" \"$log\"");
        std::fs::write(dir.path().join("sample.csv"), GLOBAL).unwrap();
        let child = ["--variant".to_string(), "bit".into()];
        let text = run_ncu(&ncu, Path::new("/bin/reduce"), &["bit_build", "bit_query"], &child).unwrap();
        assert_eq!(parse_csv(&text).unwrap().len(), 36);
        let called = std::fs::read_to_string(&args).unwrap();
        assert!(called.starts_with(&format!("--csv --metrics {} ", ncu_metrics().join(","))), "{called}");
        assert!(called.contains("--target-processes application-only -k regex:^(bit_build|bit_query)$"), "{called}");
        assert!(called.trim_end().ends_with("/bin/reduce --variant bit"), "{called}");
    }

    #[test]
    fn says_why_ncu_gave_nothing() {
        let (_dir, ncu, _) = fake_ncu(
            "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance \
             Counters on the target device 0.'; exit 1",
        );
        let e = run_ncu(&ncu, Path::new("/bin/true"), &["x"], &[]).unwrap_err().to_string();
        assert!(e.contains("ERR_NVGPUCTRPERM") && !e.contains('\n'), "{e}");
        let (_dir, ncu, _) = fake_ncu("echo '==WARNING== No kernels were profiled.' > \"$log\"");
        assert!(parse_csv(&run_ncu(&ncu, Path::new("/bin/true"), &["x"], &[]).unwrap()).unwrap().is_empty());
        let (_dir, ncu, _) = fake_ncu("echo '==ERROR== Failed to prepare kernel for profiling' > \"$log\"; exit 1");
        let e = run_ncu(&ncu, Path::new("/bin/true"), &["x"], &[]).unwrap_err().to_string();
        assert!(e.contains("Failed to prepare kernel"), "{e}");
    }

    /// Issue 41: ncu's log was `$TMPDIR/reduce-ncu-PID-K.csv`, a name another user could plant a
    /// link at (ncu then overwrote the link's target) or a forged log at. Links planted at every
    /// such name of this process are never followed, and the log ncu is told to write is in a
    /// private folder, gone after the run.
    #[test]
    fn ncus_log_is_private_and_a_planted_link_is_never_followed() {
        let (dir, ncu, args) = fake_ncu(
            "here=$(dirname \"$0\"); stat -c %a \"$(dirname \"$log\")\" > \"$here/mode\"; echo forged > \"$log\"; \
             cp \"$here/sample.csv\" \"$log\"",
        );
        std::fs::write(dir.path().join("sample.csv"), GLOBAL).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted: Vec<PathBuf> = (0..64)
            // fixed temp name: the old names of ncu's log, where "another user" plants links
            .map(|k| std::env::temp_dir().join(format!("reduce-ncu-{}-{k}.csv", std::process::id())))
            .filter(|p| std::os::unix::fs::symlink(&victim, p).is_ok())
            .collect();
        let text = run_ncu(&ncu, Path::new("/bin/true"), &["neighbored"], &[]);
        for p in &planted {
            let _ = std::fs::remove_file(p);
        }
        assert_eq!(parse_csv(&text.unwrap()).unwrap().len(), 36, "the log ncu wrote is read back");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "a planted link was followed");
        let called = std::fs::read_to_string(&args).unwrap();
        let log = PathBuf::from(called.split_whitespace().skip_while(|a| *a != "--log-file").nth(1).unwrap());
        let folder = log.parent().unwrap();
        assert!(folder.file_name().unwrap().to_string_lossy().starts_with("reduce-ncu-"), "{}", log.display());
        assert_eq!(std::fs::read_to_string(dir.path().join("mode")).unwrap().trim(), "700", "the log's folder");
        assert!(!folder.exists(), "the private folder {} is removed after the run", folder.display());
    }
}
