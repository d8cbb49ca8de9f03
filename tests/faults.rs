//! The emulator's fault reports, on the deliberately broken kernels of `kernels::broken`.
//!
//! Each report must come quickly and name exactly: the fault kind, the kernel, the block, the
//! thread (or the threads, warp and lanes, as the report words them) and the `file:line` of
//! the fault. The expected lines are not written here: each faulting line of
//! `kernels/src/broken.rs` carries a `[fault-site: NAME]` comment, and [`fault_line`] finds it
//! in the source, so the tests follow the kernels when lines move.

use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, Element, Kernel, KernelArgs, LaunchConfig};
use reduce_scan::emu::{Dim3, EmuError, EmuErrorKind, Emulator};
use reduce_scan::{Error, kernel_ref};

/// The source of the broken kernels, to find the marked lines in.
const BROKEN_RS: &str = include_str!("../kernels/src/broken.rs");
/// The path rustc records for that file in `Location`s (and so in the reports): cargo passes
/// workspace members' sources relative to the workspace root.
const BROKEN_PATH: &str = "kernels/src/broken.rs";
/// How long a report may take.
const PROMPT: Duration = Duration::from_secs(1);

/// The 1-based line of `kernels/src/broken.rs` that carries `[fault-site: NAME]`, which must
/// be on exactly one line.
fn fault_line(name: &str) -> Result<u32, Failed> {
    let marker = format!("[fault-site: {name}]");
    let lines: Vec<u32> =
        BROKEN_RS.lines().zip(1..).filter(|(text, _)| text.contains(&marker)).map(|(_, n)| n).collect();
    match lines[..] {
        [line] => Ok(line),
        _ => Err(format!("`{marker}` must mark exactly one line of {BROKEN_PATH}; it marks lines {lines:?}").into()),
    }
}

/// `kernels/src/broken.rs:LINE` for the line marked `[fault-site: NAME]`, as the reports write it.
fn site(name: &str) -> Result<String, Failed> {
    Ok(format!("{BROKEN_PATH}:{}", fault_line(name)?))
}

/// Every reference to `broken.rs` in `text`, as `path:line`; a reference that also gives a
/// column (`path:line:col`) comes back with it, so that it fails the comparison: the emulator
/// reports no column, and a test that sees one must be taught to check it.
fn sites_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("broken.rs:") {
        let start = text[..at].rfind(|c: char| c.is_whitespace() || c == '(').map_or(0, |i| i + 1);
        let rest = &text[at + "broken.rs:".len()..];
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let mut end = at + "broken.rs:".len() + digits(rest);
        if let Some(col) = text[end..].strip_prefix(':')
            && digits(col) > 0
        {
            end += 1 + digits(col);
        }
        found.push(text[start..end].to_string());
    }
    found
}

/// What the report of one broken kernel must say.
struct Expect {
    kind: EmuErrorKind,
    /// The block that faults, `blockIdx.x`.
    block: u32,
    /// Who faulted, exactly as the report words it (`thread 3`, `threads 16-63`, `warp 0`).
    who: Vec<String>,
    /// The fault sites (marker names), in the order the report gives them.
    sites: &'static [&'static str],
    /// The whole detail line, given the sites as `path:line`; `{*}` in it stands for any text
    /// without spaces (an address, how long the launch ran).
    detail: fn(&[String]) -> String,
}

/// The buffer a broken kernel gets: 128 elements (one per thread of the 2 × 64-thread grid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buffer {
    /// `Backend::alloc`: zero-filled, so initialised.
    Zeroed,
    /// `Backend::alloc_uninit`: allocated, never written.
    Uninit,
    /// Allocated, then freed before the launch (a stale pointer).
    Freed,
}

/// Elements of the buffer every broken kernel gets.
const BUFFER_LEN: usize = 128;

