//! `./x learn`: the book's lessons as exercises, on the CPU emulator.
//!
//! ```text
//! ./x learn                  the exercises and your progress
//! ./x learn N                check exercise N: your file learn/exercises/NN_<lesson>.rs
//! ./x learn N --solution     the project's kernel beside your file (a diff)
//! ./x learn N --reset        start exercise N again (your file is kept as …rs.bak-<time>)
//! ./x learn N --gpu          also on the GPU: your kernel's time, beside the project's, and
//!                            Nsight Compute's counters beside the emulator's (where ncu is)
//! ```
//!
//! Each exercise is a lesson's starting kernel (`from`: mostly the previous lesson's) with the
//! lesson's change left to make, in the learner's file, which opens as
//! `learn/course/src/open.rs` says. The check runs your kernel on the emulator at several sizes
//! and blocks, with its checks (bounds, races, barriers), and measures the lesson's counter
//! against its goal. Exit status: 0 when the exercise passes, 1 when not yet, 2 for bad input.
//!
//! This crate holds the learner's files and the table of their kernels (`attempts`); the
//! course itself (the exercises, the check, the command line) is `reduce-scan-course`
//! (`learn/course/`), compiled apart, so that an edit recompiles this small crate alone.

// `work_source!("NN_<lesson>.rs")`: the text of the file `work`'s module eNN is compiled from.
include!(concat!(env!("OUT_DIR"), "/work_source.rs"));

/// `start_source!("NN_<lesson>.rs")`: the text of a starting file.
#[cfg(test)]
macro_rules! start_source {
    ($file:literal) => {
        include_str!(concat!("../start/", $file))
    };
}

mod attempts;

/// The starting files (learn/start/), one module each, for the tests.
#[cfg(test)]
#[rustfmt::skip]
macro_rules! exercise_files {
    () => {
        #[path = "01_neighbored_less.rs"] pub mod e01;
        #[path = "02_interleaved.rs"] pub mod e02;
        #[path = "03_unroll2.rs"] pub mod e03;
        #[path = "04_unroll8.rs"] pub mod e04;
        #[path = "05_unroll_warps8.rs"] pub mod e05;
        #[path = "06_complete_unroll_warps8.rs"] pub mod e06;
        #[path = "07_complete_unroll.rs"] pub mod e07;
        #[path = "08_smem.rs"] pub mod e08;
        #[path = "09_smem_unroll4.rs"] pub mod e09;
        #[path = "10_smem_unroll4_dyn.rs"] pub mod e10;
        #[path = "11_warp_shuffle.rs"] pub mod e11;
        #[path = "12_squares_coalesced.rs"] pub mod e12;
        #[path = "13_bit.rs"] pub mod e13;
        #[path = "14_blelloch.rs"] pub mod e14;
        #[path = "15_interleaved_nobarrier.rs"] pub mod e15;
        #[path = "16_unroll2_offbyone.rs"] pub mod e16;
        #[path = "17_unroll_warps8_volatile.rs"] pub mod e17;
        #[path = "18_smem_uninit.rs"] pub mod e18;
        #[path = "19_redux.rs"] pub mod e19;
        #[path = "20_grid_stride.rs"] pub mod e20;
        #[path = "21_vector_loads.rs"] pub mod e21;
        #[path = "22_single_pass.rs"] pub mod e22;
        #[path = "23_atomic_accumulate.rs"] pub mod e23;
        #[path = "24_lookback.rs"] pub mod e24;
        #[path = "25_single_pass_nofence.rs"] pub mod e25;
        #[path = "26_histogram_shared.rs"] pub mod e26;
        #[path = "27_compact_one_pass.rs"] pub mod e27;
    };
}

/// The learner's files (learn/exercises/), or the starting file of an exercise not yet open
/// (build.rs decides, `learn/course/src/open.rs` says how).
// An exercise not yet open is compiled from its starting file, which `start` loads too.
#[allow(unused, clippy::duplicate_mod)]
mod work {
    include!(concat!(env!("OUT_DIR"), "/work_modules.rs"));
}

#[cfg(test)]
#[allow(unused, clippy::duplicate_mod)]
#[path = "../start"]
mod start {
    exercise_files!();
}

/// The learner's kernels as PTX for sm_70 and sm_80 (which alone has exercise 19's `redux.sync`),
/// built by build.rs under `LEARN_GPU=1` (`./x learn N --gpu`); empty otherwise. A GPU loads the
/// newest it runs.
static LEARNER_PTX: reduce_scan::ptx::Module = reduce_scan::ptx::Module::new(
    "learner",
    &[
        ("sm_70", (7, 0), include_str!(concat!(env!("OUT_DIR"), "/learner_sm_70.ptx"))),
        ("sm_80", (8, 0), include_str!(concat!(env!("OUT_DIR"), "/learner_sm_80.ptx"))),
    ],
);

fn main() -> std::process::ExitCode {
    course::cli::run(&course::cli::Learner { attempts: attempts::learner(), ptx: &LEARNER_PTX })
}

#[cfg(test)]
mod tests;
