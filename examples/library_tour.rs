//! The README's "Use it from Rust" tour, run: every object of the library once (`Reducer`,
//! `Scanner`, `ArgReducer`, `SegmentedReducer`, `Histogram`, `Select`), on the GPU if there is one, else on the CPU
//! emulator. `tests/docs.rs` keeps the README's block the same as the lines between the markers.
//!
//! `cargo run --example library_tour`

use reduce_scan::{ArgReducer, Backend, Histogram, Max, Min, Reducer, Scanner, SegmentedReducer, Segments, Sum};

fn main() -> reduce_scan::MainResult {
    // README: begin

    // README: the line above in the README is `let backend = Backend::gpu()?;`
    let (backend, _) = Backend::select(reduce_scan::BackendKind::Auto)?; // the GPU, else the emulator
    let stream = backend.with_new_stream()?; // optional: a stream of your own
    let input = stream.upload(&[3, 1, 4, 1, 5, 9, 2, 6])?; // or any DeviceBuffer<i32> you hold

    let mut reducer = Reducer::<i32, Sum>::new(&stream);
    assert_eq!(reducer.reduce(&input)?, 31);
    assert_eq!(reducer.reduce_range(&input, 2..5)?, 10); // any sub-range, any alignment
    reducer.enqueue(&input, 0..8)?; // queued; the host goes on
    assert_eq!(reducer.result()?, 31); // waits for it

    let mut output = stream.alloc::<i32>(input.len())?;
    Scanner::<i32, Sum>::new(&stream).inclusive(&input, &mut output)?; // decoupled look-back, one launch

    let floats = stream.upload(&[2.5f32, f32::NAN, -1.0])?;
    assert!(Reducer::<f32, Max>::new(&stream).reduce(&floats)?.is_nan()); // NaN propagates

    let top = ArgReducer::<i32, Max>::new(&stream).reduce(&input)?.unwrap(); // argmax: None when empty
    assert_eq!((top.value, top.index), (9, 5)); // the first index of the largest
    let low = ArgReducer::<i32, Min>::new(&stream).reduce(&input)?.unwrap(); // argmin
    assert_eq!((low.value, low.index), (1, 1)); // ties: the lowest index (1 is at 1 and 3)
    let weights = stream.upload(&[1, 0, 2, 0, 1, 0, 0, 1])?;
    assert_eq!(reducer.dot(&input, &weights)?, 22); // Σ a·b in one pass, no temporary
    assert_eq!(reducer.sum_of_squares(&input)?, 173); // Σ x²
    assert_eq!(reducer.norm(&input)?, 173f64.sqrt()); // √(Σ x²)

    let segments = Segments::from_offsets(&stream, &[0, 3, 3, 8])?; // CSR: [3 1 4], [], [1 5 9 2 6]
    let mut sums = stream.alloc::<i32>(segments.count())?;
    SegmentedReducer::<i32, Sum>::new(&stream).reduce(&input, &segments, &mut sums)?; // one launch
    assert_eq!(stream.download(&sums)?, [8, 0, 23]); // an empty segment: the identity
    let rows = Segments::rows(2, 4)?; // a 2 × 4 matrix: x.sum(dim=-1), argmax(dim=-1)
    let (mut top, mut at) = (stream.alloc::<i32>(2)?, stream.alloc::<u32>(2)?);
    SegmentedReducer::<i32, Max>::new(&stream).arg_reduce(&input, &rows, &mut top, &mut at)?;
    assert_eq!(stream.download(&at)?, [2, 1]); // the index within each row
    let pixels = stream.upload(&[7u8, 200, 3, 255, 7])?;
    let mut counts = stream.alloc::<u32>(4)?; // one counter per bin: 4 bins over [0, 256)
    Histogram::<u8>::new(&stream).even(&pixels, &mut counts, 0, 256)?; // HistogramEven, torch.histc
    assert_eq!(stream.download(&counts)?, [3, 0, 0, 2]);
    let mut kept = stream.alloc::<i32>(input.len())?; // room for all: DeviceSelect::If, masked_select
    let lt4 = reduce_scan::select::predicate("lt:4")?; // lt, le, gt, ge, eq, ne:X, nonzero
    let n = reduce_scan::Select::<i32>::new(&stream).select_if(&input, lt4, &mut kept)?; // one pass, in order
    assert_eq!(stream.download_prefix(&kept, n)?, [3, 1, 1, 2]);
    let spans = stream.upload(&[7, 7, 7, 2, 2, 9])?;
    let (mut firsts, mut lengths) = (stream.alloc::<i32>(6)?, stream.alloc::<u32>(6)?); // RunLengthEncode
    let runs = reduce_scan::Select::<i32>::new(&stream).run_length_encode(&spans, &mut firsts, &mut lengths)?;
    assert_eq!(stream.download_prefix(&lengths, runs)?, [3, 2, 1]); // each run's first: [7, 2, 9]
    // README: end
    println!("the README's tour ran on {}", backend.info());
    Ok(())
}
