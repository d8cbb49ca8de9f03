use super::*;
use crate::emu::counters::Counters;

fn reduce(name: &str, n: usize, block: u32) -> Traced {
    let v = crate::registry::find(name).unwrap();
    capture(Subject::Reduce(v, block), n, 1).unwrap()
}

fn scan(name: &str, n: usize) -> Traced {
    capture(Subject::Scan(crate::scan::find(name).unwrap(), Kind::Inclusive), n, 1).unwrap()
}

/// The threads that accessed memory in each interval of the first kernel.
fn active(t: &Traced) -> Vec<Vec<u32>> {
    t.kernels[0]
        .trace
        .intervals
        .iter()
        .map(|i| {
            let mut threads: Vec<u32> = i.accesses.iter().map(|a| a.thread).collect();
            threads.sort_unstable();
            threads.dedup();
            threads
        })
        .collect()
}

fn total(t: &Traced) -> Counters {
    let mut sum = Counters::default();
    for i in &t.kernels[0].trace.intervals {
        sum.add(&i.counters);
    }
    sum
}

#[test]
fn neighbored_halves_its_active_threads_every_interval_and_they_spread_out() {
    let t = reduce("neighbored", 256, 64);
    assert_eq!(t.checked.map(|c| c.1), Some(true));
    assert_eq!((t.kernels.len(), t.kernels[0].kernel.as_str(), t.kernels[0].grid_blocks), (1, "neighbored", 4));
    let active = active(&t);
    let counts: Vec<usize> = active.iter().map(Vec::len).collect();
    // Strides 1, 2, …, 32: threads 0, 2s, 4s, … add; then thread 0 writes the block's sum.
    assert_eq!(counts, [32, 16, 8, 4, 2, 1, 1], "{active:?}");
    for (k, threads) in active.iter().take(6).enumerate() {
        assert!(threads.iter().all(|t| t % (2 << k) == 0), "interval {k}: {threads:?}");
    }
}

#[test]
fn neighbored_less_keeps_the_active_threads_together() {
    let active = active(&reduce("neighbored_less", 256, 64));
    assert_eq!(active[0], (0..32).collect::<Vec<u32>>());
    assert_eq!(active[1], (0..16).collect::<Vec<u32>>());
}

#[test]
fn the_padding_is_what_removes_the_trees_bank_conflicts() {
    let (plain, padded) = (total(&scan("blelloch_unpadded", 512)), total(&scan("blelloch", 512)));
    assert_eq!(plain.shared_ld_requests, padded.shared_ld_requests);
    assert_eq!(padded.shared_ld_wavefronts, padded.shared_ld_ideal, "blelloch is conflict-free");
    assert!(
        plain.shared_ld_wavefronts > 4 * plain.shared_ld_ideal,
        "unpadded: {} wavefronts for {} ideal",
        plain.shared_ld_wavefronts,
        plain.shared_ld_ideal
    );
}

#[test]
fn every_interval_is_a_group_with_its_counters_in_the_picture() {
    let t = reduce("interleaved", 1024, 128);
    let text = svg(&t);
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let groups: Vec<_> =
        doc.descendants().filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("interval")).collect();
    assert_eq!(groups.len(), t.kernels[0].trace.intervals.len());
    let first = groups[0].descendants().find(|n| n.has_tag_name("title")).and_then(|n| n.text()).unwrap();
    assert!(first.starts_with("global ld 4 req, 16 sectors, eff 100.0%"), "{first}");
    let texts: Vec<&str> =
        doc.descendants().filter_map(|n| n.has_tag_name("text").then(|| n.text()).flatten()).collect();
    assert!(
        texts.iter().any(|s| s.starts_with("interleaved (block 128): n = 1024") && s.ends_with("PASS")),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"kernel interleaved: block 0 of 8, 128 threads (4 warps), 8 barrier intervals"),
        "{texts:?}"
    );
    // In place, on a copy of the input: read and written; the block sums: written.
    assert!(texts.contains(&"global 1 (read, written)") && texts.contains(&"global 2 (written)"), "{texts:?}");
    let blelloch = svg(&scan("blelloch", 100));
    assert!(blelloch.contains(">input</text>"), "a kernel that reads the uploaded input labels it");
}

#[test]
fn sizes_outside_the_picture_are_refused() {
    let v = crate::registry::find("interleaved").unwrap();
    for n in [0, MAX_N + 1] {
        let e = capture(Subject::Reduce(v, 64), n, 1).unwrap_err().to_string();
        assert!(e.contains("1 to 65536 elements") && e.contains(&format!("--n {n}")), "{e}");
    }
}
