//! The cells of a reduction report: its columns by pair and optional group, each row's cells,
//! and the CUDA C twins' timing beside a row.

use super::super::{Session, timing_cells, timing_columns};
use super::{Data, Groups, Layout, Outcome};
use crate::Error;
use crate::cpu::Reference;
use crate::output::{Cell, Column, Shown};
use crate::reduce::Measurement;
use crate::registry::{Op, Variant};
use crate::twins::TwinInput;
use crate::types::Value;

/// The columns of a reduction report, with its optional groups.
pub(super) fn columns(groups: Groups) -> Vec<Column> {
    let mut c = match groups.layout {
        Layout::Curriculum => vec![Column::new("variant", "variant", 24, 0)],
        Layout::Pair => vec![
            Column::new("variant", "variant", 20, 0),
            Column::new("type", "type", 5, 0),
            Column::new("combine", "combine", 8, 0),
        ],
    };
    c.extend(super::super::shape_columns());
    c.extend(timing_columns(("bytes_per_s", "gb_per_s", "GB/s"), 8));
    match groups.layout {
        Layout::Curriculum => c.extend([
            Column::new("clock64_cycles", "clock64 Δ", 12, 0),
            Column::new("sum", "sum", 12, 0),
            Column::new("expected", "expected", 0, 0).only(Shown::DataOnly),
            Column::new("widened_sum", "widened", 0, 0).only(Shown::DataOnly),
        ]),
        Layout::Pair => c.extend([
            Column::new("result", "result", 24, 0),
            Column::new("expected", "expected", 0, 0).only(Shown::DataOnly),
        ]),
    }
    if groups.cub.is_some() || (groups.cub_asked && groups.layout == Layout::Pair) {
        c.push(Column::new("x_cub", "× CUB", 7, 2));
        c.push(Column::new("cub_median_us", "CUB µs", 0, 2).only(Shown::DataOnly));
    }
    if groups.twins {
        c.push(Column::new("c_median_us", "C µs", 11, 2));
        c.push(Column::new("x_c", "× C", 6, 3));
        c.push(Column::new("c_min_us", "C min", 0, 2).only(Shown::DataOnly));
        c.push(Column::new("c_max_us", "C max", 0, 2).only(Shown::DataOnly));
    }
    c.push(Column::new("verdict", "verdict", 0, 0));
    c
}

/// The CUDA C twin's timing for a row, when the report has the group.
pub(super) enum Twin {
    /// No group, or no twin for this variant, or the Rust row did not run.
    None,
    /// Timed and every run right.
    Timed(crate::twins::TwinTiming),
    /// The twin failed or gave a wrong result: the row fails.
    Failed(String),
    /// The twin's harness cannot be built or run here (the nested twins need `-rdc=true` and
    /// `libcudadevrt`): the row keeps its verdict and says why it has no twin.
    Unavailable(String),
}

/// Does `v` do what CUB's `DeviceReduce` does (one scalar on the device, all of it timed)?
/// Only those rows get a × CUB ratio.
fn comparable_with_cub(v: &Variant, layout: Layout) -> bool {
    v.finish.on_device() && (layout == Layout::Pair || v.op == Op::Sum)
}

/// The verdict of a row that ran.
fn verdict<T: Value>(m: &Measurement<T>, expected: Option<Reference>) -> Cell {
    let wrong = match expected {
        // The curriculum's line: the sum beside the CPU recursion's.
        Some(e) => {
            (m.result.bits() as u32 as i32 != e.wrapped).then(|| format!("expected {}, got {}", e.wrapped, m.result))
        }
        None => m.verdict.clone().err(),
    };
    match (wrong, &m.runs.first_wrong) {
        (Some(why), _) => Cell::Verdict("FAIL", Some(why)),
        (None, Some((run, why))) => Cell::Verdict("FAIL", Some(format!("timed run {run}: {why}"))),
        (None, None) => Cell::Verdict("PASS", None),
    }
}

