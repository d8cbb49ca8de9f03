//! The exercises: one per step of the book's lessons, in its order. Each names the lesson's
//! kernel, the one it starts from, what to change and why, the book's section, and the
//! measure that shows the lesson, with its goal.

use kernels::device::global::GlobalMut;
use kernels::device::slice::{AtomicSlice, Slice};
use reduce_scan::backend::Kernel;
use reduce_scan::reduce::plan::{
    AccumulateArgs, ClockedArgs, Finish, Grid, InPlaceArgs, KernelSel, ReadArgs, SinglePassArgs,
};
use reduce_scan::registry;
use reduce_scan::scan::ScanPlan;
use reduce_scan::scan::{BitBuildArgs, BitQueryArgs, BlellochBlockArgs, BlellochReduceArgs, LookbackArgs};

/// Exercise 13's goal: at most this many global load requests per block, over the build and
/// query launches at a scan's measure shape (n = 2^15, `check::MEASURE_SCAN_N`, the emulator's
/// counters): the project's `bit` makes 16.58, the starting file (its tree levels in global
/// memory) 108.82
/// (learn/src/tests.rs checks that the one passes and the other fails).
pub const GOAL_GLOBAL_LOADS_PER_BLOCK: f64 = 20.0;

/// What a check measures to see the lesson.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Active lanes per global request (the emulator's): divergence.
    LanesPerRequest,
    /// Global load efficiency, %: coalescing.
    GldEfficiency,
    /// Elements each thread adds: n over the threads launched.
    ElementsPerThread,
    /// Block barriers per block.
    BarriersPerBlock,
    /// Global store requests per block.
    GlobalStoresPerBlock,
    /// `while` loops in the kernel's file.
    Loops,
    /// Static shared arrays (`static_shared!`) in the kernel's file.
    StaticShared,
    /// Shared-memory load bank conflicts: wavefronts beyond one per request.
    SharedLoadConflicts,
    /// Global load requests (warp-wide load instructions) per block, over every launch.
    GlobalLoadsPerBlock,
    /// Warp collectives (shuffles, votes, `redux`) per warp.
    WarpCollectivesPerWarp,
    /// Bytes asked for per global load request: 128 for a warp's 4-byte loads, 512 for 16-byte.
    BytesPerLoadRequest,
    /// Partials the host reads back and adds: one per block, or none when the kernel finishes.
    HostAdds,
    /// Atomic read-modify-writes (`atom`, `red`) per block.
    AtomicsPerBlock,
    /// Bytes of global memory read (loads, `cp.async` and bulk copies) over the bytes of the
    /// input: how many times it is read.
    InputPasses,
    /// Global atomics (each thread's `atomicAdd` on a global address) per input element.
    GlobalAtomicsPerElement,
}

impl Measure {
    /// How the check names it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::LanesPerRequest => "active lanes per global request",
            Measure::GldEfficiency => "global load efficiency %",
            Measure::ElementsPerThread => "elements added per thread",
            Measure::BarriersPerBlock => "block barriers per block",
            Measure::GlobalStoresPerBlock => "global store requests per block",
            Measure::Loops => "`while` loops in your file",
            Measure::StaticShared => "static shared arrays (`static_shared!`) in your file",
            Measure::SharedLoadConflicts => "shared load bank conflicts",
            Measure::GlobalLoadsPerBlock => "global load requests per block",
            Measure::WarpCollectivesPerWarp => "warp shuffles and reductions per warp",
            Measure::BytesPerLoadRequest => "bytes per global load request",
            Measure::HostAdds => "partials the host adds",
            Measure::AtomicsPerBlock => "atomics per block",
            Measure::InputPasses => "passes over the input (bytes read ÷ input bytes)",
            Measure::GlobalAtomicsPerElement => "global atomics per input byte",
        }
    }
}

/// A measure's goal: at least or at most a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Goal {
    /// The measure must reach this value.
    AtLeast(Measure, f64),
    /// The measure must not exceed this value.
    AtMost(Measure, f64),
}

impl Goal {
    /// The measure.
    pub fn measure(self) -> Measure {
        match self {
            Goal::AtLeast(m, _) | Goal::AtMost(m, _) => m,
        }
    }

    /// Does `value` reach the goal?
    pub fn met(self, value: f64) -> bool {
        match self {
            Goal::AtLeast(_, g) => value >= g,
            Goal::AtMost(_, g) => value <= g,
        }
    }

    /// `(want ≥ 20)`.
    pub fn want(self) -> String {
        match self {
            Goal::AtLeast(_, g) => format!("want ≥ {g}"),
            Goal::AtMost(_, 0.0) => "want 0".to_string(),
            Goal::AtMost(_, g) => format!("want ≤ {g}"),
        }
    }
}

/// One exercise.
pub struct Exercise {
    /// Its number, from 1.
    pub number: u32,
    /// The lesson's kernel (a registered variant, or one of [`LESSON_KERNELS`]).
    pub lesson: &'static str,
    /// The registered kernel its starting file is made from (the previous lesson's), with what
    /// was taken out of it after a comma where the starting file is not simply that kernel.
    pub from: &'static str,
    /// What it teaches, in a few words.
    pub title: &'static str,
    /// The book's section.
    pub book: &'static str,
    /// What to change, and why.
    pub text: &'static str,
    /// The lesson's measure and its goal.
    pub goal: Goal,
    /// A bug hunt's bug (`Some("nobarrier")`): its starting file is the project's `lesson` kernel
    /// with that bug planted, as `{lesson}_{bug}`; `None` for a lesson.
    pub hunt: Option<&'static str>,
}

