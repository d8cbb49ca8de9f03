//! Segmented reductions (`reduce_scan::SegmentedReducer` over `Segments`): every element type ×
//! sum, min, max, argmin, argmax × blocks 32, 256, 1024 × layouts that reach every plan — many
//! tiny segments with empty ones (a warp per segment), segments of one tile (a block per
//! segment), a few long ones with empties between them (device-wide), power-law lengths, the
//! rows of matrices of each plan — on random input, few distinct values (ties), and, for floats,
//! NaN and ±0.0; every segment checked against the CPU. Errors: offsets that decrease, a last
//! offset past the input, an output too short, a matrix of the wrong size. `--metrics` on the
//! emulator counts the plan's kernels. The same on the GPU
//! with the shapes (ignored where there is none). Failures name the fold, type, block,
//! layout and segment.

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::Backend;
use reduce_scan::input::{Pattern, typed};
use reduce_scan::reduce::segmented::{Strategy, check_all};
use reduce_scan::types::{Elem, Op, Value};
use reduce_scan::{Max, Min, SegmentedReducer, Segments, Sum};

const SEED: u64 = 0x5E6;
const BLOCKS: &[u32] = &[32, 256, 1024];
/// The folds: an operator, and whether its argument is asked.
const FOLDS: [(Op, bool); 5] = [(Op::Sum, false), (Op::Min, false), (Op::Max, false), (Op::Min, true), (Op::Max, true)];

/// A layout of segments: CSR offsets, or a matrix (rows, cols).
#[derive(Clone, Debug)]
enum Shape {
    Offsets(&'static str, Vec<u32>),
    Rows(usize, usize),
}

impl Shape {
    /// The layout in a failure message.
    fn name(&self) -> String {
        match self {
            Shape::Offsets(what, o) => {
                format!("{what}: {} segments, offsets {}..{}", o.len() - 1, o[0], o.last().unwrap_or(&0))
            }
            Shape::Rows(r, c) => format!("{r} × {c} rows"),
        }
    }

    /// The input's length: a few past the last offset, or rows × cols.
    fn input_len(&self) -> usize {
        match self {
            Shape::Offsets(_, o) => *o.last().unwrap_or(&0) as usize + 3,
            Shape::Rows(r, c) => r * c,
        }
    }

