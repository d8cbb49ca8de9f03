//! Modern reductions: warp shuffles, `redux.sync`, vector loads, grid-stride loops, single pass.

use super::Variant;

pub(super) static VARIANTS: &[Variant] = &[];