impl Exercise {
    /// The kernel of its starting file: the lesson's, or for a bug hunt `{lesson}_{bug}`.
    pub fn kernel(&self) -> String {
        match self.hunt {
            Some(bug) => format!("{}_{bug}", self.lesson),
            None => self.lesson.to_string(),
        }
    }

    /// The file name of its starting file and of the learner's copy.
    pub fn file(&self) -> String {
        format!("{:02}_{}.rs", self.number, self.kernel())
    }

    /// The project's kernel file, the solution.
    pub fn solution_path(&self) -> String {
        let dir = match self.number {
            12 => "sumsq",
            13 | 14 | 24 => "scan",
            26 => "histogram",
            27 => "select",
            _ => "reduce",
        };
        format!("kernels/src/{dir}/{}.rs", self.lesson)
    }
}

/// Every exercise, in the book's order.
pub const EXERCISES: [Exercise; 27] = [
    Exercise {
        number: 1,
        lesson: "neighbored_less",
        from: "neighbored",
        title: "divergence: keep the working threads together",
        book: "Professional CUDA C Programming, §3.4 \"Improving Divergence in Parallel Reduction\" (reduceNeighboredLess)",
        text: "In `neighbored`, thread tid works when tid % (2*stride) == 0: the working threads are spread over \
               every warp, so every warp runs the add for a few lanes and idles the rest. Give the work of round \
               `stride` to the first threads instead: thread tid adds at index 2*stride*tid (when that index and \
               its partner are in the block). Whole warps then have nothing to do and skip the add.",
        goal: Goal::AtLeast(Measure::LanesPerRequest, 20.0),
        hunt: None,
    },
    Exercise {
        number: 2,
        lesson: "interleaved",
        from: "neighbored_less",
        title: "coalescing: pairs half a block apart",
        book: "Professional CUDA C Programming, §3.4 \"Reducing with Interleaved Pairs\" (reduceInterleaved)",
        text: "`neighbored_less` packs the working threads, but thread tid reads index 2*stride*tid: a warp's 32 \
               loads are 2*stride words apart, so each 32-byte sector serves one of them. Pair elements `stride` \
               apart with stride halving from block/2 down to 1: thread tid (< stride) adds idata[tid + stride] \
               into idata[tid]. A warp then reads 32 consecutive words: one request, four sectors, all used.",
        goal: Goal::AtLeast(Measure::GldEfficiency, 90.0),
        hunt: None,
    },
    Exercise {
        number: 3,
        lesson: "unroll2",
        from: "interleaved",
        title: "unrolling: two data blocks per thread block",
        book: "Professional CUDA C Programming, §3.5 \"Reducing with Unrolling\" (reduceUnrolling2)",
        text: "Half the threads of `interleaved` idle from the first round on. Let each thread block cover two data \
               blocks: set ITEMS_PER_THREAD to 2 (the host then launches half the blocks), and make the segment \
               block_segment(n, b, seg) gives twice as long (its third argument is the elements per block, \
               block * ITEMS_PER_THREAD: it returns the segment's first element and how many of them exist). \
               Before the tree, let thread tid add the element one block further on into its own (when it \
               exists: tid + block < len), then a barrier (sync_threads), since the tree's first round reads what \
               other threads folded. Twice the loads are in flight per thread, and half the trees are built.",
        goal: Goal::AtLeast(Measure::ElementsPerThread, 2.0),
        hunt: None,
    },
    Exercise {
        number: 4,
        lesson: "unroll8",
        from: "unroll2",
        title: "unrolling: eight data blocks per thread block",
        book: "Professional CUDA C Programming, §3.5 \"Reducing with Unrolling\" (reduceUnrolling8)",
        text: "Take the fold further: ITEMS_PER_THREAD = 8, and each thread adds the 8 elements a block apart \
               before the tree (all 8 loads independent, so all 8 in flight). An eighth of the blocks, an eighth \
               of the trees. The factor is written in five places: the constant (the host sizes the grid with \
               it), the segment (block_segment's 2 * block), the whole-stripe test (fold_index(tid, block, 1): \
               the stripe's last element), the loop (0..2) and the short block's count (fold_count's 2); write \
               ITEMS_PER_THREAD in each. An out-of-bounds read in the fold means the grid and the fold disagree: \
               blocks sized for one factor read segments of another.",
        goal: Goal::AtLeast(Measure::ElementsPerThread, 8.0),
        hunt: None,
    },
    Exercise {
        number: 5,
        lesson: "unroll_warps8",
        from: "unroll8",
        title: "the last warp needs no block barrier",
        book: "Professional CUDA C Programming, §3.5 \"Reducing with Unrolled Warps\" (reduceUnrollWarps8)",
        text: "Once 32 or fewer threads work, they are one warp: a block barrier per round is more than they need. \
               Run the barrier loop only while stride > 32, then let the first warp finish the strides 32, 16, …, 1 \
               with sync_warp(FULL_MASK) between them (the book's volatile last warp, with the warp barrier the \
               CUDA rules need since Volta).",
        goal: Goal::AtMost(Measure::BarriersPerBlock, 4.0),
        hunt: None,
    },
    Exercise {
        number: 6,
        lesson: "complete_unroll_warps8",
        from: "unroll_warps8",
        title: "complete unrolling: no loop in the tree",
        book: "Professional CUDA C Programming, §3.5 \"Reducing with Complete Unrolling\" (reduceCompleteUnrollWarps8)",
        text: "A block has at most 1024 threads, so the tree has at most 4 rounds above the last warp. Write them \
               out: for strides 512, 256, 128 and 64, `if block >= 2*stride { add }` and a barrier. The loop's \
               counter, compare and branch go.",
        goal: Goal::AtMost(Measure::Loops, 0.0),
        hunt: None,
    },
    Exercise {
        number: 7,
        lesson: "complete_unroll",
        from: "complete_unroll_warps8",
        title: "the block size at compile time",
        book: "Professional CUDA C Programming, §3.5 \"Reducing with Template Functions\" (reduceCompleteUnroll)",
        text: "The tests `block >= 1024`, … are made at run time in every block. Make the block size the const \
               generic BLOCK (the host launches complete_unroll::<BLOCK> with blockDim.x = BLOCK): test BLOCK \
               instead, and put each round's barrier inside its `if BLOCK >= …`, so an instantiation keeps only \
               its own rounds and barriers.",
        goal: Goal::AtMost(Measure::BarriersPerBlock, 4.0),
        hunt: None,
    },
    Exercise {
        number: 8,
        lesson: "smem",
        from: "gmem",
        title: "shared memory: the tree on chip",
        book: "Professional CUDA C Programming, §5.3 \"Reducing Global Memory Accesses\" (reduceSmem)",
        text: "`gmem` builds its tree in global memory: every round writes back to DRAM through L2. Copy the \
               block's segment into a shared array (static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]), one slot per \
               thread, a barrier after the copy; add `use kernels::static_shared;` and \
               `use kernels::collective::block::SHARED_TREE_SLOTS;`, docs/device-layer.md lists where each name \
               lives), run the same rounds on the shared array, and let thread 0 write \
               the block's sum to global memory: one global store per block.",
        goal: Goal::AtMost(Measure::GlobalStoresPerBlock, 1.0),
        hunt: None,
    },
    Exercise {
        number: 9,
        lesson: "smem_unroll4",
        from: "smem",
        title: "shared memory with four elements per thread",
        book: "Professional CUDA C Programming, §5.3 \"Improving Global Memory Access\" (reduceSmemUnroll)",
        text: "Each thread of `smem` loads one element. Let it add 4 elements a block apart before it writes its \
               slot (ITEMS_PER_THREAD = 4): 4 loads in flight per thread, a quarter of the blocks and trees.",
        goal: Goal::AtLeast(Measure::ElementsPerThread, 4.0),
        hunt: None,
    },
    Exercise {
        number: 10,
        lesson: "smem_unroll4_dyn",
        from: "smem_unroll4",
        title: "dynamic shared memory",
        book: "Professional CUDA C Programming, §5.3 \"Reducing with Dynamic Shared Memory\" (reduceSmemUnrollDyn)",
        text: "The static array is sized for the largest block. Size it at launch instead: \
               dynamic_shared::<i32>(block_dim_x() as usize) (the host passes 4 bytes per thread as the launch's \
               dynamic shared memory). One kernel then fits every block size exactly. dynamic_shared is an unsafe \
               fn: its promise is that the launch gave at least len × 4 bytes (CUDA's extern __shared__ array has \
               no length either); write that promise in the SAFETY comment of its unsafe block. The emulator \
               reports a length past the launch's bytes at the first access beyond them.",
        goal: Goal::AtMost(Measure::StaticShared, 0.0),
        hunt: None,
    },
    Exercise {
        number: 11,
        lesson: "warp_shuffle",
        from: "smem_unroll4",
        title: "warp shuffles: a warp adds in registers",
        book: "Professional CUDA C Programming, §5.6 \"Parallel Reduction Using the Warp Shuffle Instruction\" (reduceShfl)",
        text: "The shared tree needs a barrier per round. Within a warp, shfl_down_sync(FULL_MASK, v, offset) hands \
               a lane the value of the lane `offset` above it: 5 steps (16, 8, 4, 2, 1) sum a warp in registers. \
               Sum each warp so, let lane 0 of each warp write its sum to a shared slot, one barrier, then let the \
               first warp sum the slots the same way.",
        goal: Goal::AtMost(Measure::BarriersPerBlock, 1.0),
        hunt: None,
    },
    Exercise {
        number: 12,
        lesson: "squares_coalesced",
        from: "squares_chunked",
        title: "coalesced loads in one block",
        book: "the sum-of-squares tutorial's third step (its coalesced loads)",
        text: "In `squares_chunked` thread t adds a contiguous chunk: at each step the 32 lanes of a warp read 32 \
               words a chunk apart, 32 sectors for 128 useful bytes. Let thread t add elements t, t + blockDim, \
               t + 2·blockDim, … instead: at each step a warp reads 32 consecutive words.",
        goal: Goal::AtLeast(Measure::GldEfficiency, 90.0),
        hunt: None,
    },
    Exercise {
        number: 13,
        lesson: "bit",
        from: "bit, its tree levels in global memory",
        title: "the Fenwick tree built in shared memory",
        book: "the BIT scan of \"继续优化基于树状数组的cuda前缀和\" (a CUDA prefix-sum write-up: the reduce phase, built in shared memory)",
        text: "A Fenwick tree is what a reduction leaves when it keeps every partial sum: node k holds the sum of the \
               lowbit(k) elements that end at k, and a prefix is the sum of log2(k) nodes. `bit_build` makes one \
               level per round, as the neighbored tree does: thread t adds its partner's node d places back when \
               (t + 1) is a multiple of 2d. Your file adds the levels in the tree itself, in global memory: two \
               loads and a store per working thread per round, nine rounds. Let each thread put its top node in a \
               shared array (static_shared!, BIT_BLOCK words), add the levels there between barriers, and take \
               its node back into its band before the one store_band at the end (so the store_band above the \
               EXERCISE mark moves below it). The BIT scan this lesson is taken from makes the same move.",
        goal: Goal::AtMost(Measure::GlobalLoadsPerBlock, GOAL_GLOBAL_LOADS_PER_BLOCK),
        hunt: None,
    },
    Exercise {
        number: 14,
        lesson: "blelloch",
        from: "blelloch_unpadded",
        title: "bank conflicts: pad the shared tree",
        book: "GPU Gems 3, ch. 39, \"Avoiding Bank Conflicts\"",
        text: "Shared memory has 32 banks, one 4-byte word each, and a warp's accesses to different words of one bank \
               are served one after another. The sweeps of `blelloch_unpadded` reach nodes 2, 4, 8, … words apart: \
               at stride 32 every lane of a warp hits the same bank. Pad the tree: store node i at padded(i) = i + \
               i/32 (kernels::scan::index), in an array of padded_len(BLELLOCH_LEAVES as usize) words, everywhere \
               the tree is indexed: the leaves' writes and reads, both sweeps, the root, in both kernels. \
               Consecutive multiples of 32 then fall in different banks.",
        goal: Goal::AtMost(Measure::SharedLoadConflicts, 0.0),
        hunt: None,
    },
    Exercise {
        number: 15,
        lesson: "interleaved",
        from: "interleaved",
        title: "bug hunt: a race in global memory",
        book: "Professional CUDA C Programming, §3.4 (reduceInterleaved) and §3.2 on __syncthreads",
        text: "Your kernel is the project's `interleaved` with one bug planted; on a GPU its answer may even come \
               out right most of the time. The emulator's racecheck, which compute-sanitizer's does not do for \
               global memory, stops it: its report names the two threads, the lines of your file and the element. \
               Find what should order one thread's write before another thread's read in the next round.",
        goal: Goal::AtLeast(Measure::GldEfficiency, 90.0),
        hunt: Some("nobarrier"),
    },
    Exercise {
        number: 16,
        lesson: "unroll2",
        from: "unroll2",
        title: "bug hunt: one element too far",
        book: "Professional CUDA C Programming, §3.5 (reduceUnrolling2)",
        text: "Your kernel is the project's `unroll2` with one bug planted. At most shapes it is right; at one the \
               emulator's memcheck stops it: the report names the address, the buffer it is past the end of, the \
               thread and the line. Work out which index reaches the end, and which comparison lets it.",
        goal: Goal::AtLeast(Measure::ElementsPerThread, 2.0),
        hunt: Some("offbyone"),
    },
    Exercise {
        number: 17,
        lesson: "unroll_warps8",
        from: "unroll_warps8",
        title: "bug hunt: the book's last warp",
        book: "Professional CUDA C Programming, §3.5 (reduceUnrollWarps8, its volatile last warp)",
        text: "Your kernel is the project's `unroll_warps8` written as the book wrote its last warp: lanes in lock \
               step, no warp barrier between the rounds. Since Volta a warp's lanes need not run in lock step, and \
               the emulator's racecheck reports the race between two lanes of warp 0. Put back what orders the \
               rounds of the warp (the warp's own barrier, not the block's).",
        goal: Goal::AtMost(Measure::BarriersPerBlock, 4.0),
        hunt: Some("volatile"),
    },
    Exercise {
        number: 18,
        lesson: "smem",
        from: "smem",
        title: "bug hunt: a slot nobody wrote",
        book: "Professional CUDA C Programming, §5.3 (reduceSmem)",
        text: "Your kernel is the project's `smem` with one bug planted. In a full block it is right; in the last, \
               short block the emulator's initcheck stops it: the tree reads a shared word no thread wrote. \
               compute-sanitizer's initcheck does not look at shared memory; the emulator does. Make every slot \
               the tree reads hold a value: what is the identity of a sum?",
        goal: Goal::AtMost(Measure::GlobalStoresPerBlock, 1.0),
        hunt: Some("uninit"),
    },
    Exercise {
        number: 19,
        lesson: "redux",
        from: "warp_shuffle",
        title: "a warp sums in one instruction: redux.sync",
        book: "past the book: the CUDA C++ Programming Guide, \"Warp Reduce Functions\" (__reduce_add_sync, compute capability 8.0 and newer)",
        text: "`warp_shuffle` sums a warp with five shuffles and five adds (warp_sum_shfl), each waiting for the one \
               before, and runs that twice per block: in every warp, then in warp 0 over the warps' sums. Since \
               Ampere (sm_80) one instruction sums a warp: reduce_add_sync(FULL_MASK, value) (PTX \
               redux.sync.add.s32, CUDA C __reduce_add_sync) returns the wrapping sum of `value` over the 32 lanes \
               to every lane. block_sum's third argument is the warp step, a function from a lane's value to its \
               warp's sum: write `fn warp_sum_redux(value: i32) -> i32 { reduce_add_sync(FULL_MASK, value) }` \
               (with `use kernels::device::FULL_MASK;` and `use kernels::device::warp::reduce_add_sync;`) and pass \
               it in place of warp_sum_shfl. The emulator runs it anywhere; on a GPU (--gpu) it needs sm_80 or \
               newer.",
        goal: Goal::AtMost(Measure::WarpCollectivesPerWarp, 2.0),
        hunt: None,
    },
    Exercise {
        number: 20,
        lesson: "grid_stride",
        from: "warp_shuffle",
        title: "a grid of the GPU's size: the grid-stride loop",
        book: "past the book: NVIDIA's blog \"CUDA Pro Tip: Write Flexible Kernels with Grid-Stride Loops\" (2013)",
        text: "Your kernel sums a segment of 8 × blockDim elements per block, so the host launches one block per \
               segment, however many that is. A GPU runs a fixed number of blocks at once (its SMs × the blocks \
               each holds); more run in waves, and each pays its own tree and its own partial. Size the grid to \
               the machine: set RESIDENT_GRID to true, and the host launches min(ceil(n / blockDim), SMs × \
               resident blocks per SM) blocks (this check sizes the grid for a GPU of 2 SMs of 2048 threads, 8 \
               blocks of 512 or 32 of 128, so that its small inputs still take several passes; `./x run` plays \
               the H100's 132). Each thread then walks the input: with g = global_idx_x() (blockIdx × blockDim + \
               threadIdx) and G = grid_dim_x() × block_dim_x() (use both from kernels::device::thread), add \
               g_idata.read(i) into a wrapping sum (sum = sum.wrapping_add(…): the sums wrap, as thread_sum_items's do) for \
               i = g, g + G, g + 2G, … while i < n (a `while` loop; each pass, the grid reads G consecutive \
               elements), then block_sum as before. The segment (start, len, thread_sum_items, ITEMS_PER_THREAD) \
               goes.",
        goal: Goal::AtLeast(Measure::ElementsPerThread, 16.0),
        hunt: None,
    },
    Exercise {
        number: 21,
        lesson: "vector_loads",
        from: "grid_stride",
        title: "16 bytes per load, with the unaligned head and tail",
        book: "past the book: NVIDIA's blog \"CUDA Pro Tip: Increase Performance with Vectorized Memory Access\" (2013)",
        text: "`grid_stride` loads one 4-byte word per thread per pass: 128 bytes per warp instruction, 4 bytes in \
               flight per thread. A 128-bit load moves 16 bytes per thread, 512 per warp instruction, but only \
               from a 16-byte-aligned address, and an i32 array may start anywhere (the check starts yours 0 to 3 \
               elements past a 16-byte boundary). Split the input with split_for_v4(g_idata.addr(), n as usize) \
               (kernels::collective::thread): `head` (0 to 3 elements before the first 16-byte boundary), \
               `vectors` (whole 16-byte vectors after it), `tail` (0 to 3 elements after them). With body = \
               g_idata.offset(head), vector k is body.load_v4_nc(4 * k), an [i32; 4]. With T = gridDim × blockDim \
               threads and g the thread's grid index, add vectors g, g + T, g + 2T, … below `vectors` (the \
               project issues four independent loads per pass, at + j·T for j < 4, each checked against \
               `vectors`, so that four are in flight at once); grid threads g < head add g_idata.read(g), and \
               threads g < tail add body.read(4 * vectors + g). kernels::collective::thread::thread_sum_v4 is all \
               this, written out: the project's kernel calls it.",
        goal: Goal::AtLeast(Measure::BytesPerLoadRequest, 500.0),
        hunt: None,
    },
    Exercise {
        number: 22,
        lesson: "single_pass",
        from: "vector_loads, with single_pass's arguments",
        title: "one launch: the last block adds the partials",
        book: "past the book: the CUDA C++ Programming Guide, \"Memory Fence Functions\" (its sum with __threadfence and a ticket; the threadFenceReduction sample)",
        text: "Your kernel leaves one partial per block in g_partials, and the host adds them (a copy back, or a \
               second launch). Let the last block to finish add them, in this launch. After block_sum, thread 0 \
               of each block stores the block's sum to g_partials[blockIdx]; then thread_fence() (CUDA \
               __threadfence: the store is visible to the whole GPU before what follows); then ticket = \
               atomic_add_u32(g_ticket, 1), which returns the count before its add, so the blocks draw 0, 1, …, \
               gridDim − 1 in the order they finish. The block that draws grid_dim_x() − 1 is last: every other \
               block has published. Its thread 0 fences again (the acquire) and writes 1 to a shared flag \
               (static_shared!(LAST: [u32; 1])), thread 0 of every other block writes 0; sync_threads(), and every thread reads the \
               flag. In the last block, thread t adds partials t, t + blockDim, … below gridDim, each read with \
               load_relaxed_u32(g_partials.offset(i).cast::<u32>().as_const()) as i32 (a load that never sees a \
               stale copy in its SM's cache), then block_sum(partial, slots, warp_sum_shfl) again (the same slots: the barrier after the flag \
               comes after the first block_sum's last read of them), and thread 0 \
               writes g_out[0] and stores 0 to the ticket (store_relaxed_u32(g_ticket, 0)) for the next launch. \
               The names: kernels::device::atomic::{atomic_add_u32, load_relaxed_u32, store_relaxed_u32, \
               thread_fence} and kernels::device::thread::{block_dim_x, grid_dim_x, sync_threads}.",
        goal: Goal::AtMost(Measure::HostAdds, 0.0),
        hunt: None,
    },
    Exercise {
        number: 23,
        lesson: "atomic_accumulate",
        from: "atomic_accumulate, with an atomic per thread",
        title: "atomics finish the sum: one per block",
        book: "past the book: the CUDA C++ Programming Guide, \"Atomic Functions\" (atomicAdd; PTX red.global.add)",
        text: "Your kernel adds every thread's sum into the result with red_add_i32, a fire-and-forget atomic add \
               (PTX red.global.add): no block waits for another, as single_pass's last block did, and integer \
               adds give the same sum in any order. But that is blockDim atomics per block, all to one word, which \
               L2 applies one after another. Add in the block first: block_sum(sum, slots, warp_sum_shfl) (every \
               thread calls it; thread 0 gets the block's sum), then let thread 0 alone add that into \
               g_acc[epoch % 2]: one atomic per block. Keep block 0's store of 0 to the other word: it readies \
               the word the next launch adds into, without a memset.",
        goal: Goal::AtMost(Measure::AtomicsPerBlock, 1.0),
        hunt: None,
    },
    Exercise {
        number: 24,
        lesson: "lookback",
        from: "lookback, each tile re-reading the input before it",
        title: "decoupled look-back: tiles tell each other their sums",
        book: "past the book: Merrill and Garland, \"Single-pass Parallel Prefix Scan with Decoupled Look-back\" (NVIDIA, 2016)",
        text: "A tile's output needs the sum of every element before it. In your file warp 0 re-reads the whole \
               input before its tile (sum_before): tile k reads k tiles again, and the scan reads its input \
               several times over. Let the tiles tell each other instead, through `status`, one 64-bit word per \
               tile, all invalid at launch. A word is pack_status(epoch, flag, value), flag FLAG_AGGREGATE (the \
               tile's own sum) or FLAG_PREFIX (the sum of everything up to and including the tile); \
               status_flag(word, epoch) is a word's flag (FLAG_INVALID while this launch has not written it), \
               status_value(word) its value (all in kernels::scan::index). Write one with \
               store_relaxed_u64(status.offset(tile), word), read one with \
               load_relaxed_u64(status.as_const().offset(t)) (kernels::device::atomic: flag and value travel in \
               one atomic access, so no reader sees one without the other). (1) As soon as step 3 has the \
               aggregate, thread 0 publishes (FLAG_AGGREGATE, aggregate); tile 0 publishes (FLAG_PREFIX, \
               aggregate). (2) In step 5, tile 0's prefix is 0 (it has published its FLAG_PREFIX already); in \
               every other tile, lane 0 of warp 0 (the other lanes of warp 0 do nothing here, and the block waits \
               at the barrier that follows) looks back from t = tile − 1: it loads t's word until \
               the flag is not FLAG_INVALID, adds its value, and stops at a FLAG_PREFIX, else goes on to t − 1. \
               It then publishes (FLAG_PREFIX, prefix + aggregate) and puts the prefix in the shared slot \
               (sum_before is then no longer needed). No \
               tile waits for another's look-back, only for its aggregate. (The project's look_back reads 32 \
               predecessors at once, a lane each, with all_sync, ballot_sync and a warp sum.)",
        goal: Goal::AtMost(Measure::InputPasses, 1.1),
        hunt: None,
    },
    Exercise {
        number: 25,
        lesson: "single_pass",
        from: "single_pass",
        title: "bug hunt: a partial published without a fence",
        book: "the CUDA C++ Programming Guide, \"Memory Fence Functions\", and the PTX ISA's memory consistency model (release and acquire patterns)",
        text: "Your kernel is the project's `single_pass` with one bug planted; on a GPU it gives the right sum \
               nearly every time. The emulator's racecheck follows what each block publishes and what the others \
               observe, and stops it: the report names the block that wrote a partial, the thread of the last \
               block that read it, and both lines of your file. A plain store in one block is ordered before a \
               load in another only by a release in the writer (a fence before its atomic) that an acquire in the \
               reader observes (its atomic, then a fence). Find the half of the pair that is missing.",
        goal: Goal::AtMost(Measure::HostAdds, 0.0),
        hunt: Some("nofence"),
    },
    Exercise {
        number: 26,
        lesson: "histogram_shared",
        from: "histogram_global",
        title: "privatization: a histogram per block in shared memory",
        book: "past the book: Sanders and Kandrot, \"CUDA by Example\", §9.4 \"Computing Histograms\" (histo_kernel with global, then shared memory atomics)",
        text: "Your kernel counts the 256-bin histogram of its input's bytes: every thread adds 1 to the bin of each \
               of its bytes with hist.atomic_add(byte, 1), an atomicAdd on global memory. The atomic makes the \
               colliding counts safe, but each one is a trip to L2, n of them onto 256 words, applied one after \
               another on each word. Count in the block first: a shared histogram, \
               static_shared!(HISTOGRAM_SHARED_BINS: [u32; HISTOGRAM_BINS]) (HISTOGRAM_BINS is your file's 256; add \
               `use kernels::static_shared;` and `use kernels::device::thread::{block_dim_x, sync_threads, \
               thread_idx_x};`). (1) Its threads zero it: bins.write(b, 0) for b = t, t + blockDim, \
               … below 256; then sync_threads(). (2) The loop counts each byte with bins.atomic_add(byte, 1), a \
               shared atomicAdd, done at the SM among the block's own threads. (3) sync_threads(), then thread t \
               adds counters t, t + blockDim, … into hist with one hist.atomic_add(b, count) each, where count = \
               bins.read(b) is not 0. The shared accesses are unsafe fns: write a SAFETY line for each (the index \
               is below 256; between the barriers every access is atomic). A block then makes at most 256 global \
               atomics, however many bytes it counts.",
        goal: Goal::AtMost(Measure::GlobalAtomicsPerElement, 0.1),
        hunt: None,
    },
    Exercise {
        number: 27,
        lesson: "compact_one_pass",
        from: "compact_flags, compact_offsets and compact_scatter: three launches",
        title: "compaction in one pass: the look-back places each tile",
        book: "past the book: Merrill and Garland, \"Single-pass Parallel Prefix Scan with Decoupled Look-back\" (NVIDIA, 2016), the look-back that CUB's DeviceSelect::If builds its compaction on",
        text: "Your file keeps the positive elements of its input, in order, in three launches: compact_flags counts \
               each tile's kept elements (a tile is a block, ITEMS_PER_THREAD consecutive elements a thread), \
               compact_offsets scans the counts into each tile's place in the output, and compact_scatter reads \
               the input again, packs the tile's kept elements in shared memory (each thread's at its rank, \
               BlockScan's exclusive scan of the threads' counts) and writes them out from the tile's place. The input is read twice, with a wait between \
               launches. Fuse them into compact_one_pass, one launch that reads each element once: (1) read and \
               count as compact_scatter does, rank and the tile's count from one scan.exclusive::<Sum>(mine); \
               (2) warp 0 (thread_idx_x() < 32) finds the tile's place: tile 0's is 0, and its thread 0 stores \
               pack_status(epoch, FLAG_PREFIX, count) in status[0] (store_relaxed_u64(status.offset(tile), …)); \
               in any other tile thread 0 stores pack_status(epoch, FLAG_AGGREGATE, count), then all 32 lanes \
               call look_back(status, tile, epoch), the helper in your file (exercise 24's look-back, a lane per \
               tile before this one, 32 at once), whose lane 0 gets the place; thread 0 then stores \
               pack_status(epoch, FLAG_PREFIX, place + count) and writes the place to a shared slot \
               (static_shared!(PLACE: [u32; 1])); (3) every thread packs its kept elements at its rank into a stage \
               of the kernel's own (static_shared!(STAGED: [i32; STAGE])), as compact_scatter does, then \
               sync_threads(), then the threads copy the stage out from \
               output[place] on, as compact_scatter does, and the last tile's (grid_dim_x() − 1) thread 0 \
               writes place + count to count[0]. The names: kernels::device::atomic::store_relaxed_u64, \
               kernels::scan::index::{pack_status, FLAG_AGGREGATE, FLAG_PREFIX}, kernels::device::thread::{grid_dim_x, \
               sync_threads}. Then set ONE_PASS to true: the check launches compact_one_pass alone.",
        goal: Goal::AtMost(Measure::InputPasses, 1.1),
        hunt: None,
    },
];

