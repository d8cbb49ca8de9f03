//! The one output pipeline of the command line, shared by reductions and scans, and of
//! [`experiment`](crate::experiment)'s tables: rows of [`Cell`]s under a list of [`Column`]s go
//! to a [`Report`], which writes them as an aligned table, CSV (the `csv` crate) or JSON
//! (`serde_json`). CSV and JSON come with this crate's `formats` feature (the `reduce` command
//! line turns it on), so that a kernel crate's host carries neither crate.
//!
//! A report is data: a column group (× CUB today; × CUDA C or profiler metrics next) is a
//! few more [`Column`]s and as many more cells per row, not new functions. Table and CSV rows
//! stream out as they come; JSON is one document written at the end, with the session's
//! metadata ([`Report::finish`]).

use std::io::Write;

#[cfg(feature = "formats")]
use serde_json::{Map, Value};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// Comma-separated values with a header line.
    #[cfg(feature = "formats")]
    Csv,
    /// One JSON document.
    #[cfg(feature = "formats")]
    Json,
}

/// What [`Report::finish`] writes before a JSON document's rows: the session's metadata (with
/// the `formats` feature; nothing without it).
#[cfg(feature = "formats")]
pub type Meta = Map<String, Value>;
/// What [`Report::finish`] writes before a JSON document's rows: nothing without the `formats`
/// feature.
#[cfg(not(feature = "formats"))]
pub type Meta = ();

/// Which formats show a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// All three.
    Everywhere,
    /// The table only (e.g. `grid×block`, which CSV and JSON split in two).
    TableOnly,
    /// CSV and JSON only.
    DataOnly,
    /// JSON only (e.g. the list of every run's time).
    JsonOnly,
}

/// One column: its key (CSV header, JSON key), its table title and width, and where it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// CSV header and JSON key.
    pub key: &'static str,
    /// Table title.
    pub title: &'static str,
    /// Table width (0: the last column, unpadded).
    pub width: usize,
    /// Digits after the point in the table, for numbers.
    pub digits: usize,
    /// Where it shows.
    pub shown: Shown,
}

impl Column {
    /// A column shown everywhere.
    pub const fn new(key: &'static str, title: &'static str, width: usize, digits: usize) -> Self {
        Self { key, title, width, digits, shown: Shown::Everywhere }
    }

    /// The same column, shown only where `shown` says.
    pub const fn only(self, shown: Shown) -> Self {
        Self { shown, ..self }
    }

    fn in_format(&self, f: Format) -> bool {
        match (self.shown, f) {
            (Shown::Everywhere, _) | (Shown::TableOnly, Format::Table) => true,
            (Shown::DataOnly | Shown::JsonOnly, Format::Table) => false,
            #[cfg(feature = "formats")]
            (Shown::DataOnly, Format::Csv | Format::Json) | (Shown::JsonOnly, Format::Json) => true,
            #[cfg(feature = "formats")]
            (Shown::TableOnly, Format::Csv | Format::Json) | (Shown::JsonOnly, Format::Csv) => false,
        }
    }
}

/// One value of a row.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Nothing: `—` in the table, empty in CSV, `null` in JSON.
    Empty,
    /// An integer.
    Int(i64),
    /// A number (the column's digits in the table; three decimals in CSV and JSON).
    Num(f64),
    /// Text.
    Text(String),
    /// A list of numbers (JSON; a `;`-separated list elsewhere).
    List(Vec<f64>),
    /// The verdict: `PASS`, `FAIL`, `SKIP`, `ERROR`, `REFERENCE`, and what went wrong.
    Verdict(&'static str, Option<String>),
}

/// Rounds to three decimals for CSV and JSON (µs to the nanosecond).
#[cfg(feature = "formats")]
fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

impl Cell {
    fn table(&self, digits: usize) -> String {
        match self {
            Cell::Empty => "—".into(),
            Cell::Int(i) => i.to_string(),
            Cell::Num(x) => format!("{x:.digits$}"),
            // One line per row: a newline inside a text would break the table.
            Cell::Text(t) => t.replace('\n', " "),
            Cell::List(xs) => xs.iter().map(|x| format!("{x:.digits$}")).collect::<Vec<_>>().join(";"),
            Cell::Verdict(word, None) => word.to_string(),
            Cell::Verdict(word, Some(why)) => format!("{word} ({})", why.replace('\n', " ")),
        }
    }