/// Launches a one-pointer kernel on 2 blocks of `block` threads, one block at a time (so that
/// of a kernel that faults in every block, block 0 is the one reported), with a 128-element
/// `buffer`; returns its fault (`kind` is the one expected, for the messages) and how long the
/// launch took to report it.
fn launch<T: Element>(
    kernel: &Kernel<(*mut T,)>,
    kind: EmuErrorKind,
    block: u32,
    budget: Duration,
    buffer: Buffer,
) -> Result<(EmuError, Duration), Failed>
where
    (*mut T,): KernelArgs,
{
    let backend = Backend::with_emulator(Emulator::new().with_workers(1).with_budget(budget));
    let mut out = match buffer {
        Buffer::Zeroed | Buffer::Freed => backend.alloc::<T>(BUFFER_LEN),
        Buffer::Uninit => backend.alloc_uninit::<T>(BUFFER_LEN),
    }
    .map_err(|e| e.to_string())?;
    let ptr = out.as_mut_ptr();
    if buffer == Buffer::Freed {
        drop(out);
    }
    let start = Instant::now();
    let cfg = LaunchConfig { grid: 2, block, shared_bytes: 0 };
    // SAFETY: `ptr` holds one element per thread of the grid (at most 128), which is all these
    // kernels touch in bounds; where it was freed, the emulator refuses the first access.
    let r = unsafe { backend.launch(kernel, cfg, (ptr,)) };
    let took = start.elapsed();
    match r {
        Ok(()) => {
            Err(format!("{kind:?} fault of `{}`: expected the fault, got a launch that succeeded", kernel.name).into())
        }
        Err(Error::Emulator(e)) => Ok((e, took)),
        Err(other) => {
            Err(format!("{kind:?} fault of `{}`: expected an emulator fault, got: {other}", kernel.name).into())
        }
    }
}

/// Whether `text` contains `what` as a whole phrase: not followed by more of a number or a
/// list of them.
fn has_phrase(text: &str, what: &str) -> bool {
    text.match_indices(what).any(|(at, _)| {
        text[at + what.len()..].chars().next().is_none_or(|c| !(c.is_ascii_digit() || c == '-' || c == ','))
    })
}

/// Whether `actual` is `pattern`, where each `{*}` of `pattern` stands for a non-empty run of
/// characters other than spaces.
fn matches(pattern: &str, actual: &str) -> bool {
    let mut parts = pattern.split("{*}");
    let Some(mut rest) = actual.strip_prefix(parts.next().unwrap_or_default()) else { return false };
    for part in parts {
        let word = rest.find(' ').unwrap_or(rest.len());
        let end = if part.is_empty() {
            Some(rest.len())
        } else {
            (1..=word).find(|&i| rest.get(i..).is_some_and(|r| r.starts_with(part)))
        };
        match end {
            Some(i) if i > 0 && i <= word => rest = &rest[i + part.len()..],
            _ => return false,
        }
    }
    rest.is_empty()
}

/// Checks `e`, the fault of `kernel`, against `x`: kind, kernel, block, who, sites, the whole line.
fn check(kernel: &str, e: &EmuError, x: &Expect) -> Result<(), Failed> {
    let text = e.to_string();
    let kind = x.kind;
    let fail = |what: &str, expected: &dyn std::fmt::Debug, actual: &dyn std::fmt::Debug| -> Result<(), Failed> {
        Err(format!(
            "{kind:?} fault of `{kernel}`: wrong {what}: expected {expected:?}, got {actual:?}\n  report: {text}"
        )
        .into())
    };
    if e.kind != kind {
        return fail("fault kind", &kind, &e.kind);
    }
    let kernel_phrase = format!("kernel `{kernel}`");
    if e.kernel != kernel || !text.contains(&kernel_phrase) {
        return fail("kernel", &kernel_phrase, &e.kernel);
    }
    let block = Dim3 { x: x.block, y: 0, z: 0 };
    let block_phrase = format!("block ({},0,0)", x.block);
    if e.block != Some(block) || !text.contains(&block_phrase) {
        return fail("block", &block_phrase, &e.block);
    }
    if let Some(who) = x.who.iter().find(|w| !has_phrase(&e.detail, w)) {
        return fail("thread (this phrase is missing)", who, &e.detail);
    }
    let sites = x.sites.iter().map(|s| site(s)).collect::<Result<Vec<_>, _>>()?;
    let actual_sites = sites_in(&e.detail);
    if actual_sites != sites {
        return fail("file:line", &sites, &actual_sites);
    }
    let detail = (x.detail)(&sites);
    if !matches(&detail, &e.detail) {
        return fail("report", &detail, &e.detail);
    }
    Ok(())
}

/// Launches `kernel` on 2 blocks of `block` threads with the time `budget`, checks its fault
/// against `x`, and that the fault came within `limit`.
fn expect_in<T: Element>(
    kernel: Kernel<(*mut T,)>,
    block: u32,
    budget: Duration,
    limit: Duration,
    x: Expect,
) -> Result<(), Failed>
where
    (*mut T,): KernelArgs,
{
    expect_on(kernel, block, budget, limit, Buffer::Zeroed, x)
}