/// The lesson kernels that no registry holds (`kernels::histogram`, `kernels::select`): each
/// lesson's, and the first of the kernels its starting file is made from.
pub const LESSON_KERNELS: [&str; 4] = ["histogram_shared", "histogram_global", "compact_one_pass", "compact_flags"];

/// The arguments of the compaction lesson's kernels: `compact_flags` (the input, one count a
/// tile), `compact_offsets` (the counts, how many, the total), `compact_scatter` (the input,
/// the places, the output) and `compact_one_pass` (the input, the output, the total, one
/// status word a tile, the epoch).
pub type FlagsArgs = (Slice<i32>, GlobalMut<u32>);
/// See [`FlagsArgs`].
pub type OffsetsArgs = (GlobalMut<u32>, u32, GlobalMut<u32>);
/// See [`FlagsArgs`].
pub type ScatterArgs = (Slice<i32>, GlobalMut<u32>, GlobalMut<i32>);
/// See [`FlagsArgs`].
pub type OnePassArgs = (Slice<i32>, GlobalMut<i32>, GlobalMut<u32>, GlobalMut<u64>, u32);

/// The kernels of a compaction exercise: the three launches, or the one pass.
#[derive(Clone, Copy)]
pub enum CompactKernels {
    /// Flags (a count a tile), the counts' scan, the scatter.
    ThreeLaunches(Kernel<FlagsArgs>, Kernel<OffsetsArgs>, Kernel<ScatterArgs>),
    /// One launch, the places by the look-back.
    OnePass(Kernel<OnePassArgs>),
}