    #[cfg(feature = "formats")]
    fn csv(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Num(x) => round3(*x).to_string(),
            Cell::List(xs) => xs.iter().map(|x| round3(*x).to_string()).collect::<Vec<_>>().join(";"),
            Cell::Verdict(word, Some(why)) => format!("{word}: {why}"),
            Cell::Text(t) => t.clone(),
            Cell::Int(_) | Cell::Verdict(_, None) => self.table(0),
        }
    }

    /// The JSON value, and for a verdict with a reason the extra `(key, value)` it adds.
    #[cfg(feature = "formats")]
    fn json(&self) -> (Value, Option<(&'static str, Value)>) {
        match self {
            Cell::Empty => (Value::Null, None),
            Cell::Int(i) => (Value::from(*i), None),
            Cell::Num(x) => (Value::from(round3(*x)), None),
            Cell::Text(t) => (Value::from(t.as_str()), None),
            Cell::List(xs) => (Value::from(xs.iter().map(|x| round3(*x)).collect::<Vec<_>>()), None),
            Cell::Verdict(word, why) => {
                let key = match *word {
                    "SKIP" => "reason",
                    "ERROR" => "error",
                    _ => "detail",
                };
                (Value::from(*word), why.as_ref().map(|w| (key, Value::from(w.as_str()))))
            }
        }
    }
}

/// Where rows go: the caller's writer, in one format. Writes to a closed pipe are ignored
/// (`reduce | head`).
pub struct Report<'w> {
    format: Format,
    out: &'w mut dyn Write,
    columns: Vec<Column>,
    #[cfg(feature = "formats")]
    rows: Vec<Value>,
}

impl<'w> Report<'w> {
    /// A report of `columns` in `format` to `out`.
    pub fn new(format: Format, out: &'w mut dyn Write, columns: Vec<Column>) -> Self {
        Self {
            format,
            out,
            columns,
            #[cfg(feature = "formats")]
            rows: Vec::new(),
        }
    }

    /// Is this the human-readable table?
    pub fn is_table(&self) -> bool {
        self.format == Format::Table
    }

    /// A line of context above the table (device, banner, what was measured); nothing in
    /// CSV or JSON, whose metadata goes to [`finish`](Self::finish).
    pub fn note(&mut self, line: &str) {
        if self.is_table() {
            let _ = writeln!(self.out, "{line}");
        }
    }

    /// The header line (table, CSV).
    pub fn header(&mut self) {
        let shown: Vec<&Column> = self.columns.iter().filter(|c| c.in_format(self.format)).collect();
        match self.format {
            Format::Table => {
                let titles: Vec<String> = shown.iter().map(|c| c.title.to_string()).collect();
                let line = aligned(&titles, &shown);
                let _ = writeln!(self.out, "{line}");
            }
            #[cfg(feature = "formats")]
            Format::Csv => {
                let keys: Vec<String> = shown.iter().map(|c| c.key.to_string()).collect();
                self.csv_line(keys);
            }
            #[cfg(feature = "formats")]
            Format::Json => {}
        }
    }

    /// One row, one cell per column.
    pub fn row(&mut self, cells: &[Cell]) {
        debug_assert_eq!(cells.len(), self.columns.len(), "a row needs one cell per column");
        let pairs: Vec<(&Column, &Cell)> =
            self.columns.iter().zip(cells).filter(|(c, _)| c.in_format(self.format)).collect();
        match self.format {
            Format::Table => {
                let texts: Vec<String> = pairs.iter().map(|(c, v)| v.table(c.digits)).collect();
                let columns: Vec<&Column> = pairs.iter().map(|(c, _)| *c).collect();
                let line = aligned(&texts, &columns);
                let _ = writeln!(self.out, "{line}");
            }
            #[cfg(feature = "formats")]
            Format::Csv => {
                let fields: Vec<String> = pairs.iter().map(|(_, v)| v.csv()).collect();
                self.csv_line(fields);
            }
            #[cfg(feature = "formats")]
            Format::Json => {
                let mut row = Map::new();
                for (c, v) in pairs {
                    let (value, extra) = v.json();
                    row.insert(c.key.into(), value);
                    if let Some((k, x)) = extra {
                        row.insert(k.into(), x);
                    }
                }
                self.rows.push(Value::Object(row));
            }
        }
        let _ = self.out.flush();
    }