/// [`expect_in`] on a buffer of the given kind.
fn expect_on<T: Element>(
    kernel: Kernel<(*mut T,)>,
    block: u32,
    budget: Duration,
    limit: Duration,
    buffer: Buffer,
    x: Expect,
) -> Result<(), Failed>
where
    (*mut T,): KernelArgs,
{
    let (e, took) = launch(&kernel, x.kind, block, budget, buffer)?;
    check(kernel.name, &e, &x)?;
    if took > limit {
        let name = kernel.name;
        return Err(
            format!("{:?} fault of `{name}`: reported after {took:?}, expected under {limit:?}: {e}", x.kind).into()
        );
    }
    Ok(())
}

/// [`expect_in`] for a fault that is not a timeout: a 10 s budget, reported within 1 s.
fn expect(kernel: Kernel<(*mut i32,)>, block: u32, x: Expect) -> Result<(), Failed> {
    expect_in(kernel, block, Duration::from_secs(10), PROMPT, x)
}

/// [`expect`] on a buffer of the given kind.
fn expect_with(kernel: Kernel<(*mut i32,)>, block: u32, buffer: Buffer, x: Expect) -> Result<(), Failed> {
    expect_on(kernel, block, Duration::from_secs(10), PROMPT, buffer, x)
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The report of a barrier that threads 0-15 of 64 reach and threads 16-63 exit before.
fn half_block_at(s: &[String]) -> String {
    format!(
        "threads 0-15 at {}: reached by 16 of 64 threads; threads 16-63 exited without reaching it (an early \
         return, or sync_threads inside a branch that not every thread takes)",
        s[0]
    )
}

/// `0, 2, 4, …, 62` (`from` = 0) or `1, 3, …, 63` (`from` = 1): how the report lists them.
fn every_other(from: u32) -> String {
    (from..64).step_by(2).map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}

fn barrier_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::divergent_barrier", || {
            let who = strs(&["threads 0-15", "threads 16-63"]);
            let x = Expect {
                kind: EmuErrorKind::BarrierDivergence,
                block: 0,
                who,
                sites: &["divergent_barrier"],
                detail: half_block_at,
            };
            expect(kernel_ref!(kernels::broken::divergent_barrier(o)), 64, x)
        }),
        Trial::test("faults::early_return_barrier", || {
            let who = strs(&["threads 0-15", "threads 16-63"]);
            let x = Expect {
                kind: EmuErrorKind::BarrierDivergence,
                block: 0,
                who,
                sites: &["early_return_barrier"],
                detail: half_block_at,
            };
            expect(kernel_ref!(kernels::broken::early_return_barrier(o)), 64, x)
        }),
        Trial::test("faults::split_barrier", || {
            let x = Expect {
                kind: EmuErrorKind::BarrierDivergence,
                block: 0,
                who: vec![format!("threads {}", every_other(0)), format!("threads {}", every_other(1))],
                sites: &["split_barrier/even", "split_barrier/odd"],
                detail: |s| {
                    format!(
                        "threads wait at different sync_threads calls (threads {} at {}; threads {} at {}): a barrier \
                         inside code that not all threads of the block take; CUDA requires the whole block at the \
                         same barrier",
                        every_other(0),
                        s[0],
                        every_other(1),
                        s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::split_barrier(o)), 64, x)
        }),
    ]
}

