//! The PTX that the library's `host/build.rs` embeds: every kernel of both registries (reductions, their
//! typed instantiations `{variant}__{type}_{op}`, and scans) and the benches' check kernels
//! (`reduce_scan::verify::CHECK_KERNELS`) is an entry point, and every build assembles with NVIDIA's `ptxas` for its own and
//! every newer architecture with no local memory at all: no register spills and a 0-byte
//! stack frame in every kernel (a per-thread array indexed at run time, or too many live
//! values, would put data in slow local memory).
//!
//! `ptxas` comes from `$PTXAS`, else `.tools/ptxas/ptxas` (where `./x test` installs the
//! pinned CUDA 12.9 copy from the `nvidia-cuda-nvcc-cu12` wheel), else the `PATH`. Without
//! one the ptxas tests fail and say how to get it: CI always has it. A ptxas that has no
//! target for an architecture (CUDA 13 dropped sm_70) marks that check ignored, with the
//! reason, rather than passing it.
//!
//! ptxas reads each module in pieces, and a piece's report is kept until its text changes
//! ([`assemble`]; docs/building.md, "The harness cache, and files on a shared machine").

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use libtest_mimic::{Completion, Failed, Trial};
use reduce_scan::ptx::{ARCHES, entries};
use reduce_scan::registry::SharedMem;
use reduce_scan::{registry, scan};

mod assemble;

fn ptxas() -> Result<PathBuf, Failed> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Ok(PathBuf::from(p));
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/ptxas/ptxas");
    if local.is_file() {
        return Ok(local);
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Ok(PathBuf::from("ptxas"));
    }
    Err("ptxas not found: set PTXAS, put ptxas on the PATH, or run `./x test`, which installs it in .tools/".into())
}

/// `ptxas -v` of the `arch` PTX for `target`: its log (stderr), or `None` where this ptxas
/// has no `target`; an error where ptxas rejects the PTX. Each (arch, target) is assembled once
/// per test run, whichever trial asks first (`ptx::shared::sm_XX` and `ptx::ptxas::sm_XX_for_sm_XX`
/// read the same log; a whole assembly takes 12 to 20 s on two cores), the other waits for it.
fn ptxas_log(arch: &'static str, target: &'static str, ptx: &str) -> Result<Option<String>, Failed> {
    type Logs = std::sync::Mutex<
        HashMap<(&'static str, &'static str), std::sync::Arc<std::sync::OnceLock<Result<Option<String>, String>>>>,
    >;
    static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
    let cell = LOGS.get_or_init(Default::default).lock().unwrap().entry((arch, target)).or_default().clone();
    cell.get_or_init(|| assemble(arch, target, ptx).map_err(|e| e.message().map_or_else(String::new, str::to_string)))
        .clone()
        .map_err(Failed::from)
}

/// [`ptxas_log`], run: piece by piece, with the pieces' logs kept from one run to the next
/// ([`assemble`]).
fn assemble(arch: &str, target: &str, ptx: &str) -> Result<Option<String>, Failed> {
    assemble::assemble(&ptxas()?, arch, target, ptx)
}

/// Static shared memory per function as `ptxas -v` reports it ("Used 16 registers, 128 bytes
/// smem, …"; no "smem" means 0 bytes), from [`assemble::by_function`].
fn static_smem(log: &str) -> HashMap<String, u32> {
    let smem = |lines: &Vec<String>| -> u32 {
        let used = lines.iter().filter_map(|l| l.split("Used ").nth(1));
        let bytes = used.flat_map(|u| u.split(',')).find_map(|part| part.trim().strip_suffix(" bytes smem"));
        bytes.map_or(0, |b| b.trim().parse().unwrap_or(u32::MAX))
    };
    assemble::by_function(log).iter().map(|(f, lines)| (f.clone(), smem(lines))).collect()
}

