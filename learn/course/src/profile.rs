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
        | Measure::InputPasses
        | Measure::GlobalAtomicsPerElement => None,
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