fn warp_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::divergent_shuffle", || {
            let x = Expect {
                kind: EmuErrorKind::WarpDivergence,
                block: 0,
                who: strs(&["warp 0", "lanes 16-31"]),
                sites: &["divergent_shuffle"],
                detail: |s| {
                    format!(
                        "__shfl_down_sync at {} in warp 0 (mask 0xffffffff) waits for lanes 16-31 which exited; every \
                         lane of the mask must reach the same warp operation",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::divergent_shuffle(o)), 64, x)
        }),
        Trial::test("faults::absent_lane_shuffle", || {
            let x = Expect {
                kind: EmuErrorKind::WarpDivergence,
                block: 0,
                who: strs(&["thread 32", "warp 1"]),
                sites: &["absent_lane_shuffle"],
                detail: |s| {
                    format!(
                        "thread 32 calls __shfl_down_sync at {} with mask 0xffffffff, but warp 1 has only 16 lanes",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::absent_lane_shuffle(o)), 48, x)
        }),
        Trial::test("faults::shuffle_without_own_lane", || {
            let x = Expect {
                kind: EmuErrorKind::WarpDivergence,
                block: 0,
                who: strs(&["thread 16", "lane 16"]),
                sites: &["shuffle_without_own_lane"],
                detail: |s| {
                    format!(
                        "thread 16 calls __shfl_down_sync at {} with mask 0x0000ffff, which does not include its own \
                         lane 16",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::shuffle_without_own_lane(o)), 64, x)
        }),
        Trial::test("faults::mismatched_shuffles", || {
            let x = Expect {
                kind: EmuErrorKind::WarpDivergence,
                block: 0,
                who: strs(&["warp 0", "lane 31", "lane 0"]),
                sites: &["mismatched_shuffles/xor", "mismatched_shuffles/down"],
                detail: |s| {
                    format!(
                        "warp 0: lane 31 is at __shfl_xor_sync (mask 0xffffffff) at {}, lane 0 at __shfl_down_sync \
                         (mask 0xffffffff) at {}; the lanes of a mask must execute the same warp operation with the \
                         same mask",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::mismatched_shuffles(o)), 64, x)
        }),
    ]
}

/// One thread's fault: an access out of bounds or misaligned, a trap, a panic.
fn thread_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::shared_out_of_bounds", || {
            let x = Expect {
                kind: EmuErrorKind::SharedOutOfBounds,
                block: 0,
                who: strs(&["thread 31"]),
                sites: &["shared_out_of_bounds"],
                detail: |s| format!("thread 31 accessed shared memory index 32 of an array of 32 at {}", s[0]),
            };
            expect(kernel_ref!(kernels::broken::shared_out_of_bounds(o)), 64, x)
        }),
        Trial::test("faults::misaligned_load", || {
            let x = Expect {
                kind: EmuErrorKind::Misaligned,
                block: 1,
                who: strs(&["thread 5"]),
                sites: &["misaligned_load"],
                detail: |s| {
                    format!(
                        "thread 5 made a 16-byte access at {} to misaligned address {{*}} (a multiple of 16 is \
                         required): byte offset 4 of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::misaligned_load(o)), 64, x)
        }),
        Trial::test("faults::trap", || {
            let x = Expect {
                kind: EmuErrorKind::Trap,
                block: 0,
                who: strs(&["thread 3"]),
                sites: &["traps"],
                detail: |s| format!("thread 3 trapped at {}: found an impossible value", s[0]),
            };
            expect(kernel_ref!(kernels::broken::traps(o)), 64, x)
        }),
        Trial::test("faults::panic", || {
            let x = Expect {
                kind: EmuErrorKind::Panic,
                block: 1,
                who: strs(&["thread 7"]),
                sites: &["panics"],
                detail: |s| {
                    format!("thread 7 panicked: index out of bounds: the len is 4 but the index is 4 at {}", s[0])
                },
            };
            expect(kernel_ref!(kernels::broken::panics(o)), 64, x)
        }),
    ]
}

/// Faults of bulk copies and of the time budget: one thread's report each.
fn bulk_and_budget_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::bulk_copy_of_fewer_bytes_than_expected_hangs", || {
            let x = Expect {
                kind: EmuErrorKind::Timeout,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["bulk_wrong_bytes"],
                detail: |s| {
                    format!(
                        "thread 0 stopped at {} after {{*}}, past the launch's time budget (or another block failed first)",
                        s[0]
                    )
                },
            };
            let budget = Duration::from_millis(200);
            expect_in(kernel_ref!(kernels::broken::bulk_wrong_bytes(o)), 32, budget, budget + PROMPT, x)
        }),
        Trial::test("faults::bulk_copy_misaligned", || {
            let x = Expect {
                kind: EmuErrorKind::Misaligned,
                block: 1,
                who: strs(&["thread 0"]),
                sites: &["bulk_misaligned"],
                detail: |s| {
                    format!(
                        "thread 0 made a 256-byte access at {} to misaligned address {{*}} (a multiple of 16 is \
                         required): byte offset 4 of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::bulk_misaligned(o)), 32, x)
        }),
        Trial::test("faults::spin_past_budget", || {
            let x = Expect {
                kind: EmuErrorKind::Timeout,
                block: 1,
                who: strs(&["thread 5"]),
                sites: &["spin_forever"],
                detail: |s| {
                    format!(
                        "thread 5 stopped at {} after {{*}}, past the launch's time budget (or another block failed first)",
                        s[0]
                    )
                },
            };
            // A second, not 200 ms: on a loaded 16-core GPU host (the whole suite at once) 200 ms
            // ran out before block 1 had started, and the report named no block (H100, c9d5beb).
            let budget = Duration::from_secs(1);
            expect_in(kernel_ref!(kernels::broken::spin_forever(f)), 32, budget, budget + PROMPT, x)
        }),
    ]
}

pub fn trials() -> Vec<Trial> {
    let mut trials = barrier_trials();
    trials.extend(warp_trials());
    trials.extend(thread_trials());
    trials.extend(bulk_and_budget_trials());
    trials.extend(memcheck_trials());
    trials.extend(racecheck_trials());
    trials.extend(cross_block_race_trials());
    trials.extend(initcheck_trials());
    trials.extend(in_flight_trials());
    trials.extend(atomic_trials());
    trials.extend(atomic_slice_and_race_trials());
    trials.extend(launch_and_report_trials());
    trials
}

/// Launches the emulator refuses, how a fault reads when it leaves `main`, and the fault-site
/// markers themselves.
fn launch_and_report_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    trials.push(Trial::test("faults::bad_launch_is_an_error", || {
        let backend = Backend::emulator();
        let mut out = backend.alloc::<i32>(1).map_err(|e| e.to_string())?;
        let k = kernel_ref!(kernels::broken::traps(o));
        let cfg = LaunchConfig { grid: 1, block: 2048, shared_bytes: 0 };
        // SAFETY: the launch is refused before any thread runs.
        match unsafe { backend.launch(&k, cfg, (out.as_mut_ptr(),)) } {
            Err(Error::Emulator(e)) if e.kind == EmuErrorKind::BadLaunch => {
                let expected = "emulator: kernel `traps`: block of 2048 threads; a block holds 1..=1024";
                if e.block.is_none() && e.to_string() == expected {
                    Ok(())
                } else {
                    Err(format!("BadLaunch of `traps`: expected {expected:?} (no block), got {:?}: {e}", e.block)
                        .into())
                }
            }
            other => Err(format!("BadLaunch of `traps`: expected a BadLaunch error, got {other:?}").into()),
        }
    }));
    trials.push(Trial::test("faults::static_and_dynamic_shared_past_48k_need_the_opt_in", || {
        // 48 KiB of dynamic shared memory beside a 128-byte static array: the GPU refuses the
        // launch without cudaFuncSetAttribute (lookback_warpspec_8x12x4 on the H100); so does
        // the emulator, at the array. With the opt-in the kernel runs (into its own planted fault).
        let backend = Backend::emulator();
        let mut out = backend.alloc::<i32>(32).map_err(|e| e.to_string())?;
        let k = kernel_ref!(kernels::broken::shared_out_of_bounds(o));
        let cfg = LaunchConfig { grid: 1, block: 32, shared_bytes: 48 * 1024 };
        // SAFETY: `out` holds one element per thread; the launch stops at the shared array.
        match unsafe { backend.launch(&k, cfg, (out.as_mut_ptr(),)) } {
            Err(Error::Emulator(e))
                if e.kind == EmuErrorKind::BadLaunch && e.to_string().contains("49280 bytes of shared memory") => {}
            other => return Err(format!("48 KiB dynamic + 128 static without the opt-in: got {other:?}").into()),
        }
        backend
            .allow_dynamic_shared(reduce_scan::ptx::entry("shared_out_of_bounds"), 48 * 1024)
            .map_err(|e| e.to_string())?;
        // SAFETY: as above; the kernel's own out-of-bounds write is caught before it lands.
        match unsafe { backend.launch(&k, cfg, (out.as_mut_ptr(),)) } {
            Err(Error::Emulator(e)) if e.kind == EmuErrorKind::SharedOutOfBounds => Ok(()),
            other => Err(format!("after the opt-in: expected the planted SharedOutOfBounds, got {other:?}").into()),
        }
    }));
    trials.push(Trial::test("faults::a_fault_leaving_main_is_one_readable_line", || {
        // What an example (`fn main() -> reduce_scan::MainResult`) prints when a kernel faults: the
        // CLI's one line, with kernel, block, thread and file:line, not the derived Debug form.
        let k = kernel_ref!(kernels::broken::global_store_past_end(o));
        let (e, _) = launch(&k, EmuErrorKind::GlobalOutOfBounds, 64, Duration::from_secs(5), Buffer::Zeroed)?;
        let shown = format!("{:?}", reduce_scan::Fatal::from(Error::Emulator(e)));
        let want = ["kernel `global_store_past_end`", "block (1,0,0)", "thread 63", &site("global_store_past_end")?];
        let missing: Vec<&str> = want.iter().copied().filter(|w| !shown.contains(w)).collect();
        if shown.contains('\n') || shown.contains("EmuError {") || !missing.is_empty() {
            return Err(
                format!("an example's fault should be one line naming {missing:?}; it printed:\n{shown}").into()
            );
        }
        Ok(())
    }));
    trials.push(Trial::test("faults::markers_are_unique", || {
        // Every `[fault-site: NAME]` of broken.rs (bar the one in its docs) marks one line only.
        let names = BROKEN_RS.split("[fault-site: ").skip(1).filter_map(|r| r.split_once(']')).map(|(n, _)| n);
        let mut checked = 0;
        for name in names.filter(|n| *n != "NAME") {
            fault_line(name)?;
            checked += 1;
        }
        if checked < 25 {
            return Err(format!("expected at least 25 fault-site markers in {BROKEN_PATH}, found {checked}").into());
        }
        Ok(())
    }));
    trials
}