/// The arguments of a histogram lesson's kernel: the bytes, and the 256 counters.
pub type HistogramArgs = (Slice<u8>, AtomicSlice<u32>);

/// A kernel under check: the learner's, a starting file's, or the project's.
#[derive(Clone, Copy)]
pub enum Code {
    /// Reads and overwrites its input (chapter 3), one partial per block.
    InPlace(Kernel<InPlaceArgs>),
    /// Reads its input, one partial per block.
    Read(Kernel<ReadArgs>),
    /// One instantiation per block size.
    PerBlock(&'static [(u32, Kernel<InPlaceArgs>)]),
    /// The sum of squares: one partial per thread, and clock stamps.
    Clocked(Kernel<ClockedArgs>),
    /// One partial per block, and the last block to finish adds them into one word.
    LastBlock(Kernel<SinglePassArgs>),
    /// Every block adds into one of two words, chosen by the launch's epoch.
    Accumulate(Kernel<AccumulateArgs>),
    /// A scan, run by the registered scan's plan with these kernels in place of its own.
    Scan(ScanKernels),
    /// The 256-bin histogram of the input's bytes, added into counters the check zeroes.
    Histogram(Kernel<HistogramArgs>),
    /// The positive elements, in order, and their number.
    Compaction(CompactKernels),
}

/// The kernels of a scan exercise, one shape per plan of [`reduce_scan::scan::ScanPlan`] that
/// an exercise uses.
#[derive(Clone, Copy)]
pub enum ScanKernels {
    /// `bit_build` and `bit_query` (the Fenwick plan).
    Fenwick(Kernel<BitBuildArgs>, Kernel<BitQueryArgs>),
    /// Each tile's sum, then each tile's scan from its offset (`blelloch_reduce`,
    /// `blelloch_block`).
    ReduceThenScan(Kernel<BlellochReduceArgs>, Kernel<BlellochBlockArgs>),
    /// One launch, one block per tile (`lookback`).
    Lookback(Kernel<LookbackArgs>),
}

impl Code {
    /// The kernels one run at `block` launches, by their PTX names (what Nsight Compute is told
    /// to profile).
    pub fn symbols(&self, block: u32) -> Vec<&'static str> {
        match *self {
            Code::InPlace(k) => vec![k.name],
            Code::Read(k) => vec![k.name],
            Code::Clocked(k) => vec![k.name],
            Code::LastBlock(k) => vec![k.name],
            Code::Accumulate(k) => vec![k.name],
            Code::Histogram(k) => vec![k.name],
            Code::Compaction(CompactKernels::ThreeLaunches(f, o, s)) => vec![f.name, o.name, s.name],
            Code::Compaction(CompactKernels::OnePass(k)) => vec![k.name],
            Code::PerBlock(table) => table.iter().filter(|(b, _)| *b == block).map(|(_, k)| k.name).collect(),
            Code::Scan(ScanKernels::Fenwick(build, query)) => vec![build.name, query.name],
            Code::Scan(ScanKernels::ReduceThenScan(reduce, block_scan)) => vec![reduce.name, block_scan.name],
            Code::Scan(ScanKernels::Lookback(k)) => vec![k.name],
        }
    }
}

