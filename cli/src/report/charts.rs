//! The report's pictures, drawn with the `plotters` crate's SVG backend.
//!
//! Why plotters with only `svg_backend`: it is pure Rust and writes SVG text (`<text>`
//! elements, no rasterising), so it needs no system library (no fontconfig, freetype or
//! cairo) and the same `cargo build` works on every machine; the default features (bitmap
//! backend, TrueType fonts) are off. Text sizes come from plotters' built-in estimate.
//!
//! Every function returns (file name, SVG text).

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

use super::data::Run;
use crate::{Error, Result};

/// *Professional CUDA C Programming* (Cheng, Grossman, McKercher; Wrox 2014), chapter 3,
/// "Parallel reduction": Tesla K80, 2^24 ints, block 512, `nvprof` kernel times in ms, as
/// quoted in `../shared/targets.md` ("The seeds' own figures").
pub const BOOK_CH3_K80_MS: &[(&str, f64)] = &[
    ("neighbored", 8.46),
    ("neighbored_less", 7.86),
    ("interleaved", 5.14),
    ("unroll2", 2.91),
    ("unroll4", 1.58),
    ("unroll8", 0.90),
    ("unroll_warps8", 0.85),
    ("complete_unroll_warps8", 0.84),
    ("complete_unroll", 0.82),
];

/// The same book, chapter 5 (shared memory), Tesla K80, in µs (`../shared/targets.md`;
/// the dynamic-shared-memory version is given as equal to the static one).
pub const BOOK_CH5_K80_US: &[(&str, f64)] =
    &[("gmem", 239.0), ("smem", 154.0), ("smem_unroll4", 81.0), ("smem_unroll4_dyn", 81.0)];

const FONT: &str = "sans-serif";
/// The device-peak line's colour (dark red).
const PEAK: RGBColor = RGBColor(170, 0, 0);
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Turns a plotters error into ours.
fn drawing<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> Error {
    move |e| Error::Invalid(format!("drawing {what}: {e}"))
}

/// A named line: its points, its style, and whether its points get dots.
type Line = (String, Vec<(f64, f64)>, ShapeStyle, bool);

/// Every picture the runs have data for.
pub fn all(runs: &[Run]) -> Result<Vec<(String, String)>> {
    let run = &runs[0];
    let mut out = Vec::new();
    let n24 = 1u64 << 24;
    if BOOK_CH3_K80_MS.iter().any(|(v, _)| run.variant(v, n24).is_some()) {
        out.push(("staircase_ch3.svg".into(), staircase(run)?));
    }
    if BOOK_CH5_K80_US.iter().any(|(v, _)| run.variant(v, n24).is_some()) {
        out.push(("bars_ch5.svg".into(), chapter5(run)?));
    }
    for family in
        [crate::registry::Family::GlobalMemory, crate::registry::Family::SharedMemory, crate::registry::Family::Modern]
    {
        if !run.variants.is_empty() {
            out.push((format!("gbps_{}.svg", family.name()), gbps(runs, family)?));
        }
    }
    if !run.scans.is_empty() {
        out.push(("scan_times.svg".into(), scans(run)?));
    }
    if run.variants.iter().any(|r| r.clock64.is_some()) {
        out.push(("sumsq_cycles.svg".into(), sumsq(run)?));
    }
    if run.types.iter().any(|r| r.x_cub.is_some()) {
        out.push(("types_x_cub.svg".into(), types(run)?));
    }
    Ok(out)
}

/// One bar or point series over categories: its name, colour and values (None: no bar).
struct Series {
    name: String,
    values: Vec<Option<f64>>,
}

/// Category labels under the plot, rotated, drawn by hand at each category's centre.
fn category_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    xs: &[i32],
    names: &[&str],
    y: i32,
) -> Result<()> {
    let style = (FONT, 13).into_font().transform(FontTransform::Rotate90).color(&BLACK);
    for (x, name) in xs.iter().zip(names) {
        root.draw(&Text::new(name.to_string(), (*x - 6, y), style.clone())).map_err(drawing("labels"))?;
    }
    Ok(())
}

