//! What a card teaches beyond its times: the kernel's access picture ([`crate::trace`], drawn
//! on the emulator when the report is built), the Rust kernel beside its CUDA C twin
//! ([`super::code`]), and its counters: the emulator's beside Nsight Compute's where the run
//! has the agreement table's CSVs (`counters/`), else the emulator's from the picture's run.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::code::{CLASSIC_CU, c_fn, rust_alone, rust_fn_with_helpers, side_by_side};
use super::data::{CounterSource, Run};
use super::html::escape;
use crate::metrics::Summary;
use crate::scan::Kind;
use crate::trace::{Subject, capture, svg};
use crate::{Error, Result};

/// Elements of a reduction's picture, and its block: 8 blocks of four warps.
pub const REDUCE_N: usize = 1024;
/// The block of a reduction's picture (`reduce trace`'s default).
pub const REDUCE_BLOCK: u32 = crate::trace::DEFAULT_BLOCK;
/// Elements of a scan's picture: a part of one tile (the trees are the tile's whole size).
pub const SCAN_N: usize = 512;

/// The pictures drawn for the cards: variant → (file name, the run's counters), or why none.
#[derive(Default)]
pub struct Pictures(HashMap<&'static str, std::result::Result<(String, Option<Summary>), String>>);

impl Pictures {
    /// Draws every reduction's (at [`REDUCE_N`], block [`REDUCE_BLOCK`]) and every curriculum
    /// scan's (at [`SCAN_N`], inclusive) picture into `out` as `trace-<variant>.svg`; returns
    /// them and the files written.
    pub fn draw(out: &Path) -> Result<(Self, Vec<PathBuf>)> {
        let mut subjects: Vec<(Subject, usize)> =
            crate::registry::all().map(|v| (Subject::Reduce(v, REDUCE_BLOCK), REDUCE_N)).collect();
        subjects.extend(crate::scan::curriculum().map(|v| (Subject::Scan(v, Kind::Inclusive), SCAN_N)));
        let (mut pictures, mut files) = (Pictures::default(), Vec::new());
        for (subject, n) in subjects {
            let drawn = match capture(subject, n, 1) {
                Ok(traced) => {
                    let name = format!("trace-{}.svg", subject.name());
                    let path = out.join(&name);
                    std::fs::write(&path, svg(&traced))
                        .map_err(|e| Error::Invalid(format!("cannot write the report to {}: {e}", out.display())))?;
                    files.push(path);
                    Ok((name, traced.summary))
                }
                Err(e) => Err(e.to_string()),
            };
            pictures.0.insert(subject.name(), drawn);
        }
        Ok((pictures, files))
    }

    /// The card's picture, code and counters for variant `name`, whose kernels are `symbols`
    /// (Rust functions in `src`, the kernel file's text); `twin` names its CUDA C function
    /// (for the scans, each kernel's own name in `classic.cu` where it has one).
    pub fn section(&self, run: &Run, name: &str, symbols: &[&str], src: &str, twin: Option<&str>) -> String {
        let mut s = String::new();
        match self.0.get(name) {
            Some(Ok((file, _))) => {
                let _ = write!(
                    s,
                    "<h4>What block 0 does, barrier interval by barrier interval (emulator; <code>reduce trace{}</code>)</h4>\
                     <div class=\"trace\"><a href=\"{f}\"><img src=\"{f}\" alt=\"access picture of {n}\"></a></div>",
                    trace_args(name),
                    f = escape(file),
                    n = escape(name)
                );
            }
            Some(Err(why)) => {
                let _ = write!(s, "<p class=\"note\">No access picture: {}</p>", escape(why));
            }
            None => {}
        }
        s.push_str(&code(name, symbols, src, twin));
        s.push_str(&self.counters(run, name));
        s
    }

    /// The counter table: emulator and ncu from the run's `counters/`, else the picture's run.
    fn counters(&self, run: &Run, name: &str) -> String {
        let emu = run.counters.get(&(CounterSource::Emulator, name.to_string()));
        let ncu = run.counters.get(&(CounterSource::Ncu, name.to_string()));
        let live = match self.0.get(name) {
            Some(Ok((_, Some(summary)))) => Some(summary),
            _ => None,
        };
        let (title, columns): (String, Vec<Column<'_>>) = match (emu, ncu, live) {
            (Some((n, e)), ncu, _) => {
                let mut columns = vec![("emulator", e.clone())];
                columns.extend(ncu.map(|(_, g)| ("Nsight Compute", g.clone())));
                (format!("Counters at n = 2^{} (the agreement table, <code>counters/</code>)", n.ilog2()), columns)
            }
            (None, _, Some(summary)) => {
                let values = COUNTERS.iter().filter_map(|(k, _)| Some((k.to_string(), summary.get(k)?))).collect();
                (
                    format!("Counters on the emulator, the picture's run (n = {})", picture_n(name)),
                    vec![("emulator", values)],
                )
            }
            (None, _, None) => return String::new(),
        };
        let mut t = format!("<h4>{title}</h4><table class=\"ncu\"><tr><th class=\"l\">counter</th>");
        for (head, _) in &columns {
            let _ = write!(t, "<th>{head}</th>");
        }
        t.push_str("</tr>");
        for (key, label) in COUNTERS {
            let cells: Vec<Option<f64>> = columns.iter().map(|(_, values)| values.get(*key).copied()).collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let _ = write!(t, "<tr><td class=\"l\">{label}</td>");
            for c in cells {
                let _ = write!(t, "<td>{}</td>", c.map_or("—".into(), super::num));
            }
            t.push_str("</tr>");
        }
        t.push_str("</table>");
        t
    }
}

/// A column of the counter table: its head and its values by column key.
type Column<'a> = (&'a str, HashMap<String, f64>);