/// A kernel under check, with what the check needs besides it.
#[derive(Clone, Copy)]
pub struct Attempt {
    /// The kernel.
    pub code: Code,
    /// Elements each thread adds (per pass of its loop, for a resident grid).
    pub items: u32,
    /// How the host sizes the grid: `Grid::PerItems`, ceil(n / (block × items)) blocks; or
    /// `Grid::Resident`, as many as the GPU holds at once, never more than that.
    pub grid: Grid,
    /// Its file's text, for the measures read from the source.
    pub source: &'static str,
}

/// The project's own kernel of `ex`: the registered variant, and its file (what the tests check
/// every exercise against).
pub fn solution(ex: &Exercise) -> Attempt {
    let source = solution_source(ex.number);
    // The lesson kernels no registry holds (LESSON_KERNELS), by name.
    let module = &reduce_scan::ptx::KERNELS;
    match ex.lesson {
        "histogram_shared" => {
            let k = Kernel::of(module, kernels::histogram::histogram_shared::histogram_shared::KERNEL);
            return Attempt { code: Code::Histogram(k), items: 1, grid: Grid::Resident, source };
        }
        "compact_one_pass" => {
            let k = Kernel::of(module, kernels::select::compact_one_pass::compact_one_pass::KERNEL);
            let items = kernels::select::COMPACT_ITEMS_PER_THREAD as u32;
            return Attempt { code: Code::Compaction(CompactKernels::OnePass(k)), items, grid: Grid::PerItems, source };
        }
        _ => {}
    }
    if let Ok(scan) = reduce_scan::scan::find(ex.lesson) {
        let kernels = match scan.plan {
            ScanPlan::Fenwick { build, query, .. } => ScanKernels::Fenwick(build, query),
            ScanPlan::ReduceThenScan { reduce, block_scan, .. } => ScanKernels::ReduceThenScan(reduce, block_scan),
            ScanPlan::DecoupledLookback { kernel, .. } => ScanKernels::Lookback(kernel),
            _ => panic!("{}: no exercise shape for its plan", ex.lesson),
        };
        return Attempt { code: Code::Scan(kernels), items: 1, grid: Grid::PerItems, source };
    }
    let v = registry::find(ex.lesson).expect("every exercise's lesson is a registered variant");
    let code = match v.finish {
        Finish::HostAddsInPlace(KernelSel::One(k)) => Code::InPlace(k),
        Finish::HostAddsInPlace(KernelSel::PerBlock(table)) => Code::PerBlock(table),
        Finish::HostAdds(KernelSel::One(k)) => Code::Read(k),
        Finish::HostAddsClocked(k, _) => Code::Clocked(k),
        Finish::LastBlock(k) => Code::LastBlock(k),
        Finish::AtomicAccumulate(k) => Code::Accumulate(k),
        _ => panic!("{}: no exercise shape for its finish", ex.lesson),
    };
    Attempt { code, items: v.items_per_thread, grid: v.grid, source }
}