/// How a report names the test's buffer (the `{*}` are its address and where `launch`
/// allocated it).
const BUF: &str = "a buffer of 128 × 4-byte elements (512 bytes) at {*} allocated at {*}";

fn memcheck_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::global_store_past_end", || {
            let x = Expect {
                kind: EmuErrorKind::GlobalOutOfBounds,
                block: 1,
                who: strs(&["thread 63"]),
                sites: &["global_store_past_end"],
                detail: |s| {
                    format!(
                        "thread 63 wrote 4 bytes at {}, out of bounds: global address {{*}} is element 128, 0 bytes \
                         past the end of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::global_store_past_end(o)), 64, x)
        }),
        Trial::test("faults::global_prefetch_past_end", || {
            let x = Expect {
                kind: EmuErrorKind::GlobalOutOfBounds,
                block: 1,
                who: strs(&["thread 63"]),
                sites: &["global_prefetch_past_end"],
                detail: |s| {
                    format!(
                        "thread 63 prefetched 4 bytes at {}, out of bounds: global address {{*}} is element 128, 0 \
                         bytes past the end of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::global_prefetch_past_end(o)), 64, x)
        }),
        Trial::test("faults::global_load_before_start", || {
            let x = Expect {
                kind: EmuErrorKind::GlobalOutOfBounds,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["global_load_before_start"],
                detail: |s| {
                    format!(
                        "thread 0 read 4 bytes at {}, out of bounds: global address {{*}} is 4 bytes before the \
                         start of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::global_load_before_start(o)), 64, x)
        }),
        Trial::test("faults::use_after_free", || {
            let x = Expect {
                kind: EmuErrorKind::UseAfterFree,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["store_each"],
                detail: |s| {
                    format!(
                        "thread 0 wrote 4 bytes at {} after they were freed: global address {{*}} is element 0 of \
                         {BUF}, and freed before this launch",
                        s[0]
                    )
                },
            };
            expect_with(kernel_ref!(kernels::broken::store_each(o)), 64, Buffer::Freed, x)
        }),
    ]
}

/// The text every in-block race report ends with.
const UNORDERED: &str = "in the same barrier interval with nothing ordering them (sync_threads, CUDA's \
                         __syncthreads, orders the block; sync_warp, __syncwarp, or a .sync warp operation orders the \
                         lanes of its mask)";

fn racecheck_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::missing_barrier_shared_tree", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 0,
                who: strs(&["thread 0", "thread 1"]),
                sites: &["missing_barrier_shared_tree", "missing_barrier_shared_tree"],
                detail: |s| {
                    format!(
                        "write after read race on shared array `TREE` (64 × 4-byte elements, 256 bytes) at element 1: \
                         thread 0 read it at {}, then thread 1 wrote it at {}, {UNORDERED}",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::missing_barrier_shared_tree(o)), 64, x)
        }),
        Trial::test("faults::last_warp_unsynced", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 0,
                who: strs(&["thread 0", "thread 1"]),
                sites: &["last_warp/1", "last_warp/32"],
                detail: |s| {
                    format!(
                        "write after read race on shared array `LAST_WARP` (64 × 4-byte elements, 256 bytes) at \
                         element 1: thread 0 read it at {}, then thread 1 wrote it at {}, {UNORDERED}",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::last_warp_unsynced(o)), 64, x)
        }),
        Trial::test("faults::missing_barrier_global_tree", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 0,
                who: strs(&["thread 0", "thread 1"]),
                sites: &["missing_barrier_global_tree", "missing_barrier_global_tree"],
                detail: |s| {
                    format!(
                        "write after read race on global memory at {{*}} (element 1 of {BUF}): thread 0 read it at \
                         {}, then thread 1 wrote it at {}, {UNORDERED}",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::missing_barrier_global_tree(o)), 64, x)
        }),
    ]
}

