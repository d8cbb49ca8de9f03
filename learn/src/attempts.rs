//! The learner's kernels as the course checks them: one [`Attempt`] per exercise, from the
//! learner's files (`work`) or, for the tests, the starting files (`start`). This table is
//! compiled with the learner's files, and the course (`reduce-scan-course`) apart from them, so
//! that an edit recompiles only this crate.

use course::exercises::{Attempt, Code, CompactKernels, ScanKernels, TRIP};
use kernels::device::global::GlobalMut;
use reduce_scan::backend::{FromHost, Kernel};
use reduce_scan::reduce::plan::{Grid, InPlaceArgs};

#[cfg(test)]
use crate::start;
use crate::work;

/// A kernel of an exercise module, for the emulator: `kernel_ref!` with the module as a macro
/// argument.
macro_rules! kernel_of {
    ($root:ident :: $m:ident :: $f:ident, $($arg:ident),*) => {
        reduce_scan::kernel_ref!($root::$m::$f($($arg),*))
    };
}

/// `complete_unroll::<BLOCK>` of an exercise module, for every block size.
macro_rules! per_block {
    ($root:ident) => {{
        macro_rules! one {
            ($b:literal) => {
                (
                    $b,
                    Kernel::<InPlaceArgs> {
                        name: concat!("complete_unroll_", $b),
                        // SAFETY: the launcher that holds this Kernel checked the arguments.
                        emu: |(a, b, n)| unsafe {
                            $root::e07::complete_unroll::<$b>(
                                <GlobalMut<i32> as FromHost>::from_host(a),
                                <GlobalMut<i32> as FromHost>::from_host(b),
                                n,
                            )
                        },
                        // The learner's PTX replaces the project's module (`ptx::load_module_instead`).
                        module: &reduce_scan::ptx::KERNELS,
                    },
                )
            };
        }
        static TABLE: [(u32, Kernel<InPlaceArgs>); 6] =
            [one!(32), one!(64), one!(128), one!(256), one!(512), one!(1024)];
        &TABLE
    }};
}