/// The static shared bytes the scan registry's kernels declare, from the kernels crate's
/// constants (a scan plan names its kernels; their shared arrays are fixed at compile time).
fn scan_static_shared(v: &scan::ScanVariant, symbol: &str) -> Option<u32> {
    match (v.plan, symbol) {
        (scan::ScanPlan::Fenwick { .. }, "bit_build") => Some(kernels::scan::BIT_BUILD_SHARED_BYTES),
        (scan::ScanPlan::Fenwick { .. }, "bit_query") => Some(kernels::scan::BIT_QUERY_SHARED_BYTES),
        (scan::ScanPlan::ReduceThenScan { .. }, "blelloch_block") => Some(kernels::scan::BLELLOCH_BLOCK_SHARED_BYTES),
        (scan::ScanPlan::ReduceThenScan { .. }, "blelloch_reduce") => Some(kernels::scan::BLELLOCH_REDUCE_SHARED_BYTES),
        (scan::ScanPlan::ReduceThenScan { .. }, "blelloch_unpadded_block" | "blelloch_unpadded_reduce") => {
            Some(kernels::scan::BLELLOCH_UNPADDED_SHARED_BYTES)
        }
        // lookback_bulk's tile and control words are lookback's, and then one mbarrier, which
        // ptxas rounds up to the array's 16-byte alignment.
        (scan::ScanPlan::DecoupledLookback { threads, items, .. }, s) if s.starts_with("lookback_bulk") => {
            Some(kernels::scan::lookback_shared_bytes(threads, items) + 16)
        }
        (scan::ScanPlan::DecoupledLookback { threads, items, .. }, _) => {
            Some(kernels::scan::lookback_shared_bytes(threads, items))
        }
        // The tiles are in dynamic shared memory; the static bytes are one mbarrier per stage,
        // which ptxas rounds up to the array's 16-byte alignment.
        (scan::ScanPlan::PersistentLookback { stages, .. }, _) => Some((8 * stages).next_multiple_of(16)),
        // The ring is in dynamic shared memory; the static bytes are the barriers and the
        // control words (and a hand-off word per stage where the stage is given back early).
        (scan::ScanPlan::WarpSpecialized { warps, stages, .. }, s) => {
            Some(kernels::scan::warpspec_static_bytes_with(warps, stages, s.contains("_early_empty")))
        }
        _ => None,
    }
}

/// Every registered kernel's static shared memory, as ptxas reports it for its own
/// architecture, equals what the registry declares: `SharedMem::Static { bytes }` for a
/// reduction (0 for none and for dynamic shared memory, which ptxas does not count), and
/// the kernels crate's constants for a scan.
fn check_shared(arch: &'static str, min_cc: (u32, u32), ptx: &str) -> Result<Completion, Failed> {
    let Some(log) = ptxas_log(arch, arch, ptx)? else {
        return Ok(Completion::ignored_with(format!("ptxas has no {arch} target")));
    };
    let smem = static_smem(&log);
    let mut expected = Vec::new();
    for v in in_the_module(min_cc) {
        let bytes = match v.shared {
            SharedMem::Static { bytes } => bytes,
            SharedMem::None | SharedMem::DynamicPerThread(_) => 0,
        };
        expected.extend(v.symbols().into_iter().map(|s| (v.name, s, Some(bytes))));
    }
    for v in scan::all().filter(|v| v.min_cc <= min_cc) {
        expected.extend(v.symbols().into_iter().map(|s| (v.name, s, scan_static_shared(v, s))));
    }
    // The other rows of the generic variants: one `T` per warp slot (128 or 256 bytes).
    for (name, symbol, bytes) in other_rows(min_cc) {
        expected.push((name, symbol, Some(bytes)));
    }
    // The benches' check kernels use no shared memory.
    expected.extend(reduce_scan::verify::CHECK_KERNELS.iter().map(|&s| ("check", s, Some(0))));
    let mut wrong = Vec::new();
    for (variant, symbol, want) in expected {
        let got = smem.get(symbol).copied();
        match (want, got) {
            (_, None) => wrong.push(format!("variant {variant}, symbol {symbol}: ptxas reported no such kernel")),
            (None, Some(got)) => wrong.push(format!(
                "variant {variant}, symbol {symbol}: no expected shared size (tests/ptx.rs, scan_static_shared); ptxas: {got} bytes"
            )),
            (Some(want), Some(got)) if want != got => wrong.push(format!(
                "variant {variant}, symbol {symbol}: the registry says {want} bytes of static shared memory, ptxas reports {got}"
            )),
            _ => {}
        }
    }
    if wrong.is_empty() { Ok(Completion::Completed) } else { Err(wrong.join("\n").into()) }
}