    /// Ends the report: for JSON, the document `meta` + `"rows"`; for the table, `footer`
    /// lines (e.g. how many rows failed).
    #[cfg_attr(not(feature = "formats"), allow(clippy::let_unit_value, unused_variables, unused_mut))]
    pub fn finish(self, mut meta: Meta, footer: &[String]) {
        match self.format {
            #[cfg(feature = "formats")]
            Format::Json => {
                meta.insert("rows".into(), Value::Array(self.rows));
                let _ = writeln!(self.out, "{}", Value::Object(meta));
            }
            Format::Table => {
                for line in footer {
                    let _ = writeln!(self.out, "{line}");
                }
            }
            #[cfg(feature = "formats")]
            Format::Csv => {}
        }
    }

    #[cfg(feature = "formats")]
    fn csv_line(&mut self, fields: Vec<String>) {
        let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
        let _ = w.write_record(fields);
        if let Ok(bytes) = w.into_inner() {
            let _ = self.out.write_all(&bytes);
        }
    }
}

/// Cells padded to their columns' widths, two spaces apart, trailing space trimmed.
fn aligned(texts: &[String], columns: &[&Column]) -> String {
    let mut s = String::new();
    for (t, c) in texts.iter().zip(columns) {
        let w = c.width;
        s.push_str(&format!("{t:<w$}  "));
    }
    s.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<Column> {
        vec![
            Column::new("variant", "variant", 10, 0),
            Column::new("time_us", "time (µs)", 9, 2),
            Column::new("times_us", "", 0, 0).only(Shown::JsonOnly),
            Column::new("verdict", "verdict", 0, 0),
        ]
    }

    fn render(format: Format) -> String {
        let mut out = Vec::new();
        let mut r = Report::new(format, &mut out, columns());
        r.note("device: test");
        r.header();
        r.row(&[
            Cell::Text("a,b\n\"c\"".into()),
            Cell::Num(1.23456),
            Cell::List(vec![1.0, 2.0]),
            Cell::Verdict("PASS", None),
        ]);
        r.row(&[
            Cell::Text("x".into()),
            Cell::Empty,
            Cell::Empty,
            Cell::Verdict("SKIP", Some("old GPU, sorry".into())),
        ]);
        #[cfg(feature = "formats")]
        let meta = Map::from_iter([("n".to_string(), Value::from(5))]);
        #[cfg(not(feature = "formats"))]
        let meta = ();
        r.finish(meta, &["1 skipped".into()]);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn table_aligns_and_shows_dashes() {
        let t = render(Format::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "device: test");
        assert_eq!(lines[1], "variant     time (µs)  verdict");
        assert!(lines[3].starts_with("x           —") && lines[3].ends_with("SKIP (old GPU, sorry)"), "{t}");
        assert_eq!(lines[4], "1 skipped");
    }

    #[test]
    #[cfg(feature = "formats")]
    fn csv_quotes_what_needs_quoting() {
        let c = render(Format::Csv);
        let mut r = csv::Reader::from_reader(c.as_bytes());
        assert_eq!(r.headers().unwrap(), vec!["variant", "time_us", "verdict"]);
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(&rows[0][0], "a,b\n\"c\"");
        assert_eq!(&rows[0][1], "1.235");
        assert_eq!(&rows[1][1], "");
        assert_eq!(&rows[1][2], "SKIP: old GPU, sorry");
    }

    #[test]
    #[cfg(feature = "formats")]
    fn json_is_one_document_with_meta_first() {
        let j: Value = serde_json::from_str(&render(Format::Json)).unwrap();
        assert_eq!(j["n"], 5);
        assert_eq!(j["rows"][0]["times_us"], serde_json::json!([1.0, 2.0]));
        assert_eq!(j["rows"][0]["verdict"], "PASS");
        assert_eq!(j["rows"][1]["reason"], "old GPU, sorry");
        assert!(j["rows"][1]["time_us"].is_null());
    }
}
