//! The integration tests: one binary, one module per topic.
//!
//! | module | what it checks | needs |
//! |---|---|---|
//! | [`ptx`] | every registered kernel is an `.entry` of the PTX; the PTX assembles with ptxas (in 32 pieces, each piece's report kept under `target/tmp/ptxas-logs/` until its text changes; the pieces report what the whole module does); static shared memory as the registry says; no local memory | `ptxas` (`./x test` installs it) |
//! | [`docs`] | every registered kernel's doc has the sections of `docs/kernel-doc-template.md` | nothing |
//! | [`emulator`] | every variant × every allowed block × sizes that hurt, on the CPU emulator | nothing |
//! | [`faults`] | the emulator reports broken kernels (divergent barrier, bad shared index, …) | nothing |
//! | [`atomics`] | every CUDA atomic on shared and global words by many threads of several blocks (a 256-bin histogram at n = 1 … 2^16 + 7 × blocks 32, 256, 1024; every operation × type), against the CPU, on the emulator and the GPU; the atomics' counters against a hand count | nothing (GPU part: a GPU) |
//! | [`source`] | no raw pointer code in `kernels/src` outside the device layer (every memory access is one the emulator checks); the kit and the library depend on none of the command line's crates | nothing |
//! | [`imports`] | no circle of imports between the files of `host/src`, nor of `cli/src` | nothing |
//! | [`cli`] | the `reduce` command line: output, formats, exit status; every row of `docs/bad-input.md` (bad input: one line, exit 2) | nothing |
//! | [`gpu`] | the same matrix as `emulator`, plus 2^24, on the GPU | a CUDA GPU |
//! | [`alignment`] | modern variants and `reduce_scan::sum` on sub-ranges at element offsets 0..=7 | nothing (GPU part: a GPU) |
//! | [`api`] | `Reducer<T, Op>` and `Scanner<T, Op>` for every type × operator: whole buffers, sub-ranges (odd start and length, aligned start, short, empty), `enqueue` + `result`/`wait`; GPU: one size per row of `SUM_PLAN` | nothing (GPU part: a GPU) |
//! | [`library`] | `Reducer`/`Scanner` reused and interleaved, 10,000 checked launches, a refused launch, streams, devices; GPU: n = 2^31+5 and 2^32−1 | nothing (GPU part: a GPU) |
//! | [`scan`] | every scan variant × inclusive/exclusive × sizes, look-back probes, errors, `--op scan`, scan PTX; GPU up to 2^30 | nothing (GPU part: a GPU; PTX part: ptxas) |
//! | [`types`] | every generic variant × i32/u32/i64/u64/f32/f64 × sum/min/max × blocks 32, 256, 1024 × sizes that hurt (random, extremes, all-equal, cancelling input); float sums within the stated bound; NaN and ±0.0 for min/max; GPU: plus 2^24 | nothing (GPU part: a GPU) |
//! | [`ops`] | the library's operations beyond the whole-buffer reduction (`reduce_scan::ops`): argmin, argmax, dot, sum of squares, norm × every type × blocks 32, 256, 1024 × sizes that hurt, on random input, ties, extremes, cancelling floats; NaN (first, middle, last, two) and ±0.0 ties; sub-ranges; the dot kernel on misaligned inputs; errors; GPU: plus 2^20 + 7 and 2^24 | nothing (GPU part: a GPU) |
//! | [`histogram`] | `Histogram<S>` for u8, u16, u32, i32, f32 × 1 … 4096 bins × sizes × blocks 32, 256, 1024; ranges at every start modulo 16 bytes; 90 % in one bin; the rules' edges (bounds, NaN, ±∞, whole u32/i32 ranges); bincount; every bad request's message; against the CPU by the kernel's own rule | nothing (GPU part: a GPU) |
//! | [`select`] | `Select<T>` for i32, u32, f32, u8, u16 × if, flagged, unique, partition by predicate and by flags × sizes around a warp, a tile and many tiles × predicates keeping half, 1 %, none, all; ranges at misaligned starts; nothing written past what may be; NaN and ±0.0 for unique; run-length encoding (runs of mean 1, 4, 5000) the same way, values and lengths; every bad request's message; against the CPU, bit for bit | nothing (GPU part: a GPU) |
//! | [`segmented`] | segmented reductions over CSR offsets and matrix rows: every type × sum, min, max, argmin, argmax × blocks 32, 256, 1024 × layouts that reach each plan (a warp per segment, a block per segment, device-wide), power-law lengths, empty segments (the largest layout, 300 power-law segments, at block 256 only); random input, ties, NaN and ±0.0; bad offsets; GPU: plus the shapes (10 … 10^6 segments over 2^26, equal and power-law; 4096 × 4096, 65536 × 256) | nothing (GPU part: a GPU) |
//! | [`typed_scan`] | the typed look-back scan: every type × operator × inclusive/exclusive × sizes that hurt (integers and min/max exact, float sums within the stated bound), NaN and ±0.0, the 64-bit multi-window look-back, `--op scan --type … --combine …` and its errors, the PTX entries; GPU: plus 2^20 + 7 and 2^24 | nothing (GPU part: a GPU) |
//! | [`bench_checks`] | the benches' per-launch checks: the check kernels (`kernels::check`) count mismatching words and floats outside their bound, per launch, on real scan outputs; the typed reductions' per-launch result slots | nothing |
//! | [`driver`] | a binary starts with no NVIDIA driver and no library path and runs on the emulator; a driver without a device gives one line; no executable needs libcuda (its ELF) | nothing (a C compiler builds the stand-in drivers) |
//! | [`shared_host`] | issue 41: a harness cache another user could have written to (a folder or program writable by others, or theirs; the old cache in the shared temp folder) is refused in one line, exit 2, or never looked at; `reduce` runs as a child process with its own environment | nothing |
//! | [`scripts`] | every shell script (`scripts/`, `x`, `.ci/run`) parses with `bash -n`; `scripts/gpu/copy_bound.sh` refuses a bad `ROUNDS` or `PROGRAMS` in one line, exit 2; `copy_bound_summary.py` reprints the committed runs' `summary.txt` | bash, python3 |
//! | [`twins`] | the CUDA C twin of every classic kernel (`cub/classic.cu`) at 2^20 + 7, against the CPU | a CUDA GPU and nvcc |
//!
//! The GPU tests are marked *ignored* when no GPU can be used, and a banner line says
//! why; `--include-ignored` runs them anyway (they then fail with that reason). On a GPU
//! host they run like any other test.

