//! The kernel sources, compiled in (`include_str!`), so that the report reads each kernel's
//! doc comment without the repository at run time. `tests` checks every registered variant
//! has its file here.

/// (path under `kernels/src/`, contents) of every kernel file a variant names.
pub static SOURCES: &[(&str, &str)] = &[
    ("reduce/atomic_accumulate.rs", include_str!("../../../kernels/src/reduce/atomic_accumulate.rs")),
    ("reduce/complete_unroll.rs", include_str!("../../../kernels/src/reduce/complete_unroll.rs")),
    ("reduce/complete_unroll_warps8.rs", include_str!("../../../kernels/src/reduce/complete_unroll_warps8.rs")),
    ("reduce/gmem.rs", include_str!("../../../kernels/src/reduce/gmem.rs")),
    ("reduce/grid_stride.rs", include_str!("../../../kernels/src/reduce/grid_stride.rs")),
    ("reduce/interleaved.rs", include_str!("../../../kernels/src/reduce/interleaved.rs")),
    ("reduce/neighbored.rs", include_str!("../../../kernels/src/reduce/neighbored.rs")),
    ("reduce/neighbored_less.rs", include_str!("../../../kernels/src/reduce/neighbored_less.rs")),
    ("reduce/redux.rs", include_str!("../../../kernels/src/reduce/redux.rs")),
    ("reduce/single_pass.rs", include_str!("../../../kernels/src/reduce/single_pass.rs")),
    ("reduce/smem.rs", include_str!("../../../kernels/src/reduce/smem.rs")),
    ("reduce/smem_unroll4.rs", include_str!("../../../kernels/src/reduce/smem_unroll4.rs")),
    ("reduce/smem_unroll4_dyn.rs", include_str!("../../../kernels/src/reduce/smem_unroll4_dyn.rs")),
    ("reduce/unroll2.rs", include_str!("../../../kernels/src/reduce/unroll2.rs")),
    ("reduce/unroll4.rs", include_str!("../../../kernels/src/reduce/unroll4.rs")),
    ("reduce/unroll8.rs", include_str!("../../../kernels/src/reduce/unroll8.rs")),
    ("reduce/unroll_warps8.rs", include_str!("../../../kernels/src/reduce/unroll_warps8.rs")),
    ("reduce/vector_loads.rs", include_str!("../../../kernels/src/reduce/vector_loads.rs")),
    ("reduce/warp_shuffle.rs", include_str!("../../../kernels/src/reduce/warp_shuffle.rs")),
    ("sumsq/squares_block_tree.rs", include_str!("../../../kernels/src/sumsq/squares_block_tree.rs")),
    ("sumsq/squares_chunked.rs", include_str!("../../../kernels/src/sumsq/squares_chunked.rs")),
    ("sumsq/squares_coalesced.rs", include_str!("../../../kernels/src/sumsq/squares_coalesced.rs")),
    ("sumsq/squares_grid_stride.rs", include_str!("../../../kernels/src/sumsq/squares_grid_stride.rs")),
    ("sumsq/squares_one_thread.rs", include_str!("../../../kernels/src/sumsq/squares_one_thread.rs")),
    ("scan/bit.rs", include_str!("../../../kernels/src/scan/bit.rs")),
    ("scan/blelloch_unpadded.rs", include_str!("../../../kernels/src/scan/blelloch_unpadded.rs")),
    ("scan/blelloch.rs", include_str!("../../../kernels/src/scan/blelloch.rs")),
    ("scan/lookback.rs", include_str!("../../../kernels/src/scan/lookback.rs")),
];