/// The attempts of an exercise module tree (`work`: the learner's files; `start`: the
/// starting files), in exercise order.
macro_rules! attempts {
    ($root:ident, $source:ident) => {
        [
            Attempt {
                code: Code::InPlace(kernel_of!($root::e01::neighbored_less, a, b, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("01_neighbored_less.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e02::interleaved, a, b, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("02_interleaved.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e03::unroll2, a, b, n)),
                items: $root::e03::ITEMS_PER_THREAD,
                grid: Grid::PerItems,
                source: $source!("03_unroll2.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e04::unroll8, a, b, n)),
                items: $root::e04::ITEMS_PER_THREAD,
                grid: Grid::PerItems,
                source: $source!("04_unroll8.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e05::unroll_warps8, a, b, n)),
                items: 8,
                grid: Grid::PerItems,
                source: $source!("05_unroll_warps8.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e06::complete_unroll_warps8, a, b, n)),
                items: 8,
                grid: Grid::PerItems,
                source: $source!("06_complete_unroll_warps8.rs"),
            },
            Attempt {
                code: Code::PerBlock(per_block!($root)),
                items: 8,
                grid: Grid::PerItems,
                source: $source!("07_complete_unroll.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e08::smem, a, b, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("08_smem.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e09::smem_unroll4, a, b, n)),
                items: $root::e09::ITEMS_PER_THREAD,
                grid: Grid::PerItems,
                source: $source!("09_smem_unroll4.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e10::smem_unroll4_dyn, a, b, n)),
                items: 4,
                grid: Grid::PerItems,
                source: $source!("10_smem_unroll4_dyn.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e11::warp_shuffle, a, b, n)),
                items: $root::e11::ITEMS_PER_THREAD,
                grid: Grid::PerItems,
                source: $source!("11_warp_shuffle.rs"),
            },
            Attempt {
                code: Code::Clocked(kernel_of!($root::e12::squares_coalesced, a, r, c, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("12_squares_coalesced.rs"),
            },
            Attempt {
                code: Code::Scan(ScanKernels::Fenwick(
                    kernel_of!($root::e13::bit_build, a, b, c, d),
                    kernel_of!($root::e13::bit_query, a, b, c, d),
                )),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("13_bit.rs"),
            },
            Attempt {
                code: Code::Scan(ScanKernels::ReduceThenScan(
                    kernel_of!($root::e14::blelloch_reduce, a, b, c),
                    kernel_of!($root::e14::blelloch_block, a, b, c, d, e),
                )),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("14_blelloch.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e15::interleaved_nobarrier, a, b, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("15_interleaved_nobarrier.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e16::unroll2_offbyone, a, b, n)),
                items: 2,
                grid: Grid::PerItems,
                source: $source!("16_unroll2_offbyone.rs"),
            },
            Attempt {
                code: Code::InPlace(kernel_of!($root::e17::unroll_warps8_volatile, a, b, n)),
                items: 8,
                grid: Grid::PerItems,
                source: $source!("17_unroll_warps8_volatile.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e18::smem_uninit, a, b, n)),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("18_smem_uninit.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e19::redux, a, b, n)),
                items: 8,
                grid: Grid::PerItems,
                source: $source!("19_redux.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e20::grid_stride, a, b, n)),
                items: if $root::e20::RESIDENT_GRID { 1 } else { 8 },
                grid: if $root::e20::RESIDENT_GRID { Grid::Resident } else { Grid::PerItems },
                source: $source!("20_grid_stride.rs"),
            },
            Attempt {
                code: Code::Read(kernel_of!($root::e21::vector_loads, a, b, n)),
                items: TRIP,
                grid: Grid::Resident,
                source: $source!("21_vector_loads.rs"),
            },
            Attempt {
                code: Code::LastBlock(kernel_of!($root::e22::single_pass, a, p, t, o, n)),
                items: TRIP,
                grid: Grid::Resident,
                source: $source!("22_single_pass.rs"),
            },
            Attempt {
                code: Code::Accumulate(kernel_of!($root::e23::atomic_accumulate, a, acc, n, e)),
                items: TRIP,
                grid: Grid::Resident,
                source: $source!("23_atomic_accumulate.rs"),
            },
            Attempt {
                code: Code::Scan(ScanKernels::Lookback(kernel_of!($root::e24::lookback, a, b, c, d, e, f))),
                items: 1,
                grid: Grid::PerItems,
                source: $source!("24_lookback.rs"),
            },
            Attempt {
                code: Code::LastBlock(kernel_of!($root::e25::single_pass_nofence, a, p, t, o, n)),
                items: TRIP,
                grid: Grid::Resident,
                source: $source!("25_single_pass_nofence.rs"),
            },
            Attempt {
                code: Code::Histogram(Kernel::of(&reduce_scan::ptx::KERNELS, $root::e26::histogram_shared::KERNEL)),
                items: 1,
                grid: Grid::Resident,
                source: $source!("26_histogram_shared.rs"),
            },
            Attempt {
                code: Code::Compaction(if $root::e27::ONE_PASS {
                    CompactKernels::OnePass(Kernel::of(
                        &reduce_scan::ptx::KERNELS,
                        $root::e27::compact_one_pass::KERNEL,
                    ))
                } else {
                    CompactKernels::ThreeLaunches(
                        Kernel::of(&reduce_scan::ptx::KERNELS, $root::e27::compact_flags::KERNEL),
                        Kernel::of(&reduce_scan::ptx::KERNELS, $root::e27::compact_offsets::KERNEL),
                        Kernel::of(&reduce_scan::ptx::KERNELS, $root::e27::compact_scatter::KERNEL),
                    )
                }),
                items: $root::e27::ITEMS_PER_THREAD as u32,
                grid: Grid::PerItems,
                source: $source!("27_compact_one_pass.rs"),
            },
        ]
    };
}

/// The learner's files, `learn/exercises/`.
pub fn learner() -> [Attempt; 27] {
    attempts!(work, work_source)
}

/// The starting files, `learn/start/` (what a learner gets; the tests check each fails for
/// its lesson's reason).
#[cfg(test)]
pub fn starting() -> [Attempt; 27] {
    attempts!(start, start_source)
}