/// Grouped bars (or points joined by lines, `lines`) over named categories, log or linear y.
fn categories(title: &str, y_desc: &str, names: &[&str], series: &[Series], log: bool, lines: bool) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 620)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing(""))?;
        let vals = series.iter().flat_map(|s| s.values.iter().flatten().copied());
        let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let k = names.len() as f64;
        let mut chart = ChartBuilder::on(&root);
        chart.caption(title, (FONT, 22)).margin(15).x_label_area_size(170).y_label_area_size(80);
        let xs = if log {
            let (lo, hi) = decades(lo, hi);
            let mut c = chart.build_cartesian_2d(0f64..k, (lo..hi).log_scale()).map_err(drawing(""))?;
            draw_cat(&mut c, y_desc, series, lines, lo)?;
            centres(&c, names.len(), lo)
        } else {
            let mut c = chart.build_cartesian_2d(0f64..k, 0f64..hi * 1.15).map_err(drawing(""))?;
            draw_cat(&mut c, y_desc, series, lines, 0.0)?;
            centres(&c, names.len(), 0.0)
        };
        category_labels(&root, &xs.iter().map(|p| p.0).collect::<Vec<_>>(), names, xs.first().map_or(0, |p| p.1) + 12)?;
        root.present().map_err(drawing(""))?;
    }
    Ok(svg)
}

/// An axis label: `1e9` for big numbers, no `.0` on whole ones.
fn short(v: f64) -> String {
    if v.abs() >= 1e5 {
        format!("{v:.0e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        // At most 4 significant decimals: no 0.6000000000000001 from the axis arithmetic.
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The powers of ten just below `lo` and just above `hi`, so a log axis has labels at both ends.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    (10f64.powf(lo.log10().floor()), 10f64.powf(hi.log10().ceil()))
}

/// Pixel positions of the category centres at the bottom of the plot.
fn centres<X, Y>(c: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>, k: usize, bottom: f64) -> Vec<(i32, i32)>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    (0..k).map(|i| c.backend_coord(&(i as f64 + 0.5, bottom))).collect()
}

fn draw_cat<'a, 'b: 'a, X, Y>(
    c: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    y_desc: &str,
    series: &[Series],
    lines: bool,
    bottom: f64,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    c.configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|y| short(*y))
        .y_desc(y_desc)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 13))
        .draw()
        .map_err(drawing("mesh"))?;
    let w = 0.8 / series.len() as f64;
    for (s_i, s) in series.iter().enumerate() {
        let col = color(s_i);
        let pts: Vec<(f64, f64)> =
            s.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i as f64 + 0.5, v))).collect();
        let anno = if lines {
            c.draw_series(PointSeries::of_element(pts.clone(), 5, col.filled(), &|p, s, st| Circle::new(p, s, st)))
                .map_err(drawing("points"))?;
            c.draw_series(LineSeries::new(pts, col.stroke_width(2))).map_err(drawing("lines"))?
        } else {
            let x0 = |i: f64| i - 0.5 + 0.1 + w * s_i as f64;
            c.draw_series(pts.into_iter().map(|(x, v)| Rectangle::new([(x0(x), bottom), (x0(x) + w, v)], col.filled())))
                .map_err(drawing("bars"))?
        };
        anno.label(s.name.clone()).legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled()));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(drawing("legend"))?;
    Ok(())
}

/// (a) The chapter-3 staircase: time per kernel at 2^24, ours on the H100 (and the CUDA C
/// twins) next to the book's K80, log scale.
fn staircase(run: &Run) -> Result<String> {
    let n = 1u64 << 24;
    let names: Vec<&str> = BOOK_CH3_K80_MS.iter().map(|(v, _)| *v).collect();
    let series = vec![
        Series {
            name: "Tesla K80 (book, ch. 3)".into(),
            values: BOOK_CH3_K80_MS.iter().map(|(_, t)| Some(*t)).collect(),
        },
        Series {
            name: "H100, ours (Rust)".into(),
            values: names.iter().map(|v| run.variant(v, n).map(|r| r.time_us / 1000.0)).collect(),
        },
        Series {
            name: "H100, CUDA C twin (nvcc)".into(),
            values: names.iter().map(|v| run.twins.get(&(v.to_string(), n)).map(|(c, _)| c / 1000.0)).collect(),
        },
    ];
    categories(
        "Chapter 3 staircase: time per kernel, n = 2^24, block 512",
        "time per kernel (ms, log scale)",
        &names,
        &series,
        true,
        true,
    )
}