mod alignment;
mod api;
mod atomics;
mod bench_checks;
mod check;
mod cli;
mod common;
mod docs;
mod driver;
mod emulator;
mod faults;
mod gpu;
mod histogram;
mod imports;
mod library;
mod ops;
mod ptx;
mod scan;
mod scripts;
mod segmented;
mod select;
mod shared_host;
mod source;
mod twins;
mod typed_scan;
mod types;

fn main() {
    // This executable run again by a `driver` test, as a program that does one job.
    if let Some(status) = driver::child() {
        std::process::exit(status);
    }
    // `shared_host` runs the `reduce` command line as a child process with an environment of
    // its own: this binary, with `AS_REDUCE` set, is that command line.
    if std::env::var_os(shared_host::AS_REDUCE).is_some() {
        std::process::exit(i32::from(reduce_scan_cli::cli::main()));
    }
    let args = libtest_mimic::Arguments::from_args();
    let gpu = reduce_scan::Backend::gpu().err().map(|e| e.to_string());
    if let Some(why) = &gpu {
        println!(
            "GPU tests: ignored ({why}); run them on a GPU host: `cargo test --release -- --include-ignored` there, or, for one without Rust, build them here with `cargo test --release --workspace --no-run` and run each executable under target/release/deps/ there with --include-ignored (docs/building.md: \"Running on a GPU host that has no Rust toolchain\")"
        );
    }
    let mut trials = Vec::new();
    trials.extend(ptx::trials());
    // The modules with the longest single trials first (scan's deepest levels, 9.5 s on one
    // core of the 2-core machine; select's three, 5.8 s each), so that the two test threads end
    // together on short trials rather than one of them alone on a long one (#60).
    trials.extend(scan::trials(gpu.is_none()));
    trials.extend(select::trials(gpu.is_none()));
    trials.extend(docs::trials());
    trials.extend(emulator::trials());
    trials.extend(faults::trials());
    trials.extend(atomics::trials(gpu.is_none()));
    trials.extend(check::trials());
    trials.extend(source::trials());
    trials.extend(imports::trials());
    trials.extend(cli::trials());
    trials.extend(shared_host::trials());
    trials.extend(scripts::trials());
    trials.extend(gpu::trials(gpu.is_none()));
    trials.extend(alignment::trials(gpu.is_none()));
    trials.extend(library::trials(gpu.is_none()));
    trials.extend(api::trials(gpu.is_none()));
    trials.extend(twins::trials(gpu.is_none()));
    trials.extend(types::trials(gpu.is_none()));
    trials.extend(typed_scan::trials(gpu.is_none()));
    trials.extend(ops::trials(gpu.is_none()));
    trials.extend(segmented::trials(gpu.is_none()));
    trials.extend(histogram::trials(gpu.is_none()));
    trials.extend(bench_checks::trials());
    trials.extend(driver::trials());
    libtest_mimic::run(&args, trials).exit();
}
