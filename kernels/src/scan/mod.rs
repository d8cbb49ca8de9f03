//! Prefix sums (scans) of `i32`, wrapping: `output[i] = input[0] + … + input[i]` (inclusive)
//! or `input[0] + … + input[i-1]` (exclusive, `output[0] = 0`).
//!
//! Three ways to parallelise a sequential recurrence, each fixing the previous one's cost:
//!
//! | variant | kernels | work | passes over the data | idea |
//! |---|---|---|---|---|
//! | `bit` | [`bit_build`] ×levels, [`bit_query`] | O(n log T + (n/T) log n), tiles of T = 2048 | 2 reads + 2 writes | Fenwick tree: build it, query every prefix (the part above a tile once per tile) |
//! | `blelloch_unpadded` | [`blelloch_unpadded_reduce`] ×levels, [`blelloch_unpadded_block`] ×levels | O(n) | 2 reads + 1 write | `blelloch` with its tree one word per node: the bank conflicts that the padding removes |
//! | `blelloch` | [`blelloch_reduce`] ×levels, [`blelloch_block`] ×levels | O(n) | 2 reads + 1 write | up-sweep/down-sweep in padded shared memory over 4-element leaves, reduce-then-scan across blocks |
//! | `lookback` | [`lookback`](fn@lookback) | O(n) | 1 read + 1 write | single pass, decoupled look-back across tiles |
//! | `lookback_bulk` | [`lookback_bulk`] | O(n) | 1 read + 1 write | `lookback` with sm_90's bulk copies: one instruction moves the tile |
//! | `lookback_persistent` | [`lookback_persistent`] | O(n) | 1 read + 1 write | persistent blocks, tiles by ticket, the next tile loading during the look-back (slower) |
//! | `lookback_warpspec` | [`lookback_warpspec`] | O(n) | 1 read + 1 write | warp-specialized persistent blocks: a producer warp, a look-ahead warp, compute warps, joined by a ring of stages and `mbarrier`s, no block barrier on the look-back path |
//!
//! `lookback`'s body is generic over the element type and operator of [`crate::types`]: `lookback`
//! is its `i32` × sum, [`lookback_generic`] the other 17 pairs, PTX entries
//! `lookback__{type}_{op}` (`lookback__f64_max`). So is `lookback_warpspec`'s, at the shape
//! [`WARPSPEC_TYPED`] (8x12x6): [`lookback_warpspec_generic`], PTX entries
//! `lookback_warpspec_8x12x6__{type}_{op}`.
//!
//! Every kernel reads its `input` and writes a separate `output` (or a scratch buffer the
//! host owns); none writes the caller's input. Index math and the look-back status word are
//! plain functions in [`index`], unit-tested on the host.

mod bit;
mod blelloch;
mod blelloch_unpadded;
pub mod index;
/// `lookback`: the `i32` sum, its tuning shapes and ablations, the generic body and its
/// instantiations `lookback::{type}::{op}` (made by `typed_kernel!`).
pub mod lookback;
mod lookback_bulk;
mod lookback_persistent;
mod lookback_warpspec;