/// (b) Chapter 5: shared-memory kernels, bars, ours next to the book's.
fn chapter5(run: &Run) -> Result<String> {
    let n = 1u64 << 24;
    let names: Vec<&str> = BOOK_CH5_K80_US.iter().map(|(v, _)| *v).collect();
    let series = vec![
        Series {
            name: "Tesla K80 (book, ch. 5)".into(),
            values: BOOK_CH5_K80_US.iter().map(|(_, t)| Some(*t)).collect(),
        },
        Series {
            name: "H100, ours (Rust)".into(),
            values: names.iter().map(|v| run.variant(v, n).map(|r| r.time_us)).collect(),
        },
        Series {
            name: "H100, CUDA C twin (nvcc)".into(),
            values: names.iter().map(|v| run.twins.get(&(v.to_string(), n)).map(|(c, _)| *c)).collect(),
        },
    ];
    categories("Chapter 5: shared memory, n = 2^24", "time per kernel (µs)", &names, &series, false, false)
}

/// (e) The sum-of-squares steps: clock64 cycles per step, one bar per n, log scale.
fn sumsq(run: &Run) -> Result<String> {
    let steps: Vec<&str> =
        crate::registry::all().filter(|v| v.family == crate::registry::Family::SumOfSquares).map(|v| v.name).collect();
    let series: Vec<Series> = run
        .variant_ns()
        .into_iter()
        .filter(|n| steps.iter().any(|s| run.variant(s, *n).is_some_and(|r| r.clock64.is_some())))
        .map(|n| Series {
            name: format!("n = 2^{} (clock64 cycles)", n.trailing_zeros()),
            values: steps.iter().map(|s| run.variant(s, n).and_then(|r| r.clock64)).collect(),
        })
        .collect();
    categories(
        "Sum of squares: in-kernel clock64 cycles per step",
        "clock64 cycles (log scale)",
        &steps,
        &series,
        true,
        false,
    )
}

/// (c) GB/s against n for one family: a line per variant over the runs' n, the device's
/// peak and CUB DeviceReduce::Sum (sum_vs_cub.csv) as lines.
fn gbps(runs: &[Run], family: crate::registry::Family) -> Result<String> {
    let variants: Vec<&str> = crate::registry::all().filter(|v| v.family == family).map(|v| v.name).collect();
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for v in &variants {
        let mut pts: Vec<(f64, f64)> = runs
            .iter()
            .flat_map(|r| r.variants.iter().filter(|row| row.variant == *v))
            .filter_map(|row| row.gb_per_s.map(|g| ((row.n as f64).log2(), g)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        lines.push((v.to_string(), pts));
    }
    let cub: Vec<(f64, f64)> =
        runs[0].cub_reduce.iter().map(|(n, t)| ((*n as f64).log2(), *n as f64 * 4.0 / (t * 1e3))).collect();
    // The measured copy ceiling: a device-to-device copy's read+write rate (copy*.csv).
    let mut copy: Vec<(f64, f64)> = runs[0]
        .scans
        .iter()
        .filter(|r| r.variant == "d2d_copy")
        .filter_map(|r| r.gb_per_s.map(|g| ((r.n as f64).log2(), g)))
        .collect();
    copy.sort_by(|a, b| a.0.total_cmp(&b.0));
    let peak = runs[0].peak_gb_per_s;
    let xs = lines.iter().flat_map(|l| l.1.iter()).chain(&cub).chain(&copy).map(|p| p.0);
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ymax =
        peak.unwrap_or(0.0).max(lines.iter().flat_map(|l| l.1.iter()).chain(&cub).map(|p| p.1).fold(0.0, f64::max));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing(""))?;
        let title = format!("GB/s against n: {} family (n = 2^x)", family.name());
        let mut c = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((x0 - 0.5)..(x1 + 0.5), 0f64..ymax * 1.1)
            .map_err(drawing(""))?;
        c.configure_mesh()
            .x_desc("log2(n)")
            .x_label_formatter(&|x| short(*x))
            .y_desc("GB/s")
            .y_label_formatter(&|y| short(*y))
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 13))
            .draw()
            .map_err(drawing("mesh"))?;
        let mut all: Vec<Line> =
            lines.into_iter().enumerate().map(|(i, (n, p))| (n, p, color(i).stroke_width(2), true)).collect();
        if let Some(p) = peak {
            all.push((
                format!("device peak ({p:.0} GB/s)"),
                vec![(x0 - 0.5, p), (x1 + 0.5, p)],
                PEAK.stroke_width(2),
                false,
            ));
        }
        if !cub.is_empty() {
            all.push(("CUB DeviceReduce::Sum".into(), cub, BLACK.stroke_width(3), true));
        }
        if !copy.is_empty() {
            all.push((
                "device-to-device copy, read+write (measured)".into(),
                copy,
                PEAK.mix(0.5).stroke_width(2),
                true,
            ));
        }
        draw_lines(&mut c, all, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(drawing(""))?;
    }
    Ok(svg)
}

