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

mod columns;
mod launch;
mod ncu;
mod summary;

pub use columns::{
    EMU_METRICS, METRICS, Metric, NEWER_METRICS, Profile, Rule, columns, columns_of, ncu_metrics, ncu_metrics_for,
};
pub use launch::{Launch, parse_csv};
pub use ncu::{Profiler, find_ncu, ncu_metrics_here, run_ncu, run_ncu_with_env};
pub use summary::{Summary, cells, emulated_launch, emulated_summary};

#[cfg(test)]
mod tests {
    use super::columns::{DURATION, INST};
    use super::*;
    use crate::output::Cell;
    use std::path::{Path, PathBuf};

    const GLOBAL: &str = include_str!("../../../docs/measurements/2026-11-22-h100/ncu_global_2e24.csv");
    const SHARED: &str = include_str!("../../../docs/measurements/2026-11-22-h100/ncu_shared_2e24.csv");

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
    fn the_metric_list_is_the_thirty_ncu_names() {
        let names = ncu_metrics();
        assert_eq!(names.len(), 30, "{names:?}");
        // An older GPU is not asked for the copies' metrics: its ncu would refuse the run. The
        // atomics' seven are asked of every GPU.
        assert_eq!(ncu_metrics_for(Some((9, 0))), names);
        let sm80 = ncu_metrics_for(Some((8, 0)));
        assert_eq!(sm80.len(), 28, "no TMA metrics on sm_80: {sm80:?}");
        assert!(sm80.contains(&"smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"));
        assert_eq!(ncu_metrics_for(Some((7, 0))).len(), 26, "no LDGSTS on sm_70");
        assert!(names.contains(&"l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"));
        for name in ["smsp__warps_launched.sum", DURATION, "smsp__sass_inst_executed_op_shared_ld.sum"] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        let mut keys: Vec<_> = METRICS.iter().map(|m| m.column.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), METRICS.len());
    }

    /// The emulator's launch carries the copies as ncu counts them (issue 40): `cp.async` in the
    /// load requests and sectors and in the LDGSTS columns, never in the load efficiency; a
    /// bulk copy in its bytes only.
    #[test]
    fn the_emulators_copies_are_counted_as_ncu_counts_them() {
        let counters = crate::emu::counters::Counters {
            gld_requests: 10,
            gld_sectors: 20,
            gld_bytes: 320,
            ldgsts_requests: 5,
            ldgsts_sectors: 40,
            ldgsts_bytes: 1280,
            bulk_ld_bytes: 4096,
            bulk_st_bytes: 96,
            ..Default::default()
        };
        let counted = crate::emu::Counted { kernel: "k".into(), grid_blocks: 1, counters, trace: None };
        let launch = emulated_launch(0, &counted);
        let s = Summary::of(Profile::Emulator, &[&launch]);
        close(s.get("gld_requests"), 15.0);
        close(s.get("gld_sectors"), 60.0);
        close(s.get("gld_efficiency_pct"), 50.0); // 320 bytes of 20 loaded sectors: LDG alone
        close(s.get("ldgsts_requests"), 5.0);
        close(s.get("ldgsts_sectors"), 40.0);
        close(s.get("bulk_ld_bytes"), 4096.0);
        close(s.get("bulk_st_bytes"), 96.0);
        let keys: Vec<&str> = EMU_METRICS.iter().map(|m| m.column.key).collect();
        for key in ["ldgsts_requests", "ldgsts_sectors", "bulk_ld_bytes", "bulk_st_bytes"] {
            assert!(METRICS.iter().any(|m| m.column.key == key), "ncu's columns lack {key}");
            assert!(keys.contains(&key), "the emulator's columns lack {key}");
        }
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
        crate::private::testing::write_script(&script, &text);
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
        assert!(called.starts_with(&format!("--csv --metrics {} ", ncu_metrics_here().join(","))), "{called}");
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
