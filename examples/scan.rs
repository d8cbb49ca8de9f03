//! Prefix sums from Rust: a `Scanner` (the single-pass look-back scan) reused for an inclusive
//! and an exclusive scan into a caller-owned output buffer.
//!
//! `cargo run --example scan` — on the GPU if there is one, else on the CPU emulator.

use reduce_scan::{Backend, BackendKind, Scanner, Sum};

fn main() -> reduce_scan::MainResult {
    let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
    if let Some(why) = no_gpu {
        println!("no GPU ({why}): running on the CPU emulator");
    }
    let data: Vec<i32> = (1..=100_000).map(|i| i % 10).collect();
    let input = backend.upload(&data)?;
    let mut output = backend.alloc::<i32>(data.len())?;
    let mut scanner = Scanner::<i32, Sum>::new(&backend);

    scanner.inclusive(&input, &mut output)?;
    let inclusive = backend.download(&output)?;
    scanner.exclusive(&input, &mut output)?;
    let exclusive = backend.download(&output)?;

    let mut running = 0i32;
    for (i, &x) in data.iter().enumerate() {
        assert_eq!(exclusive[i], running, "exclusive scan, element {i}");
        running = running.wrapping_add(x);
        assert_eq!(inclusive[i], running, "inclusive scan, element {i}");
    }
    println!("inclusive[..8] = {:?}", &inclusive[..8]);
    println!("exclusive[..8] = {:?}", &exclusive[..8]);
    println!("last = {} over {} elements; both scans agree with the CPU", inclusive[data.len() - 1], data.len());
    Ok(())
}