/// Lines with points, and a legend where `legend` says.
fn draw_lines<'a, 'b: 'a, X, Y>(
    c: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
    lines: Vec<Line>,
    legend: SeriesLabelPosition,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    for (name, pts, style, dots) in lines {
        if dots {
            c.draw_series(PointSeries::of_element(pts.clone(), 4, style.color.filled(), &|p, s, st| {
                Circle::new(p, s, st)
            }))
            .map_err(drawing("points"))?;
        }
        c.draw_series(LineSeries::new(pts, style))
            .map_err(drawing("lines"))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    c.configure_series_labels()
        .position(legend)
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(drawing("legend"))?;
    Ok(())
}

/// (d) Scan time against length, log-log: bit, blelloch, lookback (inclusive) and CUB.
fn scans(run: &Run) -> Result<String> {
    let names = ["bit", "blelloch", "lookback", "cub"];
    let mut lines = Vec::new();
    for (i, v) in names.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = run
            .scans
            .iter()
            .filter(|r| r.variant == *v && r.kind == "inclusive")
            .map(|r| (r.n as f64, r.time_us))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let label = if *v == "cub" { "CUB DeviceScan::InclusiveSum".to_string() } else { format!("{v} (inclusive)") };
        let style = if *v == "cub" { BLACK.stroke_width(3) } else { color(i).stroke_width(2) };
        lines.push((label, pts, style, true));
    }
    let xs = lines.iter().flat_map(|l| l.1.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ys = lines.iter().flat_map(|l| l.1.iter().map(|p| p.1));
    let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing(""))?;
        let mut c = ChartBuilder::on(&root)
            .caption("Scan time against length (log-log)", (FONT, 22))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d((x0 / 2.0..x1 * 2.0).log_scale(), {
                let (y0, y1) = decades(y0, y1);
                (y0..y1).log_scale()
            })
            .map_err(drawing(""))?;
        c.configure_mesh()
            .x_desc("n (elements, log scale)")
            .y_desc("time (µs, log scale)")
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .y_label_formatter(&|y| short(*y))
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 13))
            .draw()
            .map_err(drawing("mesh"))?;
        draw_lines(&mut c, lines, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(drawing(""))?;
    }
    Ok(svg)
}

/// × CUB of every element type × operator (`atomic_accumulate` against CUB's
/// `DeviceReduce::Sum`/`Min`/`Max`), one bar series per n.
fn types(run: &Run) -> Result<String> {
    let keys: Vec<(String, String)> = run.types.iter().fold(Vec::new(), |mut k, r| {
        if !k.contains(&(r.ty.clone(), r.op.clone())) {
            k.push((r.ty.clone(), r.op.clone()));
        }
        k
    });
    let mut ns: Vec<u64> = run.types.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let series: Vec<Series> = ns
        .iter()
        .map(|&n| Series {
            name: format!("n = 2^{}", n.ilog2()),
            values: keys
                .iter()
                .map(|(t, o)| run.types.iter().find(|r| r.n == n && &r.ty == t && &r.op == o).and_then(|r| r.x_cub))
                .collect(),
        })
        .collect();
    let names: Vec<String> = keys.iter().map(|(t, o)| format!("{t} {o}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    categories(
        "Every type × operator: CUB's time / ours (> 1: faster than CUB)",
        "× CUB",
        &names,
        &series,
        false,
        false,
    )
}