pub use bit::{BIT_BLOCK, BIT_BUILD_SHARED_BYTES, BIT_ITEMS, BIT_QUERY_SHARED_BYTES, BIT_SPAN, bit_build, bit_query};
pub use blelloch::{
    BLELLOCH_BLOCK, BLELLOCH_BLOCK_SHARED_BYTES, BLELLOCH_LEAF, BLELLOCH_LEAVES, BLELLOCH_REDUCE_SHARED_BYTES,
    BLELLOCH_TILE, blelloch_block, blelloch_reduce,
};
pub use blelloch_unpadded::{BLELLOCH_UNPADDED_SHARED_BYTES, blelloch_unpadded_block, blelloch_unpadded_reduce};
pub use lookback::{
    HINT_EVICT_FIRST, HINT_PREFETCH_256, HINT_STREAM_STORE, HINTS_NONE, LOOKBACK_HINTS, LOOKBACK_ITEMS,
    LOOKBACK_SHARED_BYTES, LOOKBACK_SLEEP_NS, LOOKBACK_THREADS, LOOKBACK_TILE, LOOKBACK_TUNING, lookback,
    lookback_128x44, lookback_128x60, lookback_192x44, lookback_256x28, lookback_evict_first, lookback_no_hints,
    lookback_prefetch256, lookback_shared_bytes, lookback_sleep64, lookback_sleep1024, lookback_spin,
    lookback_stream_store,
};
#[cfg(not(target_arch = "nvptx64"))]
pub use lookback::{lookback_probe, lookback_split_probe, lookback_windows_probe};
pub use lookback_bulk::{BULK_ITEMS, BULK_THREADS, BULK_TILE, lookback_bulk, lookback_bulk_load_only};
pub use lookback_persistent::{
    PERSISTENT_ITEMS, PERSISTENT_STAGES, PERSISTENT_THREADS, PERSISTENT_TILE, lookback_persistent,
    lookback_persistent_shared_bytes,
};
pub use lookback_warpspec::{
    WARPSPEC_ITEMS, WARPSPEC_SHAPES, WARPSPEC_STAGES, WARPSPEC_WARPS, lookback_warpspec, lookback_warpspec_4x12x6,
    lookback_warpspec_4x12x8, lookback_warpspec_4x20x4, lookback_warpspec_4x36x4, lookback_warpspec_8x4x6,
    lookback_warpspec_8x12x4, lookback_warpspec_8x12x6, lookback_warpspec_8x12x6_ahead2,
    lookback_warpspec_8x12x6_ahead3, lookback_warpspec_8x12x8, lookback_warpspec_8x12x8_ahead3,
    lookback_warpspec_8x12x8_ahead4, lookback_warpspec_8x12x10, lookback_warpspec_8x20x6, lookback_warpspec_8x28x3,
    lookback_warpspec_8x28x5, lookback_warpspec_8x36x3, lookback_warpspec_10x12x4, lookback_warpspec_12x12x4,
    lookback_warpspec_16x12x4, lookback_warpspec_16x12x6, lookback_warpspec_store_bulk, warpspec_shared_bytes,
    warpspec_static_bytes, warpspec_threads, warpspec_tile,
};
// The experiments with more than one look-ahead warp and with the stage given back early (#37),
// the block size of the first and the static shared memory of the second.
pub use lookback_warpspec::{
    lookback_warpspec_8x12x4_early_empty, lookback_warpspec_8x12x4_lookahead2, lookback_warpspec_8x12x6_early_empty,
    lookback_warpspec_8x12x6_early_empty_windows2, lookback_warpspec_8x12x6_lookahead2,
    lookback_warpspec_8x12x6_lookahead2_ahead2, lookback_warpspec_8x12x6_lookahead2_ahead3,
    lookback_warpspec_8x12x6_lookahead2_early_empty, lookback_warpspec_8x12x6_lookahead3,
    lookback_warpspec_8x12x6_sleep64, lookback_warpspec_8x12x6_spin, lookback_warpspec_8x12x6_windows2,
    lookback_warpspec_8x12x6_windows4, lookback_warpspec_8x12x8_lookahead2_ahead4, warpspec_static_bytes_with,
    warpspec_threads_with,
};
// How far apart the plan's warp-specialized scan lays its 32-bit status words (#37), and the
// experiment that keeps them packed.
pub use lookback_warpspec::{WARPSPEC_SPACED_WORDS, lookback_warpspec_8x12x6_packed};
// The warp-specialized scan of every other type and operator: `lookback_warpspec_generic`, its
// shape; its 17 entries `lookback_warpspec_8x12x6__{type}_{op}` are the modules
// `lookback_warpspec_8x12x6::{type}::{op}` (re-exported above with the `i32` sum of that name).
pub use lookback_warpspec::{WARPSPEC_TYPED, lookback_warpspec_generic, warpspec_items, warpspec_status_words};
// The look-back scan of every other type and operator: `lookback_generic`, its shape; its 17
// entries `lookback__{type}_{op}` are the modules `lookback::{type}::{op}`.
pub use lookback::{LOOKBACK_GENERIC_SHARED_BYTES, lookback_generic, lookback_items, lookback_tile};
