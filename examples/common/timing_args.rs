//! The command line and the median the timing examples share (`time_to_answer`,
//! `scanner_time`): `[--calls N] [--rounds R] SIZE …`.

/// What the command line asks for.
pub struct Args {
    /// Timed calls per row.
    pub calls: usize,
    /// Rounds over the sizes.
    pub rounds: usize,
    /// The sizes, as `size` read them (empty: the caller's defaults).
    pub sizes: Vec<usize>,
}

/// `argv` (without the program's name), with `calls` timed calls and `rounds` rounds unless
/// given; `size` reads a size or says in one line what a size is.
pub fn parse(
    mut argv: impl Iterator<Item = String>,
    (calls, rounds): (usize, usize),
    size: impl Fn(&str) -> Result<usize, String>,
) -> Result<Args, String> {
    let mut a = Args { calls, rounds, sizes: Vec::new() };
    let number = |flag: &str, v: Option<String>| -> Result<usize, String> {
        let v = v.ok_or(format!("{flag} needs a number"))?;
        v.parse::<usize>().ok().filter(|&x| x > 0).ok_or(format!("{flag} {v}: a positive whole number is allowed"))
    };
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--calls" => a.calls = number("--calls", argv.next())?,
            "--rounds" => a.rounds = number("--rounds", argv.next())?,
            k => a.sizes.push(size(k)?),
        }
    }
    Ok(a)
}

/// The median (the upper one of an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
