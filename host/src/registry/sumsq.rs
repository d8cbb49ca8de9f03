//! The sum-of-squares tutorial: one thread → many blocks with a shared-memory tree, timed with in-kernel clocks.

use super::Variant;

pub(super) static VARIANTS: &[Variant] = &[];
