//! Bad input on the command line, answered in one line (docs/bad-input.md lists every case).
//!
//! The numeric flags go through [`number`], whose message names what is wrong with the
//! value and the range allowed; clap puts the value and the flag in front of it. Clap's own
//! errors (an unknown flag, a value outside a list, …) are rendered over several lines with a
//! usage block; [`one_line`] keeps clap's first line and adds what is allowed.

use std::num::IntErrorKind;
use std::ops::RangeInclusive;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::Args;

/// `s` as a whole number in `range`, or what is wrong with it and what `allowed` is.
fn number(s: &str, range: RangeInclusive<u64>, allowed: &str) -> Result<u64, String> {
    let wrong = match s.parse::<u64>() {
        Ok(v) if range.contains(&v) => return Ok(v),
        Ok(_) => "out of range",
        Err(_) if s.starts_with('-') && s[1..].parse::<u64>().is_ok() => "negative",
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => "out of range",
        Err(_) => "not a whole number",
    };
    Err(format!("{wrong}; allowed: {allowed}"))
}

/// `--n`: 1..=2^32−1 (the kernels take a 32-bit length).
pub(super) fn n(s: &str) -> Result<u64, String> {
    number(s, 1..=u32::MAX as u64, &format!("a whole number in 1..={}", u32::MAX))
}

/// `--log2`: 0..=31 (2^32 is one more than the largest n).
pub(super) fn log2(s: &str) -> Result<u32, String> {
    number(s, 0..=31, "a whole number in 0..=31 (n = 2^LOG2 must be at most 2^32 − 1)").map(|v| v as u32)
}

/// `--blocks-per-sm`: 1..=4096.
pub(super) fn blocks_per_sm(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(k) if (1..=4096).contains(&k) => Ok(k),
        _ => Err(format!("`{s}` is not a block count; --blocks-per-sm takes 1..=4096")),
    }
}

/// `--emulated-sms`: `gpu`, `cpu` or a count (`EmulatedSms::parse`).
pub(super) fn emulated_sms(s: &str) -> Result<crate::emu::EmulatedSms, String> {
    crate::emu::EmulatedSms::parse(s)
}

/// `--block`: any u32 here; the reductions check for a power of two in 32..=1024.
pub(super) fn block(s: &str) -> Result<u32, String> {
    number(s, 0..=u32::MAX as u64, "a power of two in 32..=1024").map(|v| v as u32)
}

/// `--seed`: any u64.
pub(super) fn seed(s: &str) -> Result<u64, String> {
    number(s, 0..=u64::MAX, &format!("a whole number in 0..={}", u64::MAX))
}

/// `--segments`: 1..=2^32−1 (at most n; checked with n).
pub(super) fn segments(s: &str) -> Result<u64, String> {
    number(s, 1..=u32::MAX as u64, &format!("a whole number in 1..={}", u32::MAX))
}

/// `--lanes`: 4..=32 (a power of two: checked by the plan, `Segments::with_lanes`).
pub(super) fn lanes(s: &str) -> Result<u32, String> {
    number(s, 4..=32, "a power of two in 4..=32").map(|l| l as u32)
}

/// `--bins`: 1..=4096.
pub(super) fn bins(s: &str) -> Result<u32, String> {
    number(s, 1..=4096, "a whole number in 1..=4096").map(|b| b as u32)
}

/// `--run`: 1..=2^20.
pub(super) fn run_length(s: &str) -> Result<u32, String> {
    number(s, 1..=1 << 20, "a whole number in 1..=1048576").map(|r| r as u32)
}

/// `--rows`, `--cols`: 1..=2^32−1 (their product at most 2^32−1; checked together).
pub(super) fn dimension(s: &str) -> Result<u64, String> {
    number(s, 1..=u32::MAX as u64, &format!("a whole number in 1..={}", u32::MAX))
}

/// The CSR offsets of `--offsets`.
#[derive(Clone, Debug)]
pub(super) struct OffsetList(pub(super) Vec<u32>);

/// `--offsets`: comma-separated whole numbers in 0..=2^32−1.
pub(super) fn offsets(s: &str) -> Result<OffsetList, String> {
    s.split(',')
        .map(|x| {
            number(x.trim(), 0..=u32::MAX as u64, &format!("comma-separated whole numbers in 0..={}", u32::MAX))
                .map(|v| v as u32)
                .map_err(|e| format!("`{}`: {e}", x.trim()))
        })
        .collect::<Result<Vec<u32>, String>>()
        .map(OffsetList)
}