/// The reduction variants whose kernels are in the PTX module of an arch of compute
/// capability `min_cc`: all that run there, but the nested ones (`Finish::Nested`). Those
/// launch from the device, so their PTX needs the device runtime (libcudadevrt) at link time
/// and cannot be in the module every other kernel loads from: they have a module of their own
/// (`check_nested_module`).
fn in_the_module(min_cc: (u32, u32)) -> impl Iterator<Item = &'static registry::Variant> {
    registry::all().filter(move |v| v.min_cc <= min_cc && !matches!(v.finish, registry::Finish::Nested(_)))
}

/// The nested kernels' own module (`reduce_scan::ptx::NESTED_PTX`): its entries are exactly
/// the nested variants' kernels, no other module calls the device runtime, and NVIDIA's
/// `ptxas` assembles it as relocatable code (`-c`) but not alone: it needs `libcudadevrt`.
fn check_nested_module() -> Result<Completion, Failed> {
    use reduce_scan::ptx::NESTED_PTX;
    let mut want: Vec<&str> =
        registry::all().filter(|v| matches!(v.finish, registry::Finish::Nested(_))).flat_map(|v| v.symbols()).collect();
    let mut have = entries(NESTED_PTX);
    want.sort_unstable();
    have.sort_unstable();
    if have != want {
        return Err(
            format!("the nested module's entries are {have:?}; the nested variants' kernels are {want:?}").into()
        );
    }
    for (arch, _, ptx) in ARCHES {
        if ptx.contains("cudaCDP2") {
            return Err(format!("the {arch} module calls the device runtime: it would not load without linking").into());
        }
    }
    let ptxas = ptxas()?;
    let dir = crate::common::private_dir("reduce-nested-")?;
    let file = dir.path().join("nested.ptx");
    std::fs::write(&file, NESTED_PTX).map_err(|e| e.to_string())?;
    let run = |relocatable: bool| {
        let mut cmd = Command::new(&ptxas);
        cmd.args(["-arch=sm_90", "-o", "/dev/null"]);
        if relocatable {
            cmd.arg("-c");
        }
        cmd.arg(&file).output().map_err(|e| format!("running {}: {e}", ptxas.display()))
    };
    let (relocatable, alone) = (run(true)?, run(false)?);
    drop(dir);
    if !relocatable.status.success() {
        return Err(
            format!("ptxas -c rejects the nested module:\n{}", String::from_utf8_lossy(&relocatable.stderr)).into()
        );
    }
    let log = String::from_utf8_lossy(&alone.stderr);
    if alone.status.success() || !log.contains("Unresolved extern function") {
        return Err(format!("ptxas without -c should miss the device runtime; it said:\n{log}").into());
    }
    Ok(Completion::Completed)
}