    /// The layout as `Segments` on `backend`.
    fn segments(&self, backend: &Backend) -> reduce_scan::Result<Segments> {
        match self {
            Shape::Offsets(_, o) => Segments::from_offsets(backend, o),
            Shape::Rows(r, c) => Segments::rows(*r, *c),
        }
    }
}

/// Offsets from lengths.
fn offsets(lens: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut out = vec![0u32];
    for l in lens {
        out.push(out.last().copied().unwrap_or(0) + l);
    }
    out
}

/// Power-law lengths: `count` segments, length ⌊scale / (i + 1)^1.2⌋ in a shuffled order (many
/// short, a few long), some 0.
fn power_law(count: usize, scale: f64) -> Vec<u32> {
    let mut lens: Vec<u32> = (0..count).map(|i| (scale / ((i + 1) as f64).powf(1.2)) as u32).collect();
    let r = typed::<u64>(count, SEED, Pattern::Random);
    for i in (1..count).rev() {
        lens.swap(i, (r[i] % (i as u64 + 1)) as usize);
    }
    lens
}

/// The block at which the emulator also runs the largest layout ([`shapes`]).
const LARGEST_AT: u32 = 256;

/// The layouts the emulator runs at `block`: at every block, layouts that reach each plan
/// (`plans_reached`) and a skewed one; at [`LARGEST_AT`] only, the largest too (power law over
/// 300 segments, 119,676 elements: a plan `a few long` and `2 × 20000 rows` reach at every
/// block), as the classic kernels' matrix runs its largest size at one block (#60).
fn shapes(block: u32) -> Vec<Shape> {
    let tiny: Vec<u32> = (0..700).map(|i| [0, 1, 2, 31, 32, 33, 5, 0, 64, 100][i % 10]).collect();
    let mut out = vec![
        Shape::Offsets("tiny with empties", offsets(tiny)),
        Shape::Offsets("one tile each", offsets([1025, 0, 8192, 4099, 7, 1500])),
        Shape::Offsets("a few long", offsets([0, 20_011, 0, 8193, 16_384, 1, 0])),
        Shape::Offsets("many short, a few long", offsets(power_law(4200, 4000.0).into_iter().chain([20_011, 0, 9000]))),
        Shape::Offsets("starts past 0", vec![17, 17, 40, 3000]),
        Shape::Rows(129, 33),
        Shape::Rows(37, 130),
        Shape::Rows(19, 300),
        Shape::Offsets("logical warps of 16", offsets((0..40).map(|i| [513, 700, 1024, 0, 999, 257][i % 6]))),
        Shape::Rows(7, 4096),
        Shape::Rows(9, 1028),
        Shape::Rows(3, 8192),
        Shape::Rows(5, 2050),
        Shape::Rows(2, 20_000),
    ];
    if block == LARGEST_AT {
        out.insert(3, Shape::Offsets("power law", offsets(power_law(300, 30_000.0))));
    }
    out
}

/// The GPU's layouts: the (10, 10^3, 10^5, 10^6 segments over 2^26 elements, equal and
/// power-law; rows 4096 × 4096 and 65536 × 256) and the emulator's.
fn gpu_shapes() -> Vec<Shape> {
    let n = 1u64 << 26;
    let mut out = shapes(LARGEST_AT);
    for count in [10u64, 1000, 100_000, 1_000_000] {
        out.push(Shape::Offsets("equal", offsets((0..count).map(|_| (n / count) as u32))));
        out.push(Shape::Offsets("power law", offsets(power_law(count as usize, n as f64 / 4.0))));
    }
    out.extend([Shape::Rows(4096, 4096), Shape::Rows(65_536, 256)]);
    out
}

/// Every width of logical warp on the same segments (`Segments::with_lanes`): the tiny ones with
/// empties and rows of 130, random input, sums and argmaxes.
fn every_width<T: Value>(backend: &Backend) -> Result<(), Failed> {
    let tiny: Vec<u32> = (0..300).map(|i| [0, 1, 2, 31, 32, 33, 5, 0, 64, 100][i % 10]).collect();
    for shape in [Shape::Offsets("tiny with empties", offsets(tiny)), Shape::Rows(37, 130)] {
        for lanes in [4, 8, 16, 32] {
            let data = typed::<T>(shape.input_len(), SEED ^ lanes as u64, Pattern::Random);
            for fold in [(Op::Sum, false), (Op::Max, true)] {
                run(backend, fold, (&shape, Some(lanes)), &data, 32)?;
            }
        }
    }
    Ok(())
}

/// Input with few distinct values: ties everywhere.
fn ties<T: Value>(n: usize, seed: u64) -> Vec<T> {
    typed::<u64>(n, seed, Pattern::Random).iter().map(|&w| T::from_f64((w % 5) as f64 - 2.0)).collect()
}

/// One fold on one input over one layout, checked segment by segment.
fn run<T: Value>(
    backend: &Backend,
    (op, arg): (Op, bool),
    (shape, lanes): (&Shape, Option<u32>),
    data: &[T],
    block: u32,
) -> Result<(), Failed> {
    let segments = shape.segments(backend).and_then(|s| match lanes {
        Some(l) => s.with_lanes(l),
        None => Ok(s),
    });
    let segments = segments.map_err(|e| format!("{}: {e}", shape.name()))?;
    let per = (16 / T::ELEM.size()) as u32; // elements per 128-bit load
    let what = format!(
        "{}{} type {} block {block} {} ({}, {} lanes)",
        if arg { "arg" } else { "" },
        op.name(),
        T::ELEM.name(),
        shape.name(),
        segments.strategy().name(),
        segments.lanes(per)
    );
    let input = backend.upload(data).map_err(|e| format!("{what}: {e}"))?;
    let count = segments.count().max(1);
    let mut values = backend.alloc::<T>(count).map_err(|e| e.to_string())?;
    let mut indices = backend.alloc::<u32>(count).map_err(|e| e.to_string())?;
    let launched = match (op, arg) {
        (Op::Sum, _) => SegmentedReducer::<T, Sum>::with_block(backend, block)?.reduce(&input, &segments, &mut values),
        (Op::Min, false) => {
            SegmentedReducer::<T, Min>::with_block(backend, block)?.reduce(&input, &segments, &mut values)
        }
        (Op::Max, false) => {
            SegmentedReducer::<T, Max>::with_block(backend, block)?.reduce(&input, &segments, &mut values)
        }
        (Op::Min, true) => SegmentedReducer::<T, Min>::with_block(backend, block)?.arg_reduce(
            &input,
            &segments,
            &mut values,
            &mut indices,
        ),
        _ => SegmentedReducer::<T, Max>::with_block(backend, block)?.arg_reduce(
            &input,
            &segments,
            &mut values,
            &mut indices,
        ),
    };
    launched.map_err(|e| format!("{what}: {e}"))?;
    let values = backend.download(&values).map_err(|e| e.to_string())?;
    let indices = if arg { Some(backend.download(&indices).map_err(|e| e.to_string())?) } else { None };
    check_all(op, data, &segments, &values, indices.as_deref(), Some(block)).map_err(|e| format!("{what}: {e}").into())
}

/// Every layout, random input and ties; for floats, NaN in a few segments (every fold) and
/// zeros of both signs.
fn matrix<T: Value>(backend: &Backend, fold: (Op, bool), block: u32, shapes: &[Shape]) -> Result<(), Failed> {
    for shape in shapes {
        let n = shape.input_len();
        run(backend, fold, (shape, None), &typed::<T>(n, SEED ^ n as u64, Pattern::Random), block)?;
        run(backend, fold, (shape, None), &ties::<T>(n, SEED ^ 7), block)?;
        if T::ELEM.is_float() && n > 100 {
            let mut data = typed::<T>(n, SEED ^ 3, Pattern::Random);
            // NaN in a few segments: the extreme for min, max and the arguments; a sum with a
            // NaN is NaN (`cpu::check` asks for NaN there, not a value within the bound).
            for at in [0, n / 3, n / 3 + 1, n - 1] {
                data[at] = T::from_f64(f64::NAN);
            }
            for (i, x) in data.iter_mut().enumerate().skip(n / 2).take(50) {
                *x = T::from_f64(if i % 2 == 0 { -0.0 } else { 0.0 });
            }
            run(backend, fold, (shape, None), &data, block)?;
        }
        if fold.1 {
            // The fold's identity everywhere (+inf or MAX for argmin, −inf or MIN for argmax:
            // no element beats the identity a thread starts from, yet each segment's answer is
            // its first index), then with a value that beats it every 97th element.
            let (identity, beats) = crate::common::arg_identity_and_winner::<T>(fold.0 == Op::Min);
            let mut data = vec![identity; n];
            run(backend, fold, (shape, None), &data, block)?;
            for x in data.iter_mut().step_by(97) {
                *x = beats;
            }
            run(backend, fold, (shape, None), &data, block)?;
        }
    }
    Ok(())
}

/// Bad segments: one line each, before any launch.
fn errors() -> Result<(), Failed> {
    let b = Backend::emulator();
    let input = b.upload(&[1.0f32; 10]).map_err(|e| e.to_string())?;
    let mut out = b.alloc::<f32>(3).map_err(|e| e.to_string())?;
    let mut r = SegmentedReducer::<f32, Sum>::new(&b);
    let past = Segments::from_offsets(&b, &[0, 4, 11]).map_err(|e| e.to_string())?;
    let many = Segments::from_offsets(&b, &[0, 1, 2, 3, 4]).map_err(|e| e.to_string())?;
    let rows = Segments::rows(3, 4).map_err(|e| e.to_string())?;
    let got = [
        Segments::from_offsets(&b, &[0, 4, 2]).err(),
        r.reduce(&input, &past, &mut out).err(),
        r.reduce(&input, &many, &mut out).err(),
        r.reduce(&input, &rows, &mut out).err(),
    ];
    let want = [
        "invalid request: offsets decrease at segment 1: offsets[1] = 4, offsets[2] = 2; they must not decrease",
        "invalid request: segmented sum: the last offset is 11, past the input of 10 elements",
        "invalid request: segmented sum of 4 segments: the output holds 3 elements; it must hold one per segment",
        "invalid request: segmented sum of 3 rows × 4 columns = 12 elements: the input holds 10; they must match",
    ];
    let doc = include_str!("../docs/bad-input.md");
    for (got, want) in got.into_iter().zip(want) {
        let got = got.map(|e| e.to_string());
        if got.as_deref() != Some(want) {
            return Err(format!("want `{want}`, got {got:?}").into());
        }
        if !doc.contains(&format!("`` {want} ``")) {
            return Err(format!("docs/bad-input.md does not show `{want}`").into());
        }
    }
    Ok(())
}

/// `--metrics` on the emulator counts the plan's kernels: the logical warps' one (no barrier,
/// every element read, in sectors, beside the offsets), both launches of the split plan
/// (the tiles' barriers), and a matrix's rows.
/// Column `name` of the first row of a CSV report (`#` lines skipped).
fn cell(out: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    let at = lines.first()?.split(',').position(|h| h == name)?;
    lines.get(1)?.split(',').nth(at).map(String::from)
}

/// [`cell`] as a number (-1 where missing).
fn number(out: &str, name: &str) -> f64 {
    cell(out, name).and_then(|v| v.parse::<f64>().ok()).unwrap_or(-1.0)
}

/// Rows of a multiple of four columns take a block each (`block_per_row`): `--metrics` counts
/// `segmented_rows` (every element read once in whole sectors, one barrier a block), and
/// `--lanes` is refused in one line naming the plan.
fn cli_block_per_row() -> Result<(), Failed> {
    let run = crate::common::reduce_on_the_emulator;
    let (code, out, err) =
        run(&["--op", "rows", "--rows", "3", "--cols", "4096", "--combine", "argmax", "--metrics", "--format", "csv"]);
    if code != 0
        || cell(&out, "verdict").as_deref() != Some("PASS")
        || cell(&out, "strategy").as_deref() != Some("block_per_row")
        || number(&out, "gld_sectors") != 3.0 * 4096.0 * 4.0 / 32.0
        || number(&out, "emu_barriers_per_block") != 1.0
    {
        return Err(format!("rows 3 × 4096 --metrics: exit {code}, want a block_per_row PASS row reading 1536 sectors with one barrier a block:\n{out}{err}").into());
    }
    let (code, out, err) = run(&["--op", "rows", "--rows", "3", "--cols", "4096", "--lanes", "8"]);
    if code != 2 || !err.contains("block_per_row") || err.lines().count() != 1 {
        return Err(format!(
            "rows 3 × 4096 --lanes 8: exit {code}, want 2 and one line naming block_per_row:\n{out}{err}"
        )
        .into());
    }
    Ok(())
}

fn cli_metrics() -> Result<(), Failed> {
    let run = crate::common::reduce_on_the_emulator;
    let (code, out, err) =
        run(&["--op", "segmented", "--segments", "300", "--n", "20011", "--metrics", "--format", "csv"]);
    let bytes = number(&out, "gld_sectors") * 32.0;
    // Every element once; at most four sectors more a segment (its head's, its tail's, and the
    // body's two end sectors, each counted again by its own request) and two per offset load
    // (38 warps of 8 segments, two loads each).
    let (data, slack) = (20_011.0 * 4.0, 300.0 * 4.0 * 32.0 + 38.0 * 2.0 * 2.0 * 32.0);
    if code != 0
        || cell(&out, "verdict").as_deref() != Some("PASS")
        || cell(&out, "lanes").as_deref() != Some("4")
        || number(&out, "emu_barriers_per_block") != 0.0
        || !(data..=data + slack).contains(&bytes)
    {
        return Err(format!("300 segments --metrics: exit {code}, want a PASS row at 4 lanes, no barrier, {data}..={} bytes read in sectors, got {bytes}:\n{out}{err}", data + slack).into());
    }
    let args = [
        "--op",
        "segmented",
        "--segments",
        "5000",
        "--lengths",
        "power",
        "--n",
        "300000",
        "--metrics",
        "--format",
        "csv",
    ];
    let (code, out, err) = run(&args);
    if code != 0
        || cell(&out, "strategy").as_deref() != Some("warps_and_tiles")
        || number(&out, "emu_barriers_per_block") <= 0.0
    {
        return Err(format!(
            "the split plan --metrics: exit {code}, want both kernels counted (the tiles' barriers):\n{out}{err}"
        )
        .into());
    }
    let (code, out, err) =
        run(&["--op", "rows", "--rows", "100", "--cols", "67", "--combine", "argmax", "--metrics", "--format", "csv"]);
    if code != 0 || cell(&out, "verdict").as_deref() != Some("PASS") || number(&out, "gld_sectors") <= 0.0 {
        return Err(format!("rows --metrics: exit {code}:\n{out}{err}").into());
    }
    Ok(())
}

fn plans_reached() -> Result<(), Failed> {
    let b = Backend::emulator();
    let mut seen = Vec::new();
    for shape in shapes(LARGEST_AT) {
        seen.push(shape.segments(&b).map_err(|e| e.to_string())?.strategy());
    }
    for want in [
        Strategy::WarpPerSegment,
        Strategy::BlockPerSegment,
        Strategy::BlockPerRow,
        Strategy::DeviceWide,
        Strategy::Split,
    ] {
        if !seen.contains(&want) {
            return Err(format!("no test layout reaches {}", want.name()).into());
        }
    }
    Ok(())
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out =
        vec![Trial::test("segmented::errors", errors), Trial::test("segmented::plans_reached", plans_reached)];
    out.push(Trial::test("segmented::cli_metrics", cli_metrics).with_kind("emulator"));
    out.push(Trial::test("segmented::cli_block_per_row", cli_block_per_row).with_kind("emulator"));
    for elem in Elem::ALL {
        out.push(
            Trial::test(
                format!("segmented::emulator::every_width_{}", elem.name()),
                move || reduce_scan::with_elem!(elem, T => every_width::<T>(&Backend::emulator())),
            )
            .with_kind("emulator"),
        );
        for fold in FOLDS {
            let id = format!("{}{}_{}", if fold.1 { "arg" } else { "" }, fold.0.name(), elem.name());
            for &block in BLOCKS {
                out.push(
                    Trial::test(format!("segmented::emulator::{id}::block_{block}"), move || {
                        reduce_scan::with_elem!(elem, T => matrix::<T>(&Backend::emulator(), fold, block, &shapes(block)))
                    })
                    .with_kind("emulator"),
                );
            }
            out.push(
                Trial::test(format!("segmented::gpu::{id}"), move || {
                    let b = Backend::gpu().map_err(|e| e.to_string())?;
                    reduce_scan::with_elem!(elem, T => matrix::<T>(&b, fold, 256, &gpu_shapes()))
                })
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
            );
        }
    }
    out
}
