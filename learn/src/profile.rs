//! `./x learn N --gpu` on a machine with Nsight Compute: the learner's kernel profiled by `ncu`
//! in a child run of this program (`learn N --gpu-child`: one run at the check's measure shape,
//! on the GPU), beside the emulator's counters of the same run, counter by counter.

use std::path::Path;

use reduce_scan::metrics::{self, Launch, Profile, Summary};
use reduce_scan::output::{Cell, Column, Format, Report};

use crate::check;
use crate::exercises::{Attempt, Exercise, Measure};

/// The argument that makes `learn N` the child run that ncu profiles.
pub const GPU_CHILD: &str = "--gpu-child";

/// One row of the comparison: what it counts, and the column of each profile that holds it
/// (`None`: that profile does not count it).
struct Row {
    what: &'static str,
    emulator: Option<&'static str>,
    ncu: Option<&'static str>,
}

const fn both(what: &'static str, key: &'static str) -> Row {
    Row { what, emulator: Some(key), ncu: Some(key) }
}

/// The rows, in order: the counters both count the same way (ncu's column names, which the
/// emulator uses where it counts the same thing), then each one's own view of divergence.
const ROWS: [Row; 10] = [
    both("global load efficiency %", "gld_efficiency_pct"),
    both("global load requests", "gld_requests"),
    both("global load sectors", "gld_sectors"),
    both("global store efficiency %", "gst_efficiency_pct"),
    both("global store requests", "gst_requests"),
    both("shared load requests", "shared_ld_requests"),
    both("shared load bank conflicts", "shared_ld_bank_conflicts"),
    both("shared store bank conflicts", "shared_st_bank_conflicts"),
    Row { what: "active lanes per global request", emulator: Some("emu_lanes_per_request"), ncu: None },
    Row { what: "warp execution efficiency %", emulator: None, ncu: Some("warp_execution_efficiency_pct") },
];

/// The row that shows the lesson's measure, where a counter does.
fn lesson_row(measure: Measure) -> Option<&'static str> {
    match measure {
        Measure::GldEfficiency => Some("global load efficiency %"),
        Measure::LanesPerRequest => Some("active lanes per global request"),
        Measure::SharedLoadConflicts => Some("shared load bank conflicts"),
        Measure::GlobalLoadsPerBlock => Some("global load requests"),
        Measure::GlobalStoresPerBlock => Some("global store requests"),
        Measure::ElementsPerThread
        | Measure::BarriersPerBlock
        | Measure::Loops
        | Measure::StaticShared
        | Measure::WarpCollectivesPerWarp
        | Measure::BytesPerLoadRequest
        | Measure::HostAdds
        | Measure::AtomicsPerBlock
        | Measure::InputPasses => None,
    }
}

/// Profiles `attempt` with `ncu` in a child run of `exe` (`exe N --gpu-child`) and sets its
/// counters beside the emulator's for the same run. `Err` says in one line why there are none.
pub fn beside_emulator(ex: &Exercise, attempt: &Attempt, ncu: &Path, exe: &Path) -> Result<String, String> {
    let symbols = attempt.code.symbols(check::MEASURE_BLOCK);
    let args = [ex.number.to_string(), GPU_CHILD.to_string()];
    let text = metrics::run_ncu(ncu, exe, &symbols, &args).map_err(|e| e.to_string())?;
    let launches = metrics::parse_csv(&text).map_err(|e| e.to_string())?;
    let mine: Vec<&Launch> = launches.iter().filter(|l| symbols.contains(&l.symbol())).collect();
    if mine.is_empty() {
        return Err(format!("ncu profiled none of your kernels ({})", symbols.join(", ")));
    }
    let gpu = Summary::of(Profile::Ncu, &mine);
    let (counted, _) = check::counted_run(ex, attempt)?;
    let emu = metrics::emulated_summary(&counted, &symbols, 1)
        .ok_or_else(|| format!("the emulator counted none of your kernels ({})", symbols.join(", ")))?;
    Ok(table(ex, &emu, &gpu, mine.len(), check::measure_n(attempt)))
}