/// The counters a card shows: (column key, what it says).
const COUNTERS: &[(&str, &str)] = &[
    ("gld_efficiency_pct", "global load efficiency %"),
    ("gst_efficiency_pct", "global store efficiency %"),
    ("gld_requests", "global load requests"),
    ("gld_sectors", "global load sectors"),
    ("gst_requests", "global store requests"),
    ("gst_sectors", "global store sectors"),
    ("shared_ld_requests", "shared load requests"),
    ("shared_ld_wavefronts", "shared load wavefronts"),
    ("shared_ld_bank_conflicts", "shared load bank conflicts"),
    ("shared_st_bank_conflicts", "shared store bank conflicts"),
    ("emu_lanes_per_request", "active lanes per request (emulator)"),
    ("emu_barriers_per_block", "barriers per block (emulator)"),
];

fn is_scan(name: &str) -> bool {
    crate::scan::find(name).is_ok() && crate::registry::find(name).is_err()
}

fn picture_n(name: &str) -> usize {
    if is_scan(name) { SCAN_N } else { REDUCE_N }
}

/// The `reduce trace` arguments that draw the same picture.
fn trace_args(name: &str) -> String {
    if is_scan(name) {
        format!(" --op scan --variant {name} --n {SCAN_N}")
    } else {
        format!(" --variant {name} --n {REDUCE_N}")
    }
}

/// Each kernel of the variant, beside its CUDA C twin where it has one.
fn code(name: &str, symbols: &[&str], src: &str, twin: Option<&str>) -> String {
    // A reduction's kernel is the function named as the file (the sizes of `complete_unroll`
    // are instances of it); a scan's kernels are its symbols.
    let functions: Vec<&str> = if is_scan(name) { symbols.to_vec() } else { vec![name] };
    let mut s = String::new();
    for f in functions {
        let Some(rust) = rust_fn_with_helpers(src, f) else { continue };
        let c_name = twin.map(|t| t.split('<').next().unwrap_or(t)).unwrap_or(f);
        match c_fn(CLASSIC_CU, c_name) {
            Some(c) => s.push_str(&side_by_side(&rust, &c, c_name)),
            None => s.push_str(&rust_alone(&rust, &format!("No CUDA C twin of {f} in cub/classic.cu."))),
        }
    }
    s
}