/// The cells of one row, one per column of [`columns`]`(groups)`.
pub(super) fn cells<T: Value>(
    session: &Session,
    row: (&Variant, Op),
    outcome: &Outcome<T>,
    data: &Data<T>,
    groups: Groups,
    twin: &Twin,
) -> Vec<Cell> {
    let (v, op) = row;
    let names: Vec<&str> = match groups.layout {
        Layout::Curriculum => vec![v.name],
        Layout::Pair => vec![v.name, T::ELEM.name(), op.name()],
    };
    if let Some(row) = outcome.bare_row(&names, columns(groups).len()) {
        return row;
    }
    let Outcome::Ran(m) = outcome else { unreachable!("bare_row covers the rows that did not run") };
    let g = m.geometry;
    let mut row: Vec<Cell> = names.iter().map(|n| Cell::Text(n.to_string())).collect();
    row.extend([
        Cell::Text(format!("{}×{}", g.grid, g.block)),
        Cell::Int(m.n as i64),
        Cell::Int(g.grid.into()),
        Cell::Int(g.block.into()),
        Cell::Int(g.shared_bytes.into()),
    ]);
    row.extend(timing_cells(session, &m.runs, m.n as f64 * T::ELEM.size() as f64));
    let reference = data.sums.map(|(sum, squares)| if v.op == Op::SumOfSquares { squares.unwrap_or(sum) } else { sum });
    row.extend(answer_cells(m, reference, &data.values));
    if groups.cub.is_some() || (groups.cub_asked && groups.layout == Layout::Pair) {
        let ratio = groups.cub.filter(|_| comparable_with_cub(v, groups.layout)).map(|c| c / m.median_us());
        row.extend([ratio.map_or(Cell::Empty, Cell::Num), groups.cub.map_or(Cell::Empty, Cell::Num)]);
    }
    if groups.twins {
        match twin {
            Twin::Timed(t) => row.extend([
                Cell::Num(t.median_us),
                Cell::Num(t.median_us / m.median_us()),
                Cell::Num(t.min_us),
                Cell::Num(t.max_us),
            ]),
            Twin::None | Twin::Failed(_) | Twin::Unavailable(_) => row.extend(vec![Cell::Empty; 4]),
        }
    }
    row.push(match (verdict(m, reference), twin) {
        (Cell::Verdict("PASS", None), Twin::Failed(why)) => Cell::Verdict("FAIL", Some(format!("CUDA C twin: {why}"))),
        (Cell::Verdict("PASS", None), Twin::Unavailable(why)) => {
            Cell::Verdict("PASS", Some(format!("no CUDA C twin here: {why}")))
        }
        (v, _) => v,
    });
    row
}

/// The answer's cells: the curriculum's clock64, sum, expected and exact total, or a pair's
/// result and reference (a float sum's exact one).
fn answer_cells<T: Value>(m: &Measurement<T>, reference: Option<Reference>, data: &[T]) -> Vec<Cell> {
    match reference {
        Some(e) => vec![
            m.cycles.map_or(Cell::Empty, |c| Cell::Int(c as i64)),
            Cell::Int(m.result.bits() as u32 as i32 as i64),
            Cell::Int(e.wrapped.into()),
            Cell::Int(e.widened),
        ],
        None => {
            let expected = if T::ELEM.is_float() && m.op == Op::Sum {
                format!("{:e}", crate::cpu::exact_sum(data).0)
            } else {
                crate::cpu::reference(m.op, data).to_string()
            };
            vec![Cell::Text(m.result.to_string()), Cell::Text(expected)]
        }
    }
}

/// Times `v`'s CUDA C twin on the same data and geometry, when the report has the group.
pub(super) fn time_twin<T: Value>(
    session: &Session,
    v: &Variant,
    input: Option<&TwinInput>,
    block: u32,
    outcome: &Outcome<T>,
) -> Twin {
    let Some(input) = input.filter(|_| crate::twins::has_twin(v.name) && matches!(outcome, Outcome::Ran(_))) else {
        return Twin::None;
    };
    // A harness that cannot be built here is no twin; one that runs and fails fails the row.
    if let Err(Error::Unsupported(why) | Error::NoGpu(why)) = crate::twins::available_for(v.name) {
        return Twin::Unavailable(why);
    }
    match crate::twins::time_on(v.name, input, block, session.repeat) {
        Ok(t) if t.all_correct => Twin::Timed(t),
        Ok(t) => Twin::Failed(format!(
            "{} of {} runs right, last result {} (expected {})",
            t.ok_runs,
            t.runs(),
            t.result,
            t.expected
        )),
        Err(e) => Twin::Failed(e.to_string()),
    }
}

/// `--compare-c`: can the twins run here? `Err` says why not, in one line.
pub(super) fn twins_usable(session: &Session) -> std::result::Result<(), String> {
    if !session.backend.is_gpu() {
        return Err("the CUDA C twins run on a GPU only; these are emulator results".into());
    }
    crate::twins::available().map_err(|e| e.to_string())
}
