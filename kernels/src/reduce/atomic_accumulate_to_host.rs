use crate::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use crate::collective::thread::thread_sum_v4;
use crate::collective::warp::warp_sum_shfl;
use crate::device::atomic::{atomic_add_u64, store_relaxed_u64, store_release_sys_u32};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{grid_dim_x, thread_idx_x};
use crate::index::{tally_add, tally_count, tally_sum};
use crate::reduce::ATOMIC_ACCUMULATE_LOADS;
use crate::{kernel, static_shared};

kernel! {
    /// [`atomic_accumulate`](fn@crate::reduce::atomic_accumulate) whose last block also hands the
    /// sum to the host: the library's synchronous `i32` sum in one launch.
    ///
    /// # Concept
    /// **The answer written where the host reads it.** A synchronous call ends when its
    /// answer is in host memory. The kernel itself can put it there: page-locked host memory
    /// mapped into the device is an address the GPU stores to over PCIe, and the host spins on
    /// a flag word beside it. What the kernel must know is *when* the answer is complete, and
    /// with blocks that never wait for each other that takes a count: the block that makes the
    /// count whole knows every other block's add is in. Here the count and the sum share one
    /// 64-bit word, so one atomic both adds a block's sum and tells it whether it was last.
    ///
    /// # Previous problem → fix
    /// With `atomic_accumulate` the host learns the answer through a second launch, the
    /// one-thread `publish_answer` queued behind the sum (`docs/time-to-answer.md`): a second
    /// `cuLaunchKernel` on the host and a second kernel start on the GPU. A ticket drawn after
    /// the `red.add` would need a fence between the two and a second atomic, both on the
    /// critical path of the last block (measured under ncu on an H100: 2.3 µs more device time
    /// than `atomic_accumulate` at 2^20, medians). Instead
    /// each block's thread 0 does one `atom.add.u64` on the tally word: the count in its low
    /// 24 bits, the sum above ([`tally_add`]). The old value it gets back is the tally of the
    /// blocks before it; when that count is `gridDim - 1` this block is the last, and the old
    /// sum plus its own is the answer. One launch, one atomic per block, no fence, no re-read.
    ///
    /// # Execution
    /// 1. As `atomic_accumulate`: each thread sums its share with four 128-bit loads per trip
    ///    of a grid-stride loop; the block reduces with shuffles.
    /// 2. Thread 0: `old = atom.add.u64(g_tally, tally_add(block_sum))`.
    /// 3. If `tally_count(old) == gridDim - 1`: store 0 to `g_tally` for the next launch,
    ///    write `tally_sum(old) + block_sum` zero-extended into `h_value`, then `seq` into
    ///    `h_flag` with a system-scope release (`st.release.sys`: the value first).
    ///
    /// ```text
    ///  block 2 ─ loads … shuffles ─► atom.add tally (+s2, +1) → old count 0
    ///  block 0 ─ loads … shuffles ─► atom.add tally (+s0, +1) → old count 1
    ///  block 1 ─ loads … shuffles ─► atom.add tally (+s1, +1) → old count 2 = gridDim-1: last
    ///              tally = 0 ; h_value = old sum + s1 ; st.release.sys h_flag = seq
    /// ```
    ///
    /// # Launch
    /// As `atomic_accumulate` (the library's `SUM_PLAN` picks the grid and block): block a
    /// power of two in 32..=1024, 128 bytes of static shared memory.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` `i32`-aligned elements; `g_tally` is one `u64` that is 0 at
    /// launch (a zeroed allocation; every completed launch leaves it 0) and that only launches
    /// of one stream use; `h_value` (8 bytes) and `h_flag` (4 bytes) are writable, mapped host
    /// memory or device memory; `seq` differs from the flag's value at launch;
    /// `gridDim.x × blockDim.x ≤ 2^29`.
    ///
    /// # Safety
    /// As `atomic_accumulate` for the input and the barrier; the tally's atomic touches one
    /// word, and only the last block's thread 0 stores to `g_tally`, `h_value` and `h_flag`,
    /// after every block's add.
    pub unsafe fn atomic_accumulate_to_host(
        g_idata: Global<i32>,
        g_tally: GlobalMut<u64>,
        n: u32,
        h_value: GlobalMut<u64>,
        h_flag: GlobalMut<u32>,
        seq: u32,
    ) {
        let slots = static_shared!(ATOMIC_ACCUMULATE_TO_HOST_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<ATOMIC_ACCUMULATE_LOADS>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_tally is one u64, 0 at launch; every block adds to it once.
            let before = unsafe { atomic_add_u64(g_tally, tally_add(total)) };
            if tally_count(before) == grid_dim_x() - 1 {
                let answer = tally_sum(before).wrapping_add(total);
                // SAFETY: every block has added, so no thread of this launch touches g_tally
                // again; h_value and h_flag are the caller's words.
                unsafe {
                    store_relaxed_u64(g_tally, 0);
                    h_value.write(0, u64::from(answer as u32));
                    store_release_sys_u32(h_flag, seq);
                }
            }
        }
    }
}