/// The project's kernel files, for the measures read from the source.
fn solution_source(number: u32) -> &'static str {
    match number {
        1 => include_str!("../../../kernels/src/reduce/neighbored_less.rs"),
        2 => include_str!("../../../kernels/src/reduce/interleaved.rs"),
        3 => include_str!("../../../kernels/src/reduce/unroll2.rs"),
        4 => include_str!("../../../kernels/src/reduce/unroll8.rs"),
        5 => include_str!("../../../kernels/src/reduce/unroll_warps8.rs"),
        6 => include_str!("../../../kernels/src/reduce/complete_unroll_warps8.rs"),
        7 => include_str!("../../../kernels/src/reduce/complete_unroll.rs"),
        8 => include_str!("../../../kernels/src/reduce/smem.rs"),
        9 => include_str!("../../../kernels/src/reduce/smem_unroll4.rs"),
        10 => include_str!("../../../kernels/src/reduce/smem_unroll4_dyn.rs"),
        11 => include_str!("../../../kernels/src/reduce/warp_shuffle.rs"),
        12 => include_str!("../../../kernels/src/sumsq/squares_coalesced.rs"),
        13 => include_str!("../../../kernels/src/scan/bit.rs"),
        14 => include_str!("../../../kernels/src/scan/blelloch.rs"),
        15 => include_str!("../../../kernels/src/reduce/interleaved.rs"),
        16 => include_str!("../../../kernels/src/reduce/unroll2.rs"),
        17 => include_str!("../../../kernels/src/reduce/unroll_warps8.rs"),
        18 => include_str!("../../../kernels/src/reduce/smem.rs"),
        19 => include_str!("../../../kernels/src/reduce/redux.rs"),
        20 => include_str!("../../../kernels/src/reduce/grid_stride.rs"),
        21 => include_str!("../../../kernels/src/reduce/vector_loads.rs"),
        22 | 25 => include_str!("../../../kernels/src/reduce/single_pass.rs"),
        23 => include_str!("../../../kernels/src/reduce/atomic_accumulate.rs"),
        26 => include_str!("../../../kernels/src/histogram/histogram_shared.rs"),
        27 => include_str!("../../../kernels/src/select/compact_one_pass.rs"),
        _ => include_str!("../../../kernels/src/scan/lookback.rs"),
    }
}

/// Elements a thread of the 16-byte-load kernels reads per pass of its loop: four loads of four
/// (the registry's `items_per_thread` for `vector_loads`, `single_pass`, `atomic_accumulate`).
pub const TRIP: u32 = kernels::collective::thread::ITEMS_PER_TRIP as u32;