/// Races between blocks: global memory written by one block and read by another in the same
/// launch with no release and acquire between them.
fn cross_block_race_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::cross_block_race", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 1,
                who: strs(&["thread 0 of block 0", "thread 0 of this block"]),
                sites: &["cross_block_race/write", "cross_block_race/read"],
                detail: |s| {
                    format!(
                        "read after write race between blocks on global memory at {{*}} (element 0 of {BUF}): \
                         thread 0 of block 0 wrote it at {}, then thread 0 of this block read it at {}, in the same \
                         launch with no release and acquire between them (thread_fence, CUDA's __threadfence, or a \
                         store_release before the writer's atomic, and an atomic or a load_acquire that the reader's \
                         block observed)",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::cross_block_race(o)), 64, x)
        }),
        Trial::test("faults::unfenced_publish", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 1,
                who: strs(&["thread 0 of block 0", "thread 0 of this block"]),
                sites: &["unfenced_publish/write", "unfenced_publish/read"],
                detail: |s| {
                    format!(
                        "read after write race between blocks on global memory at {{*}} (element 1 of {BUF}): \
                         thread 0 of block 0 wrote it at {}, then thread 0 of this block read it at {}, in the same \
                         launch with no release and acquire between them (thread_fence, CUDA's __threadfence, or a \
                         store_release before the writer's atomic, and an atomic or a load_acquire that the reader's \
                         block observed)",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::unfenced_publish(o)), 64, x)
        }),
    ]
}

