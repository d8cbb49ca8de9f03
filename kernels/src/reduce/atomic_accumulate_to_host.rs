use crate::collective::block::{BLOCK_SUM_SLOTS, block_sum};
use crate::collective::thread::thread_sum_v4;
use crate::collective::warp::warp_sum_shfl;
use crate::device::atomic::{
    atomic_add_u32, load_relaxed_u32, red_add_i32, store_relaxed_u32, store_release_sys_u32, thread_fence,
};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_idx_x, grid_dim_x, thread_idx_x};
use crate::reduce::ATOMIC_ACCUMULATE_LOADS;
use crate::{kernel, static_shared};

kernel! {
    /// [`atomic_accumulate`](crate::reduce::atomic_accumulate) whose last block also hands the
    /// sum to the host: the library's synchronous `i32` sum in one launch.
    ///
    /// # Concept
    /// **The answer written where the host reads it.** A synchronous call ends when its
    /// answer is in host memory. The kernel itself can put it there: page-locked host memory
    /// mapped into the device is an address the GPU stores to over PCIe, and the host spins on
    /// a flag word beside it. The one thing the kernel must know is *when* the answer is
    /// complete, and with blocks that never wait for each other that is a ticket: the block
    /// that draws the last one knows every other block's add is in.
    ///
    /// # Previous problem → fix
    /// With `atomic_accumulate` the host learns the answer through a second launch, the
    /// one-thread `publish_answer` queued behind the sum (`docs/time-to-answer.md`): a second
    /// `cuLaunchKernel` on the host and a second kernel start on the GPU, about a third of a
    /// 2^20 call's wall time. Here each block, after its `red.add`, fences and draws a ticket;
    /// the last block reads the word, writes it into the mapped answer, then releases the flag
    /// (`st.release.sys`). One launch, one extra atomic per block.
    ///
    /// # Execution
    /// 1. As `atomic_accumulate`: thread 0 of block 0 clears `g_acc[(epoch + 1) % 2]`; each
    ///    thread sums its share with four 128-bit loads per trip; the block reduces with
    ///    shuffles; thread 0 adds the block's sum into `g_acc[epoch % 2]` (`red.add`).
    /// 2. Thread 0 fences (`fence.acq_rel.gpu`: its add before its ticket) and draws a ticket
    ///    (`atom.add` on `g_ticket`).
    /// 3. The thread that draws ticket `gridDim - 1` fences again (acquire: every add before
    ///    it is visible), reads `g_acc[epoch % 2]`, stores 0 to `g_ticket` for the next launch,
    ///    writes the sum zero-extended into `h_value` and then `seq` into `h_flag` with a
    ///    system-scope release.
    ///
    /// ```text
    ///  block 0 ─ loads … shuffles ─► red.add ; fence ; ticket → 1
    ///  block 1 ─ loads … shuffles ─► red.add ; fence ; ticket → 2 = gridDim-1: last
    ///                                  fence ; ld g_acc ; ticket = 0 ; h_value ; st.release.sys h_flag
    ///  block 2 ─ loads … shuffles ─► red.add ; fence ; ticket → 0
    /// ```
    ///
    /// # Launch
    /// As `atomic_accumulate` (the library's `SUM_PLAN` picks the grid and block): block a
    /// power of two in 32..=1024, 128 bytes of static shared memory.
    ///
    /// # Preconditions
    /// As `atomic_accumulate` for `g_idata`, `g_acc`, `n` and `epoch`; `g_ticket` is one `u32`
    /// that is 0 at launch (a zeroed allocation; every completed launch leaves it 0) and that
    /// only launches of this stream use; `h_value` (8 bytes) and `h_flag` (4 bytes) are
    /// writable, mapped host memory or device memory; `seq` differs from the flag's value at
    /// launch.
    ///
    /// # Safety
    /// As `atomic_accumulate`; the ticket's atomic and the last block's stores touch the three
    /// words above, one thread each.
    pub unsafe fn atomic_accumulate_to_host(
        g_idata: Global<i32>,
        g_acc: GlobalMut<i32>,
        n: u32,
        epoch: u32,
        g_ticket: GlobalMut<u32>,
        h_value: GlobalMut<u64>,
        h_flag: GlobalMut<u32>,
        seq: u32,
    ) {
        let slots = static_shared!(ATOMIC_ACCUMULATE_TO_HOST_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        if block_idx_x() == 0 && thread_idx_x() == 0 {
            let next = ((epoch + 1) % 2) as usize;
            // SAFETY: g_acc holds two elements; no block of this launch touches this one.
            unsafe { store_relaxed_u32(g_acc.offset(next).cast::<u32>(), 0) };
        }
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<ATOMIC_ACCUMULATE_LOADS>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_acc holds two elements.
            let word = unsafe { g_acc.offset((epoch % 2) as usize) };
            // SAFETY: the precondition made this word 0; g_ticket is one u32; the fence orders
            // this block's add before its ticket.
            let ticket = unsafe {
                red_add_i32(word, total);
                thread_fence();
                atomic_add_u32(g_ticket, 1)
            };
            if ticket == grid_dim_x() - 1 {
                thread_fence(); // acquire: every block's add came before its ticket
                // SAFETY: every block has drawn its ticket, so no thread of this launch touches
                // g_ticket or the word again; h_value and h_flag are the caller's words.
                unsafe {
                    let sum = load_relaxed_u32(word.cast::<u32>().as_const());
                    store_relaxed_u32(g_ticket, 0);
                    h_value.write(0, u64::from(sum));
                    store_release_sys_u32(h_flag, seq);
                }
            }
        }
    }
}
