//! The library call: the sum (and the maximum) of a device buffer, with a `Reducer` that owns
//! its temporary storage and is reused (as a CUB user keeps `d_temp_storage`).
//!
//! `cargo run --example sum` — on the GPU if there is one, else on the CPU emulator.

use reduce_scan::{Backend, BackendKind, Max, Reducer, Sum};

fn main() -> reduce_scan::MainResult {
    let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
    if let Some(why) = no_gpu {
        println!("no GPU ({why}): running on the CPU emulator");
    }
    println!("device: {}", backend.info());

    let data: Vec<i32> = (0..1_000_000).map(|i| (i % 1000) - 500).collect();
    let input = backend.upload(&data)?;
    let mut reducer = Reducer::<i32, Sum>::new(&backend);

    let total = reducer.reduce(&input)?;
    let head = reducer.reduce_range(&input, 0..1000)?; // no allocation: the storage is reused
    let largest = Reducer::<i32, Max>::new(&backend).reduce(&input)?; // any type, any operator
    println!("sum of {} elements: {total}; of the first 1000: {head}", data.len());

    let want: i32 = data.iter().fold(0i32, |a, &x| a.wrapping_add(x));
    assert_eq!(total, want, "the device disagrees with the CPU");
    assert_eq!(head, data[..1000].iter().sum::<i32>());
    assert_eq!(largest, 499);
    println!("both agree with the CPU");
    Ok(())
}