fn initcheck_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::uninit_shared_read", || {
            let x = Expect {
                kind: EmuErrorKind::Uninitialized,
                block: 0,
                who: strs(&["thread 32"]),
                sites: &["uninit_shared_read"],
                detail: |s| {
                    format!(
                        "thread 32 read 4 bytes at {} that no thread of this block had written: shared array \
                         `HALF_FILLED` (64 × 4-byte elements, 256 bytes) at element 32",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::uninit_shared_read(o)), 64, x)
        }),
        Trial::test("faults::uninit_global_read", || {
            let x = Expect {
                kind: EmuErrorKind::Uninitialized,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["increment_each"],
                detail: |s| {
                    format!(
                        "thread 0 read 4 bytes at {} that nothing had written: global address {{*}} is element 0 \
                         of {BUF}, without being filled, and no host copy or kernel store wrote it since",
                        s[0]
                    )
                },
            };
            expect_with(kernel_ref!(kernels::broken::increment_each(o)), 64, Buffer::Uninit, x)
        }),
    ]
}

/// The copies' missing waits: an access to shared bytes an asynchronous copy has not finished
/// with (`runtime/src/emu/copies.rs`).
fn in_flight_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::cp_async_without_wait", || {
            let x = Expect {
                kind: EmuErrorKind::InFlight,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["cp_async_without_wait", "cp_async_issued"],
                detail: |s| {
                    format!(
                        "thread 0 read 4 bytes at {} that an asynchronous copy has not written yet (a missing wait): \
                         shared array `STAGED` (128 × 4-byte elements, 512 bytes) at element 0 is the destination of \
                         the cp.async that thread 0 issued at {}, which lands only at that thread's \
                         cp.async.wait_group covering its group (closed by cp.async.commit_group)",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::cp_async_without_wait(o)), 64, x)
        }),
        Trial::test("faults::bulk_copy_without_wait", || {
            let x = Expect {
                kind: EmuErrorKind::InFlight,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["bulk_without_wait", "bulk_issued"],
                detail: |s| {
                    format!(
                        "thread 0 read 4 bytes at {} that an asynchronous copy has not written yet (a missing wait): \
                         shared array `TILE` (64 × 4-byte elements, 256 bytes) at element 0 is the destination of the \
                         cp.async.bulk that thread 0 issued at {}, which lands only at a wait on its mbarrier \
                         (mbarrier.try_wait.parity)",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::bulk_without_wait(o)), 64, x)
        }),
        Trial::test("faults::bulk_store_overwritten_before_its_read", || {
            let x = Expect {
                kind: EmuErrorKind::InFlight,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["bulk_store_overwritten", "bulk_store_issued"],
                detail: |s| {
                    format!(
                        "thread 0 wrote 4 bytes at {} that a bulk store is still reading (a missing wait): shared \
                         array `OUTGOING` (64 × 4-byte elements, 256 bytes) at element 0 is the source of the bulk \
                         store (cp.async.bulk, shared to global) that thread 0 issued at {}, which reads it only by \
                         that thread's cp.async.bulk.wait_group.read",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::bulk_store_overwritten(o)), 64, x)
        }),
    ]
}

