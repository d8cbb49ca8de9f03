//! Criterion benches of the reduction variants (filled in by the benches work).
fn main() {}