/// The comparison, one counter a line, through the project's output pipeline (a table).
fn table(ex: &Exercise, emu: &Summary, gpu: &Summary, launches: usize, n: usize) -> String {
    let cell = |s: &Summary, key: Option<&str>| match key.and_then(|k| s.get(k)) {
        Some(v) if v.fract() == 0.0 => Cell::Int(v as i64),
        Some(v) => Cell::Num(v),
        None => Cell::Empty,
    };
    let lesson = lesson_row(ex.goal.measure());
    let columns = vec![
        Column::new("counter", "counter", 32, 0),
        Column::new("emulator", "emulator", 10, 2),
        Column::new("ncu", "ncu", 10, 2),
        Column::new("note", "", 0, 0),
    ];
    let mut out = Vec::new();
    let mut report = Report::new(Format::Table, &mut out, columns);
    report.note(&format!(
        "Nsight Compute on your kernel ({launches} launch(es)) at n = {}, block {}, beside the emulator's count of \
         the same run:",
        n,
        check::MEASURE_BLOCK
    ));
    report.header();
    for row in &ROWS {
        let mark = if lesson == Some(row.what) { "<- the lesson's counter" } else { "" };
        report.row(&[
            Cell::Text(row.what.into()),
            cell(emu, row.emulator),
            cell(gpu, row.ncu),
            Cell::Text(mark.into()),
        ]);
    }
    report.finish(Default::default(), &[]);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exercises::{EXERCISES, starting};

    /// Held by each test while its stand-in ncu is written and run. Without it, one test's
    /// fork can inherit the other's script while it is still open for writing, and the other's
    /// exec then fails with "Text file busy" (ETXTBSY).
    static STAND_IN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A private temporary folder for a stand-in ncu (random name, mode 0700, removed on drop).
    fn private_dir() -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o700);
        tempfile::Builder::new().prefix("learn-fake-ncu-").permissions(mode).tempdir().unwrap()
    }

    /// A stand-in for ncu: it records its arguments and writes, as its CSV log, one launch of
    /// `neighbored_less` with a global load efficiency of 12.5 % and 4,096 load requests.
    fn fake_ncu(dir: &Path) -> std::path::PathBuf {
        let csv = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\
                   \"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
                   \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
                   \"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct\",\"%\",\"12.5\"\n\
                   \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
                   \"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"sector\",\"16,384\"\n\
                   \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
                   \"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"request\",\"4,096\"\n";
        std::fs::write(dir.join("sample.csv"), csv).unwrap();
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{dir}/args'\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --log-file ]; \
             then cp '{dir}/sample.csv' \"$2\"; fi\n  shift\ndone\n",
            dir = dir.display()
        );
        let path = dir.join("ncu");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        path
    }

    #[test]
    fn ncus_counters_stand_beside_the_emulators() {
        let _one_at_a_time = STAND_IN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = private_dir();
        let ncu = fake_ncu(dir.path());
        let ex = &EXERCISES[0];
        let text = beside_emulator(ex, &starting()[0], &ncu, Path::new("/bin/true")).unwrap();
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        // ncu was told to profile the learner's kernel in a child run of this program.
        let args: Vec<&str> = args.lines().collect();
        for want in [&["-k", "regex:^(neighbored_less)$"][..], &["/bin/true", "1", GPU_CHILD]] {
            assert!(args.windows(want.len()).any(|w| w == want), "{want:?} not in ncu's arguments {args:?}");
        }
        // Its values beside the emulator's, the lesson's counter marked.
        let line = |what: &str| text.lines().find(|l| l.starts_with(what)).unwrap_or_else(|| panic!("{what}:\n{text}"));
        let gld = line("global load efficiency %");
        assert!(gld.trim_end().ends_with("12.50"), "{gld}");
        let req = line("global load requests");
        assert!(req.trim_end().ends_with("4096"), "{req}");
        let lanes = line("active lanes per global request");
        assert!(lanes.contains("5.35") && lanes.contains("—") && lanes.contains("the lesson's counter"), "{lanes}");
        assert!(text.starts_with("Nsight Compute on your kernel (1 launch(es)) at n = 65536, block 512"), "{text}");
    }

    #[test]
    fn a_run_that_profiled_nothing_says_so() {
        let _one_at_a_time = STAND_IN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = private_dir();
        let ncu = fake_ncu(dir.path());
        // Exercise 2's kernel is `interleaved`: the sample holds only `neighbored_less`.
        let e = beside_emulator(&EXERCISES[1], &starting()[1], &ncu, Path::new("/bin/true")).unwrap_err();
        assert_eq!(e, "ncu profiled none of your kernels (interleaved)");
    }
}