/// The atomics' faults (issue #59): out of bounds (raw global, raw shared), misaligned, each one
/// line naming the atomic, the address and the buffer or array.
fn atomic_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::atomic_past_end", || {
            let x = Expect {
                kind: EmuErrorKind::GlobalOutOfBounds,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["atomic_past_end"],
                detail: |s| {
                    format!(
                        "thread 0 made an atomicAdd of 4 bytes at {}, out of bounds: global address {{*}} is element \
                         128, 0 bytes past the end of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::atomic_past_end(o)), 64, x)
        }),
        Trial::test("faults::atomic_misaligned", || {
            let x = Expect {
                kind: EmuErrorKind::Misaligned,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["atomic_misaligned"],
                detail: |s| {
                    format!(
                        "thread 0 made a 4-byte atomicAdd at {} to misaligned address {{*}} (a multiple of 4 is \
                         required): byte offset 2 of {BUF}",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::atomic_misaligned(o)), 64, x)
        }),
        Trial::test("faults::shared_atomic_past_end", || {
            let x = Expect {
                kind: EmuErrorKind::SharedOutOfBounds,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["shared_atomic_past_end"],
                detail: |s| {
                    format!(
                        "thread 0 made an atomicAdd at index 64 of an array of 64 elements at {}, out of bounds: \
                         shared address {{*}} is shared array `ATOMIC_COUNTS` (64 × 4-byte elements, 256 bytes) at \
                         element 64",
                        s[0]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::shared_atomic_past_end(o)), 64, x)
        }),
    ]
}

/// The checked form's fault, and a plain store racing an atomic (shared, global).
fn atomic_slice_and_race_trials() -> Vec<Trial> {
    vec![
        Trial::test("faults::atomic_slice_past_end", || {
            let x = Expect {
                kind: EmuErrorKind::GlobalOutOfBounds,
                block: 0,
                who: strs(&["thread 0"]),
                sites: &["atomic_slice_past_end"],
                detail: |s| {
                    format!(
                        "thread 0 made an atomicMax at index 128 of a buffer of 128 elements at {}, out of bounds: \
                         global address {{*}} is element 128, 0 bytes past the end of {BUF}",
                        s[0]
                    )
                },
            };
            // The kernel takes an `AtomicSlice`, not a pointer: launched by its handle.
            let backend = Backend::with_emulator(Emulator::new().with_workers(1));
            let mut out = backend.alloc::<i32>(BUFFER_LEN).map_err(|e| e.to_string())?;
            let k = Kernel::of(&reduce_scan::ptx::KERNELS, kernels::broken::atomic_slice_past_end::KERNEL);
            let cfg = LaunchConfig { grid: 2, block: 64, shared_bytes: 0 };
            // SAFETY: the buffer holds 128 elements; the one past them is refused before it is touched.
            match unsafe { backend.launch(&k, cfg, (out.atomic(),)) } {
                Err(Error::Emulator(e)) => check(k.name, &e, &x),
                other => Err(format!("atomic_slice_past_end: expected its fault, got {other:?}").into()),
            }
        }),
        Trial::test("faults::store_races_shared_atomic", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 0,
                who: strs(&["thread 0", "thread 1"]),
                sites: &["store_races_shared_atomic/store", "store_races_shared_atomic/atomic"],
                detail: |s| {
                    format!(
                        "write after write race on shared array `RACED_WORD` (1 × 4-byte elements, 4 bytes) at element \
                         0: thread 0 wrote it at {}, then thread 1 atomically updated it at {}, {UNORDERED}",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::store_races_shared_atomic(o)), 64, x)
        }),
        Trial::test("faults::store_races_global_atomic", || {
            let x = Expect {
                kind: EmuErrorKind::Race,
                block: 0,
                who: strs(&["thread 0", "thread 1"]),
                sites: &["store_races_global_atomic/store", "store_races_global_atomic/atomic"],
                detail: |s| {
                    format!(
                        "write after write race on global memory at {{*}} (element 0 of {BUF}): thread 0 wrote it \
                         at {}, then thread 1 atomically updated it at {}, {UNORDERED}",
                        s[0], s[1]
                    )
                },
            };
            expect(kernel_ref!(kernels::broken::store_races_global_atomic(o)), 64, x)
        }),
    ]
}
