//! On the emulator, the table shows what a CPU can say and what only a GPU can: the CPU time
//! orders the emulator's own work, the GPU throughput columns leave the table, and each row
//! gets its variant's committed GPU figures ([`crate::committed`]), where the lessons show.

use crate::committed::{self, Figures};
use crate::output::{Cell, Column, Shown};

/// The committed-figures group of a report: present on the emulator, absent on a GPU (which
/// measures its own).
pub(super) struct Committed {
    on: bool,
}

impl Committed {
    /// The group for a session: on where the session runs on the emulator.
    pub(super) fn of(session: &super::Session) -> Self {
        Self { on: !session.backend.is_gpu() }
    }

    /// The group where `shown` (the pairs the set measured: `i32` sums), else none.
    pub(super) fn only_if(self, shown: bool) -> Self {
        Self { on: self.on && shown }
    }

    /// The group's columns (none on a GPU).
    pub(super) fn columns(&self) -> Vec<Column> {
        if !self.on {
            return vec![];
        }
        vec![
            Column::new("gpu_time_us", "GPU µs", 9, 1),
            Column::new("gpu_gld_efficiency_pct", "gld eff%", 9, 1),
            Column::new("gpu_warp_efficiency_pct", "thr/warp%", 10, 1),
            Column::new("gpu_bank_conflicts", "bank confl", 11, 0).only(Shown::DataOnly),
            // The table's: ncu's count, marked `*` where the emulator finds the addresses
            // conflict-free (the note says what that means).
            Column::new("gpu_bank_conflicts_marked", "bank confl", 11, 0).only(Shown::TableOnly),
        ]
    }

    /// A row's cells of the group: `variant`'s figures (a scan's with its `kind`), empty where
    /// the set has none.
    pub(super) fn cells(&self, variant: &str, kind: Option<&str>) -> Vec<Cell> {
        if !self.on {
            return vec![];
        }
        cells_of(committed::figures(variant, kind), committed::conflict_free_by_address(variant, kind))
    }

    /// The note above the table: what the columns are and where they come from.
    pub(super) fn note(&self) -> Option<String> {
        self.on.then(|| {
            let p = committed::provenance();
            format!(
                "GPU µs, gld eff% (global load efficiency), thr/warp% (active threads per warp instruction) and \
                 bank confl (shared-memory bank conflicts): the {gpu}'s, measured {date} at {shape} (commit {commit}; \
                 {set}/) — the lessons show there; the CPU µs only orders the emulator's own work. * marks ncu's \
                 bank conflicts on a kernel whose shared addresses are conflict-free (the emulator, counting by \
                 address, finds 0): ncu also counts requests that no two lanes' addresses make conflict \
                 (docs/counters.md)",
                gpu = p.gpu,
                date = p.date,
                shape = committed::SHAPE,
                commit = p.commit,
                set = committed::SET,
            )
        })
    }

    /// The line under the table: where the whole story is.
    pub(super) fn footer(&self) -> Option<String> {
        self.on.then(|| {
            "every lesson's card (Rust beside CUDA C, the GPU's counters, each kernel's accesses drawn): \
             docs/report/index.html"
                .to_string()
        })
    }
}

/// A row's cells: time, efficiencies, ncu's bank conflicts (data) and the same marked `*` where
/// `conflict_free` (the table).
fn cells_of(f: Option<Figures>, conflict_free: bool) -> Vec<Cell> {
    let num = |x: Option<f64>| x.map_or(Cell::Empty, Cell::Num);
    match f {
        Some(f) => {
            let marked = match f.bank_conflicts {
                Some(c) if c > 0.0 && conflict_free => Cell::Text(format!("{c:.0}*")),
                other => num(other),
            };
            vec![
                Cell::Num(f.time_us),
                num(f.gld_efficiency_pct),
                num(f.warp_efficiency_pct),
                num(f.bank_conflicts),
                marked,
            ]
        }
        None => vec![Cell::Empty; 5],
    }
}

/// On the emulator, a timing column as the table should show it: the time is a CPU time, and
/// the throughput columns (GB/s, % of the GPU's peak) are left to CSV and JSON.
pub(super) fn on_the_cpu(c: Column) -> Column {
    match c.key {
        "time_us_median" => Column { title: "CPU µs", ..c },
        k if k.starts_with("gb_per_s") || k == "pct_peak" => c.only(Shown::DataOnly),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_table_has_no_gpu_throughput() {
        let cols = [Column::new("time_us_median", "time (µs)", 11, 2), Column::new("gb_per_s_rw", "GB/s r+w", 9, 1)];
        let cols: Vec<Column> = cols.into_iter().map(on_the_cpu).collect();
        assert_eq!(cols[0].title, "CPU µs");
        assert_eq!(cols[1].shown, Shown::DataOnly);
    }

    #[test]
    fn a_row_without_figures_gets_empty_cells() {
        assert_eq!(cells_of(None, false), vec![Cell::Empty; 5]);
        let f =
            Figures { time_us: 1.5, gld_efficiency_pct: Some(25.0), warp_efficiency_pct: None, bank_conflicts: None };
        assert_eq!(cells_of(Some(f), false)[..2], [Cell::Num(1.5), Cell::Num(25.0)]);
    }

    /// `smem` and `warp_shuffle` address shared memory without conflicts, and ncu counts some:
    /// the table marks ncu's figure; `blelloch_unpadded`'s conflicts are the lesson's, unmarked;
    /// CSV and JSON keep ncu's number.
    #[test]
    fn ncus_conflicts_on_conflict_free_addresses_are_marked() {
        for (variant, kind, marked) in
            [("smem", None, true), ("warp_shuffle", None, true), ("blelloch_unpadded", Some("inclusive"), false)]
        {
            let f = committed::figures(variant, kind).expect("a committed row");
            let ncu = f.bank_conflicts.expect("ncu's bank conflicts");
            assert!(ncu > 0.0, "{variant}: ncu counted {ncu}");
            assert_eq!(committed::conflict_free_by_address(variant, kind), marked, "{variant}");
            let cells = cells_of(Some(f), committed::conflict_free_by_address(variant, kind));
            assert_eq!(cells[3], Cell::Num(ncu), "{variant}: the data column is ncu's number");
            let want = if marked { Cell::Text(format!("{ncu:.0}*")) } else { Cell::Num(ncu) };
            assert_eq!(cells[4], want, "{variant}: the table's cell");
        }
    }
}
