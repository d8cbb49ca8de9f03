//! The driver layer's unit tests.

use super::sys::FUNCTIONS;

/// The tests' stand-in driver (built by the root package's build script) defines the
/// functions of `runtime/cuda-stub/functions.txt`: the same list as the table's.
#[test]
fn the_function_list_is_the_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/cuda-stub/functions.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let listed: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert_eq!(listed, FUNCTIONS, "{path} lists other functions than driver/sys.rs loads");
}
