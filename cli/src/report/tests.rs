//! The report built from the committed H100 CSVs, without a GPU: every file is there and
//! every SVG holds its series names and axis titles as `<text>` (parsed with `roxmltree`).

use std::path::{Path, PathBuf};

use super::*;

fn measurements() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/measurements/2026-11-22-h100")
}

/// The texts of every `<text>` element of an SVG.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: not XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| {
            n.descendants().filter(|d| d.is_text()).filter_map(|d| d.text()).collect::<String>().trim().to_string()
        })
        .collect()
}

fn built() -> (tempdir::Dir, Built) {
    let out = tempdir::Dir::new("report");
    let built = build(&[measurements()], out.path()).expect("report");
    (out, built)
}

/// A scratch directory removed on drop: a private temporary folder (random name, mode 0700).
mod tempdir {
    use std::path::Path;

    pub struct Dir(crate::private::PrivateDir);

    impl Dir {
        pub fn new(tag: &str) -> Self {
            Self(crate::private::PrivateDir::new(&format!("host-{tag}-")).unwrap())
        }
        pub fn path(&self) -> &Path {
            self.0.path()
        }
    }
}

#[test]
fn report_writes_index_and_every_svg() {
    let (out, built) = built();
    let names: Vec<String> = built.svgs.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for want in [
        "staircase_ch3.svg",
        "bars_ch5.svg",
        "gbps_global.svg",
        "gbps_shared.svg",
        "gbps_modern.svg",
        "scan_times.svg",
        "sumsq_cycles.svg",
    ] {
        assert!(names.iter().any(|n| n == want), "no {want} in {names:?}");
    }
    let index = std::fs::read_to_string(&built.index).unwrap();
    for name in &names {
        assert!(index.contains(&format!("src=\"{name}\"")), "index.html does not show {name}");
    }
    assert!(out.path().join("phrasebook.md").exists());
    // Self-contained: no script, nothing fetched from the network.
    assert!(!index.contains("<script") && !index.contains("http://") && !index.contains("https://"));
}

#[test]
fn every_svg_holds_its_series_and_axis_titles() {
    let (out, _) = built();
    let want: &[(&str, &[&str])] = &[
        (
            "staircase_ch3.svg",
            &[
                "time per kernel (ms, log scale)",
                "Tesla K80 (book, ch. 3)",
                "H100, ours (Rust)",
                "H100, CUDA C twin (nvcc)",
                "neighbored",
                "complete_unroll",
            ],
        ),
        (
            "bars_ch5.svg",
            &["time per kernel (µs)", "Tesla K80 (book, ch. 5)", "H100, ours (Rust)", "gmem", "smem_unroll4_dyn"],
        ),
        (
            "gbps_global.svg",
            &["log2(n)", "GB/s", "neighbored", "unroll8", "device peak (3352 GB/s)", "CUB DeviceReduce::Sum"],
        ),
        ("gbps_shared.svg", &["log2(n)", "GB/s", "smem", "device peak (3352 GB/s)", "CUB DeviceReduce::Sum"]),
        ("gbps_modern.svg", &["log2(n)", "GB/s", "warp_shuffle", "atomic_accumulate", "CUB DeviceReduce::Sum"]),
        (
            "scan_times.svg",
            &[
                "n (elements, log scale)",
                "time (µs, log scale)",
                "bit (inclusive)",
                "blelloch (inclusive)",
                "lookback (inclusive)",
                "CUB DeviceScan::InclusiveSum",
            ],
        ),
        (
            "sumsq_cycles.svg",
            &["clock64 cycles (log scale)", "n = 2^24 (clock64 cycles)", "squares_one_thread", "squares_block_tree"],
        ),
    ];
    for (file, texts) in want {
        let got = svg_texts(&out.path().join(file));
        for t in *texts {
            assert!(got.iter().any(|g| g == t), "{file}: no <text> `{t}` among {got:?}");
        }
    }
}