/// The rows of the generic variants besides their own (`{name}__{type}_{op}`) that run on
/// compute capability `min_cc`, and the kernels of the library's operations (`reduce_scan::ops`,
/// every compute capability): variant (or operation), kernel, static shared bytes.
fn other_rows(min_cc: (u32, u32)) -> Vec<(&'static str, &'static str, u32)> {
    let mut rows: Vec<_> = registry::instances()
        .filter(|&(v, elem, op)| v.is_generic() && (elem, op) != (v.elem, v.op) && v.min_cc <= min_cc)
        .map(|(v, elem, op)| {
            reduce_scan::with_elem!(elem, T => {
                let row = v.instance::<T>(op).expect("a registered pair").row;
                (v.name, row.finish.symbols()[0], row.shared.bytes(32))
            })
        })
        .collect();
    for op in reduce_scan::ops::Operation::ALL {
        for elem in reduce_scan::types::Elem::ALL {
            let symbol = op.symbol(elem);
            if !rows.iter().any(|(_, s, _)| *s == symbol) {
                rows.push((op.name(), symbol, op.shared_bytes(elem)));
            }
        }
    }
    rows
}

pub fn trials() -> Vec<Trial> {
    let mut out = vec![Trial::ignorable_test("ptx::nested_module", check_nested_module)];
    // ptxas reads each module in pieces (`assemble`): the pieces hold every entry once and all
    // the rest, and ptxas reports the same of each function in them as in one module (the
    // first 24 entries of the sm_80 module, assembled both ways: about a second).
    out.push(Trial::test("ptx::pieces_report_what_the_module_does", || {
        let (_, _, ptx) = ARCHES.iter().find(|(arch, _, _)| *arch == "sm_80").ok_or("no sm_80 module")?;
        assemble::check_pieces_report_the_same(&ptxas()?, "sm_80", ptx, 24)
    }));
    for (arch, min_cc, ptx) in ARCHES {
        out.push(Trial::test(format!("ptx::pieces::{arch}"), move || assemble::check_pieces(ptx)));
        out.push(Trial::test(format!("ptx::entries::{arch}"), move || {
            let have = entries(ptx);
            let reductions = in_the_module(min_cc).map(|v| (v.name, v.symbols()));
            let scans = scan::all().filter(|v| v.min_cc <= min_cc).map(|v| (v.name, v.symbols()));
            let typed = other_rows(min_cc).into_iter().map(|(name, symbol, _)| (name, vec![symbol]));
            // The benches' check kernels (`reduce_scan::verify`), launched outside any registry.
            let checks = std::iter::once(("check", reduce_scan::verify::CHECK_KERNELS.to_vec()));
            for (name, symbols) in reductions.chain(scans).chain(typed).chain(checks) {
                for s in symbols {
                    if !have.contains(&s) {
                        return Err(format!("variant {name}: kernel `{s}` is not an .entry of the {arch} PTX").into());
                    }
                }
            }
            Ok(())
        }));
        out.push(Trial::ignorable_test(format!("ptx::shared::{arch}"), move || check_shared(arch, min_cc, ptx)));
        for (target, target_cc, _) in ARCHES.iter().filter(|(_, cc, _)| *cc >= min_cc) {
            let target = *target;
            let _ = target_cc;
            out.push(Trial::ignorable_test(format!("ptx::ptxas::{arch}_for_{target}"), move || {
                let Some(log) = ptxas_log(arch, target, ptx)? else {
                    return Ok(Completion::ignored_with(format!("ptxas has no {target} target")));
                };
                // No kernel may use local memory: no spills, no stack frame.
                let report = assemble::by_function(&log);
                for (function, lines) in &report {
                    for line in lines.iter().filter(|l| l.contains("stack frame")) {
                        let zero = |what: &str| line.split(',').any(|part| part.trim() == format!("0 bytes {what}"));
                        if !zero("stack frame") || !zero("spill stores") {
                            return Err(format!("{function} uses local memory for {target}: {line}").into());
                        }
                    }
                }
                let framed = |e: &&str| report.get(*e).is_some_and(|l| l.iter().any(|l| l.contains("stack frame")));
                let missed: Vec<&str> = entries(ptx).into_iter().filter(|e| !framed(e)).collect();
                if !missed.is_empty() {
                    return Err(format!("ptxas reported no stack frame for {}", missed.join(", ")).into());
                }
                Ok(Completion::Completed)
            }));
        }
    }
    out
}
