//! ncu's CSV: one [`Launch`] per profiled kernel launch, with its metrics ([`parse_csv`]).

use std::collections::BTreeMap;

use crate::{Error, Result};

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
    let bad = |m: String| Error::Unsupported(format!("ncu's CSV: {m}"));
    let mut records = records(&body[start..]).map_err(bad)?.into_iter();
    let headers = records.next().unwrap_or_default();
    let at = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| bad(format!("no `{name}` column")));
    let (id, kernel, name, value) = (at("ID")?, at("Kernel Name")?, at("Metric Name")?, at("Metric Value")?);
    let mut launches: Vec<Launch> = Vec::new();
    for r in records {
        let field =
            |i: usize| r.get(i).map(String::as_str).ok_or_else(|| bad(format!("a row without field {}: {r:?}", i + 1)));
        let launch_id: u64 = field(id)?.parse().map_err(|_| bad(format!("launch ID `{}`", field(id).unwrap_or(""))))?;
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

/// The records of CSV text as RFC 4180 writes them (what ncu's `--csv` prints): fields apart by
/// commas, a quoted field may hold commas, newlines and doubled quotes; empty lines are skipped.
fn records(text: &str) -> std::result::Result<Vec<Vec<String>>, String> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                if row.len() > 1 || !row[0].is_empty() {
                    rows.push(std::mem::take(&mut row));
                }
                row.clear();
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::records;

    #[test]
    fn csv_fields_may_hold_commas_quotes_and_newlines() {
        let text =
            "\"ID\",\"Kernel Name\"\n\"0\",\"void f<int, 4>(int *, \"\"a\"\")\"\n\n1,plain\r\n\"2\",\"two\nlines\"";
        let r = records(text).unwrap();
        assert_eq!(r[0], ["ID", "Kernel Name"]);
        assert_eq!(r[1], ["0", "void f<int, 4>(int *, \"a\")"]);
        assert_eq!(r[2], ["1", "plain"]);
        assert_eq!(r[3], ["2", "two\nlines"]);
        assert_eq!(r.len(), 4);
        assert!(records("\"open").is_err());
    }
}
