//! "Why only that much faster?": where a lesson's global sectors go, level by level, and what
//! bounds the kernel instead. Nsight Compute's counters per cache level and its stall reasons
//! (`cache_levels_*.csv`, `scripts/gpu/cache_levels.sh`), this kernel beside the previous one.

use std::collections::HashMap;
use std::fmt::Write;

use super::data::Run;

/// The rows of the table: ncu's metric, what it says, and the factor to its unit.
const ROWS: &[(&str, &str, f64)] = &[
    ("gpu__time_duration.sum", "time under ncu (µs; ncu fixes the clocks)", 1e-3),
    ("smsp__inst_executed.sum", "warp instructions", 1.0),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors the loads ask L1 for", 1.0),
    ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "… of which L1 holds (%)", 1.0),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "sectors L1 asks L2 for (its misses)", 1.0),
    ("dram__bytes_read.sum", "MB read from DRAM", 1e-6),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput (% of peak)", 1.0),
    ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "warps waiting at a barrier, per issue", 1.0),
    (
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "warps waiting for memory, per issue",
        1.0,
    ),
    ("smsp__thread_inst_executed_per_inst_executed.ratio", "active threads per warp instruction", 1.0),
    ("smsp__sass_average_branch_targets_threads_uniform.pct", "branch efficiency (%)", 1.0),
];

/// The card's section for `name` against `prev`, when the run has both kernels' rows.
pub fn section(run: &Run, name: &str, prev: Option<&str>) -> String {
    let (Some(this), Some((prev, before))) = (run.levels.get(name), prev.and_then(|p| Some((p, run.levels.get(p)?))))
    else {
        return String::new();
    };
    let mut t = format!(
        "<h4>Where the sectors go, level by level (Nsight Compute, one launch at 2^24)</h4>\
         <table class=\"ncu\"><tr><th class=\"l\">counter</th><th>{}</th><th>{}</th></tr>",
        super::escape(prev),
        super::escape(name)
    );
    for (metric, label, scale) in ROWS {
        let (Some(b), Some(a)) = (before.get(*metric), this.get(*metric)) else { continue };
        let _ = write!(
            t,
            "<tr><td class=\"l\">{label}</td><td>{}</td><td>{}</td></tr>",
            super::num(round2(b * scale)),
            super::num(round2(a * scale))
        );
    }
    t.push_str("</table>");
    if let Some(reading) = reading(before, this) {
        let _ = write!(t, "<p class=\"reading\">{reading}</p>");
    }
    t
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// What the table says, where it says the coalescing lesson's answer: far fewer sectors at L1,
/// the same traffic below it, so the time follows something else.
pub fn reading(before: &HashMap<String, f64>, this: &HashMap<String, f64>) -> Option<String> {
    let get = |m: &HashMap<String, f64>, k: &str| m.get(k).copied().filter(|v| *v > 0.0);
    let ratio = |k: &str| Some(get(before, k)? / get(this, k)?);
    let l1 = ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")?;
    let l2 = ratio("lts__t_sectors_srcunit_tex_op_read.sum")?;
    let dram = ratio("dram__bytes_read.sum")?;
    if l1 < 1.5 || (l2 - 1.0).abs() > 0.01 || (dram - 1.0).abs() > 0.01 {
        return None;
    }
    let time = ratio("gpu__time_duration.sum")?;
    let inst = ratio("smsp__inst_executed.sum")?;
    let pct = |m: &HashMap<String, f64>| get(m, "dram__throughput.avg.pct_of_peak_sustained_elapsed").unwrap_or(0.0);
    let hit =
        |m: &HashMap<String, f64>| get(m, "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct").unwrap_or(0.0);
    Some(format!(
        "{l1:.2}× fewer sectors at L1, but the same sectors reach L2 ({l2s}) and the same bytes come from DRAM \
         ({mb:.1} MB, the input once): the extra sectors were L1 hits ({h0:.1} % of the sectors asked of L1 hit \
         there, against {h1:.1} % now). Neither kernel is bound by memory (DRAM at {p0:.1} % and {p1:.1} % of its peak); \
         the time ({time:.2}× faster) follows the warp instructions ({inst:.2}× fewer) and the barrier waits, not \
         the sectors.",
        l2s = super::num(get(this, "lts__t_sectors_srcunit_tex_op_read.sum")?),
        mb = get(this, "dram__bytes_read.sum")? / 1e6,
        h0 = hit(before),
        h1 = hit(this),
        p0 = pct(before),
        p1 = pct(this),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(l1: f64, l2: f64, dram: f64, time: f64, inst: f64) -> HashMap<String, f64> {
        [
            ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", l1),
            ("lts__t_sectors_srcunit_tex_op_read.sum", l2),
            ("dram__bytes_read.sum", dram),
            ("gpu__time_duration.sum", time),
            ("smsp__inst_executed.sum", inst),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    #[test]
    fn the_coalescing_reading_needs_the_same_traffic_below_l1() {
        let before = counters(16_744_448.0, 2_097_160.0, 67_118_336.0, 133_984.0, 62_586_880.0);
        let after = counters(4_358_144.0, 2_097_152.0, 67_114_752.0, 112_192.0, 52_887_552.0);
        let text = reading(&before, &after).expect("a reading");
        assert!(text.starts_with("3.84× fewer sectors at L1"), "{text}");
        assert!(text.contains("1.19× faster") && text.contains("1.18× fewer"), "{text}");
        // More traffic below L1 after the change: not the coalescing story, no reading.
        let halved = counters(4_358_144.0, 1_048_576.0, 33_554_432.0, 60_000.0, 52_887_552.0);
        assert_eq!(reading(&before, &halved), None);
    }
}