#[test]
fn every_variant_has_a_card_with_its_doc_sections_and_numbers() {
    let (_out, built) = built();
    let index = std::fs::read_to_string(&built.index).unwrap();
    for v in crate::registry::all() {
        let src = source_text(&reduce_source(v)).unwrap_or_else(|| panic!("no source for {}", v.name));
        assert!(html::doc_section(&src, "Concept").is_some(), "{}: no # Concept", v.name);
        let card = index
            .split(&format!("<div class=\"card\" id=\"{}\">", v.name))
            .nth(1)
            .unwrap_or_else(|| panic!("no card for {}", v.name));
        let card = card.split("<div class=\"card\"").next().unwrap();
        assert!(card.contains("Previous problem → fix") && !card.contains("no such section"), "{}", v.name);
        assert!(card.contains(&format!("kernels/src/{}", reduce_source(v))), "{}: no source link", v.name);
    }
    // neighbored_less (twins_2e24.csv): × prev = neighbored_modulo's 228.512 / 124.096 = 1.84;
    // × C = 1.002.
    let card = index.split("id=\"neighbored_less\"").nth(1).unwrap();
    assert!(card.contains("<td>1.84</td>") && card.contains("<td>1.00</td>"), "{}", &card[..2000.min(card.len())]);
    // An ncu table with a highlighted metric.
    assert!(card.split("<div class=\"card\"").next().unwrap().contains("class=\"hi\""));
    for scan in ["bit", "blelloch", "lookback"] {
        assert!(index.contains(&format!("id=\"{scan}\"")), "no card for scan {scan}");
    }
    assert!(index.contains("__shfl_down_sync"), "no phrasebook");
}

#[test]
fn the_source_link_is_relative_inside_the_repository() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert_eq!(source_base(&repo.join("docs")), "../kernels/src/");
}

#[test]
fn doc_markdown_becomes_html() {
    assert_eq!(
        html::inline("**Bold** and *first* [`x`](crate::x) `a<b` 2*n*k"),
        "<strong>Bold</strong> and <em>first</em> <code>x</code> <code>a&lt;b</code> 2*n*k"
    );
    let src = "    /// One line.\n    ///\n    /// # Concept\n    /// The idea,\n    /// in two lines.\n    ///\n    /// # Execution\n    /// 1. x\n";
    assert_eq!(html::doc_section(src, "Concept").unwrap(), "<p>The idea, in two lines.</p>");
}

#[test]
fn a_later_layer_replaces_rows_and_keeps_the_rest() {
    let later = tempdir::Dir::new("layer");
    std::fs::write(
        later.path().join("variants_2e24.csv"),
        "variant,n,grid,block,shared_bytes,time_us_median,time_us_min,gb_per_s,pct_peak,verdict\n\
         unroll8,16777216,4096,512,0,1.5,1.4,99.0,1.0,PASS\n",
    )
    .unwrap();
    let base = data::load(&measurements()).unwrap();
    let arg = PathBuf::from(format!("{}+{}", measurements().display(), later.path().display()));
    let run = data::load_layers(&arg).unwrap();
    let n = 1 << 24;
    assert_eq!(run.variant("unroll8", n).unwrap().time_us, 1.5, "the later layer's row");
    let kept = base.variant("warp_shuffle", n).unwrap().time_us;
    assert_eq!(run.variant("warp_shuffle", n).unwrap().time_us, kept, "rows the later layer lacks stay");
    assert_eq!(run.variants.len(), base.variants.len(), "replaced, not added");
    assert_eq!((run.scans.len(), run.ncu.len()), (base.scans.len(), base.ncu.len()));
    assert!(run.label.contains('+'), "{}", run.label);
    assert!(base.twins.contains_key(&("unroll8".to_string(), n)));
    assert!(!run.twins.contains_key(&("unroll8".to_string(), n)), "a twin ratio of the replaced time");
    // A later layer with no measurements of its own (here: nothing at all) is allowed.
    let empty = tempdir::Dir::new("empty-layer");
    let arg = PathBuf::from(format!("{}+{}", measurements().display(), empty.path().display()));
    assert_eq!(data::load_layers(&arg).unwrap().variants.len(), base.variants.len());
    assert!(data::load(empty.path()).is_err(), "alone, an empty directory is bad input");
}
