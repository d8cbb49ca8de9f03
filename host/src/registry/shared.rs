//! *Professional CUDA C Programming*, chapter 5: reduction in shared memory.

use super::Variant;

pub(super) static VARIANTS: &[Variant] = &[];