/// `--repeat`: at least one timed run.
pub(super) fn repeat(s: &str) -> Result<u32, String> {
    number(s, 1..=u32::MAX as u64, &format!("a whole number in 1..={}", u32::MAX)).map(|v| v as u32)
}

/// A clap error in one line: clap's first line, plus what is allowed where clap put that on
/// a later line (the possible values) or nowhere (the flags there are).
pub(super) fn one_line(e: &clap::Error) -> String {
    line_of(e, &command(), "the flags are")
}

/// [`one_line`] for the command `cmd`, whose flags an unknown one is answered with,
/// after `flags_intro`.
fn line_of(e: &clap::Error, cmd: &clap::Command, flags_intro: &str) -> String {
    let rendered = e.render().to_string();
    let mut line = rendered.lines().next().unwrap_or("error: bad command line").trim_end().to_string();
    match (e.get(ContextKind::ValidValue), e.get(ContextKind::InvalidArg)) {
        (Some(ContextValue::Strings(values)), _) if !values.is_empty() => {
            line += &format!("; allowed: {}", values.join(", "));
        }
        // A flag given without its value (`--n` last): say what the flag takes.
        (_, Some(ContextValue::String(arg))) if e.kind() == ErrorKind::InvalidValue => {
            if let Some(help) = help_of(cmd, arg) {
                line += &format!("; {}: {help}", arg.split(' ').next().unwrap_or(arg));
            }
        }
        // A required flag missing: clap names it on the next line; name it on this one.
        (_, Some(ContextValue::Strings(missing))) if e.kind() == ErrorKind::MissingRequiredArgument => {
            line = format!("{} {}", line.trim_end_matches(':'), missing.join(", "));
        }
        _ => {}
    }
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(similar)) = e.get(ContextKind::SuggestedArg) {
            line += &format!(" (did you mean {similar}?)");
        }
        line += &format!("; {flags_intro}: {}", flags(cmd).join(", "));
    }
    line
}

/// The built command, with `--help` and `--version`.
fn command() -> clap::Command {
    let mut cmd = Args::command();
    cmd.build();
    cmd
}

/// The long flags of `cmd`, in the order of `--help`.
fn flags(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments().filter(|a| !a.is_hide_set()).filter_map(|a| a.get_long()).map(|l| format!("--{l}")).collect()
}

/// The help line of the flag clap shows as `arg` (`--n <N>`).
fn help_of(cmd: &clap::Command, arg: &str) -> Option<String> {
    let long = arg.strip_prefix("--")?.split(' ').next()?;
    let help = cmd.get_arguments().find(|a| a.get_long() == Some(long))?.get_help()?.to_string();
    Some(help.trim_end_matches('.').to_owned())
}

/// The arguments of a subcommand (`reduce WORD …`, `argv[1]` is the word), parsed by `T`; or,
/// when clap answered instead, the exit status after its answer: help or version on `out`
/// (0), an error in one line on `err` (2: clap's first line, with the missing flag, the allowed
/// values or the subcommand's flags added).
pub(super) fn subcommand<T: clap::Parser>(
    word: &str,
    argv: &[std::ffi::OsString],
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> Result<T, u8> {
    let name = format!("reduce {word}");
    let argv = std::iter::once(std::ffi::OsString::from(&name)).chain(argv.iter().skip(2).cloned());
    T::try_parse_from(argv).map_err(|e| {
        if e.use_stderr() {
            // Unbuilt: the subcommand's own flags, without clap's --help and --version.
            let _ = writeln!(err, "{}", line_of(&e, &T::command(), &format!("the flags of `{name}` are")));
            2
        } else {
            let _ = write!(out, "{}", e.render());
            0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_say_what_is_wrong_and_what_is_allowed() {
        assert_eq!(n("7"), Ok(7));
        assert_eq!(n("0"), Err("out of range; allowed: a whole number in 1..=4294967295".into()));
        assert_eq!(n("4294967296"), Err("out of range; allowed: a whole number in 1..=4294967295".into()));
        assert_eq!(n("abc"), Err("not a whole number; allowed: a whole number in 1..=4294967295".into()));
        assert_eq!(n("-5"), Err("negative; allowed: a whole number in 1..=4294967295".into()));
        assert_eq!(
            seed("99999999999999999999").unwrap_err(),
            format!("out of range; allowed: a whole number in 0..={}", u64::MAX)
        );
        assert_eq!(block("48"), Ok(48));
        assert_eq!(log2("31"), Ok(31));
        assert!(log2("32").is_err() && repeat("0").is_err());
    }
}
