//! `reduce check --variant NAME`: one reduction variant at every block it allows and every
//! size the test suite uses, on the emulator ([`crate::check`]).

use std::ffi::OsString;
use std::io::Write;

use clap::Parser;

/// Checks one reduction variant on the CPU emulator at the test suite's shapes: every block it
/// allows × sizes 1, 2, 31, 32, 33, 511, 512, 513, 1000, 1023, 1024, 1025, 4097 and 2^20 + 7,
/// each result against the CPU and under the emulator's memory, race and barrier checks. One
/// line per block; the first failing size in full. What to run after editing a kernel.
#[derive(Parser, Debug)]
#[command(name = "reduce check", version)]
struct CheckArgs {
    /// The reduction variant to check (`reduce --list` lists them).
    #[arg(long)]
    variant: String,
    /// Element type: any the variant runs (`reduce --list --type T` lists them).
    #[arg(long = "type", value_name = "TYPE", default_value = "i32", value_parser = ["i32", "u32", "i64", "u64", "f32", "f64"])]
    elem: String,
    /// What it combines with: sum, min or max.
    #[arg(long, default_value = "sum", value_parser = ["sum", "min", "max"])]
    combine: String,
}

/// Runs `reduce check …`. Returns the exit status: 0 every shape passed, 1 one failed, 2 bad
/// input.
pub(super) fn run(argv: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let args: CheckArgs = match super::parse::subcommand("check", argv, out, err) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut check = || {
        let v = crate::registry::find(&args.variant)?;
        let (elem, op) = (crate::types::Elem::parse(&args.elem)?, crate::types::Op::parse(&args.combine)?);
        crate::with_elem!(elem, T => crate::check::pair::<T>(v, crate::types::own_op(v.op, op), out, err))
    };
    let result = check();
    match result {
        Ok(passed) => u8::from(!passed),
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run_captured as run;

    #[test]
    fn check_passes_a_registered_variant_at_every_block_and_refuses_a_bad_name() {
        let (code, out, _) = run(&["reduce", "check", "--variant", "smem"]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(out.lines().count(), 6, "blocks 32..1024: {out}");
        assert!(out.lines().all(|l| l.ends_with("PASS (14 sizes, 1 to 1048583)")), "{out}");
        let (code, _, err) = run(&["reduce", "check", "--variant", "nope"]);
        assert_eq!((code, err.lines().count()), (2, 1), "{err}");
        assert!(err.starts_with("error: invalid request: no variant `nope`"), "{err}");
    }
}
