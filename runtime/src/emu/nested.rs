//! Device-side launches on the emulator (CUDA dynamic parallelism, CDP2): a kernel's launch
//! is checked and queued where it is made (`queue`), and the queue runs once the launching
//! grid has completed (`Emulator::run_children`).
//!
//! A tail launch (`cudaStreamTailLaunch`) runs after its parent grid, in the order the launches
//! were made: exactly what the emulator does. A fire-and-forget launch may run at once, in
//! parallel with its parent; the emulator runs it after the parent too, which is one of the
//! orders the GPU may choose, so a kernel whose answer depends on the order is not caught.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use device::emu::{DeviceLaunch, Dim3};
use device::launch::MAX_DEPTH;

use super::block::{ThreadCtx, dim, stop_with_report};
use super::{EmuError, EmuErrorKind, Emulator};

/// A queued device-side launch: the child and where it was made.
pub(super) struct QueuedChild {
    kernel: &'static str,
    grid: Dim3,
    block: Dim3,
    /// The launching kernel's copy of the child's kernel and arguments.
    params: Vec<u8>,
    run: unsafe fn(*const u8),
    /// Does it go to the fire-and-forget stream (see [`Pending`])?
    fire_and_forget: bool,
    /// The launching kernel, block and thread, and the source line.
    from: String,
}

/// The device-side launches a grid made, in order.
pub(super) type Children = Mutex<Vec<QueuedChild>>;

/// CUDA's default for `cudaLimitDevRuntimePendingLaunchCount`: how many device-side launches
/// may be queued and not yet completed at once.
pub const DEFAULT_PENDING_LAUNCHES: usize = 2048;

/// The most room for pending device-side launches a device grants: what the H100's driver
/// (580.159.04) gave back for any larger `cudaLimitDevRuntimePendingLaunchCount`
/// (`docs/measurements/2026-11-25-h100/nested/limits.txt`). The emulator grants no more.
pub const MAX_PENDING_LAUNCHES: usize = 599_186;

/// The emulator's device-side launches that are queued and not yet completed, and the limit.
///
/// The emulator runs every child after its parent grid, but a GPU starts a fire-and-forget
/// child at once, so every block's chain of such children can be pending together: on the H100,
/// `recursive_reduce_nosync` with room for one child per block failed every run. So the count
/// takes the GPU's worst case: a completed fire-and-forget child stays counted (`held`) until the
/// host's launch has completed.
#[derive(Debug)]
pub struct Pending {
    count: AtomicUsize,
    limit: AtomicUsize,
    held: AtomicUsize,
    /// The most room [`raise_limit`](Self::raise_limit) grants.
    most: AtomicUsize,
}

impl Default for Pending {
    fn default() -> Self {
        Self {
            count: AtomicUsize::new(0),
            limit: AtomicUsize::new(DEFAULT_PENDING_LAUNCHES),
            held: AtomicUsize::new(0),
            most: AtomicUsize::new(MAX_PENDING_LAUNCHES),
        }
    }
}

impl Pending {
    pub(super) fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Raises the limit to `limit`, or to the most it grants ([`MAX_PENDING_LAUNCHES`] unless
    /// [`grant_at_most`](Self::grant_at_most) said less) if that is less; returns the limit now.
    pub(super) fn raise_limit(&self, limit: usize) -> usize {
        let granted = limit.min(self.most.load(Ordering::Relaxed));
        self.limit.fetch_max(granted, Ordering::Relaxed).max(granted)
    }

    /// From now on [`raise_limit`](Self::raise_limit) grants at most `most`.
    pub(super) fn grant_at_most(&self, most: usize) {
        self.most.store(most, Ordering::Relaxed);
    }

    /// `n` queued launches that will never run (their grid failed) stop counting.
    pub(super) fn forget(&self, n: usize) {
        self.count.fetch_sub(n, Ordering::Relaxed);
    }

    /// A child completed: it stops counting, unless it was fire-and-forget (held until
    /// [`release_held`](Self::release_held)).
    fn completed(&self, fire_and_forget: bool) {
        if fire_and_forget {
            self.held.fetch_add(1, Ordering::Relaxed);
        } else {
            self.forget(1);
        }
    }

    /// The host's launch completed: the fire-and-forget children it held stop counting.
    fn release_held(&self) {
        self.forget(self.held.swap(0, Ordering::Relaxed));
    }
}

/// Thread `t`'s device-side launch `l`, made at nesting depth `depth` (of the launching grid):
/// queued on its grid, or reported (and the thread stopped) when CUDA would refuse it.
pub(super) fn queue(t: &ThreadCtx<'_>, depth: u32, children: &Children, pending: &Pending, l: DeviceLaunch) -> u32 {
    let launch = t.block.launch;
    let from = format!(
        "`{}` block {}, thread {}, at {}",
        launch.kernel,
        dim(t.block.idx),
        dim(t.idx),
        super::site_line(l.site)
    );
    let what = format!("`{}`<<<{}, {}>>>", l.kernel, dim(l.grid), dim(l.block));
    if depth + 1 > MAX_DEPTH {
        stop_with_report(
            EmuErrorKind::BadLaunch,
            format!("{from} launched {what} at nesting depth {}, past CUDA's limit of {MAX_DEPTH}", depth + 1),
        );
    }
    if l.grid.volume() == 0 || l.block.volume() == 0 || l.block.volume() > 1024 {
        stop_with_report(
            EmuErrorKind::BadLaunch,
            format!("{from} launched {what}: a grid needs at least one block of 1 to 1024 threads"),
        );
    }
    let limit = pending.limit.load(Ordering::Relaxed);
    if pending.count.fetch_add(1, Ordering::Relaxed) >= limit {
        pending.count.fetch_sub(1, Ordering::Relaxed);
        stop_with_report(
            EmuErrorKind::BadLaunch,
            format!(
                "{from} launched {what}: {limit} device-side launches are already pending, CUDA's limit \
                 (cudaLimitDevRuntimePendingLaunchCount; the host raises it with cudaDeviceSetLimit)"
            ),
        );
    }
    // The launching thread's stores into the parameter buffer, as the GPU makes them.
    if let Some(c) = &t.block.counting {
        c.borrow_mut().parameter_buffer(l.param_sizes);
    }
    // SAFETY: the device layer passes its `Child` as `params_len` readable bytes, alive for
    // this call.
    let params = unsafe { std::slice::from_raw_parts(l.params, l.params_len) }.to_vec();
    let fire_and_forget = matches!(l.stream, device::launch::DeviceStream::FireAndForget);
    let child =
        QueuedChild { kernel: l.kernel, grid: l.grid, block: l.block, params, run: l.run, fire_and_forget, from };
    children.lock().unwrap().push(child);
    device::launch::LAUNCH_OK
}

impl Emulator {
    /// Runs the device-side launches a grid at nesting `depth` queued, in order, each with the
    /// launches it queues in turn; the first failure ends the run, named with where the failing
    /// child was launched from.
    pub(super) fn run_children(&self, children: Vec<QueuedChild>, depth: u32) -> Result<(), EmuError> {
        let mut left = children.len();
        let result = self.run_queued(children, depth, &mut left);
        // Completed children left the count one by one; those a failure left unrun leave now.
        self.pending.forget(left);
        if depth == 0 {
            self.pending.release_held();
        }
        result
    }

    /// [`run_children`](Self::run_children)'s loop: `left` counts the children not yet done.
    fn run_queued(&self, children: Vec<QueuedChild>, depth: u32, left: &mut usize) -> Result<(), EmuError> {
        for child in children {
            let run = child.run;
            let params = child.params.as_ptr();
            let body = move || {
                // SAFETY: `params` is the launching kernel's copy of this child (kept alive by
                // `child` until the launch returns), read back by the `run` made for its type.
                unsafe { run(params) }
            };
            let body = SyncBody(body);
            // SAFETY: the launching kernel promised the child's preconditions for this launch.
            let result = unsafe { self.launch_at(child.kernel, child.grid, child.block, 0, &|| body.run(), depth + 1) };
            *left -= 1;
            self.pending.completed(child.fire_and_forget);
            result.map_err(|mut e| {
                e.detail = format!("{} (a device-side launch by {})", e.detail, child.from);
                e
            })?;
        }
        Ok(())
    }
}

/// A child's body, which holds a raw pointer to its parameters: the emulated threads only read
/// through it, while the launch that owns the parameters waits.
struct SyncBody<F>(F);

impl<F: Fn()> SyncBody<F> {
    fn run(&self) {
        (self.0)()
    }
}

// SAFETY: the pointer is only read, by the child's threads, while `run_children` keeps the
// bytes alive and unchanged.
unsafe impl<F> Sync for SyncBody<F> {}

#[cfg(test)]
mod tests {
    use crate::backend::{Backend, LaunchConfig};

    /// The project's kernels as these tests name them: the emulator runs them from the kernels
    /// crate compiled for the host, and never reads a module's PTX.
    static KERNELS: crate::ptx::Module = crate::ptx::Module::new("reduce_scan_kernels", &[]);

    macro_rules! kernel_ref {
        ($($t:tt)*) => { crate::kernel_in!(&KERNELS, $($t)*) };
    }

    /// Room for every launch of every fire-and-forget chain of a per-block nested grid (as
    /// `reduce_scan::reduce::plan::per_block_pending_launches` gives it): `log2(block) - 1` per
    /// block, and the nesting depth.
    fn room_for_every_chain(grid: u32, block: u32) -> usize {
        (grid as usize * (block.ilog2() as usize - 1) + 24).max(super::DEFAULT_PENDING_LAUNCHES)
    }

    /// The test inputs: n values from a fixed formula (no two neighbours alike).
    fn input(n: usize) -> Vec<i32> {
        (0..n).map(|i| ((i as i64 * 7919 % 2003) - 1001) as i32).collect()
    }

    /// Runs one nested kernel on `n` elements at `block` (`dim` for `recursive_reduce2`) and
    /// returns the host's sum of its per-block answers, with the CPU's.
    fn nested_sum(kernel: &str, n: usize, block: u32) -> (i32, i32) {
        let b = Backend::emulator();
        let data = input(n);
        let want = data.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        let mut buf = b.upload(&data).unwrap();
        let grid = n.div_ceil(block as usize) as u32;
        let mut out = b.alloc::<i32>(grid as usize).unwrap();
        let (p, o) = (buf.as_mut_ptr(), out.as_mut_ptr());
        let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
        b.raise_pending_launch_limit(room_for_every_chain(grid, block)).unwrap();
        let tail = kernel_ref!(kernels::reduce::recursive_reduce(p, o, n));
        let fire = kernel_ref!(kernels::reduce::recursive_reduce_nosync(p, o, n));
        let level = kernel_ref!(kernels::reduce::recursive_reduce2(p, o, n, s, d));
        // SAFETY: the buffers hold n and grid elements; every kernel's documented launch.
        let r = unsafe {
            match kernel {
                "recursive_reduce" => b.launch(&tail, cfg, (p, o, n as u32)),
                "recursive_reduce_nosync" => b.launch(&fire, cfg, (p, o, n as u32)),
                _ => b.launch(&level, LaunchConfig { block: block / 2, ..cfg }, (p, o, n as u32, block / 2, block)),
            }
        };
        r.unwrap_or_else(|e| panic!("{kernel} n={n} block={block}: {e}"));
        let partials = b.download(&out).unwrap();
        (partials.iter().fold(0i32, |a, &x| a.wrapping_add(x)), want)
    }

    #[test]
    fn the_three_nested_reductions_sum_every_size() {
        for kernel in ["recursive_reduce", "recursive_reduce_nosync", "recursive_reduce2"] {
            for block in [32u32, 128, 512] {
                for n in [1usize, 2, 31, 32, 33, 1023, 1024, 1025, 20_011] {
                    let (got, want) = nested_sum(kernel, n, block);
                    assert_eq!(got, want, "{kernel} n={n} block={block}: expected {want}, got {got}");
                }
            }
        }
    }

    /// Issue 40: the counters of a nested reduction are those of every level of every chain, and
    /// of the launching threads' stores of three parameters (two pointers and the length) per
    /// device-side launch. At n = 2 × 128 + 3, block 128: two full chains of 16 loads and 8
    /// stores (the first level's two warps make 4 and 2, each of the six children's one warp 2
    /// and 1), the 3-element block's chain 4 and 2, and 3 × 6 launches; docs/counters.md works
    /// the same sums at n = 5·2^20 + 3.
    #[test]
    fn a_nested_reductions_counters_are_every_level_and_the_parameter_stores() {
        let (n, block) = (2 * 128 + 3usize, 128u32);
        let grid = n.div_ceil(block as usize) as u32;
        for kernel in ["recursive_reduce", "recursive_reduce_nosync"] {
            let b = Backend::emulator().counting().unwrap();
            let mut buf = b.upload(&input(n)).unwrap();
            let mut out = b.alloc::<i32>(grid as usize).unwrap();
            let (p, o) = (buf.as_mut_ptr(), out.as_mut_ptr());
            let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
            b.raise_pending_launch_limit(room_for_every_chain(grid, block)).unwrap();
            let tail = kernel_ref!(kernels::reduce::recursive_reduce(p, o, n));
            let fire = kernel_ref!(kernels::reduce::recursive_reduce_nosync(p, o, n));
            // SAFETY: the buffers hold n and grid elements (the kernels' documented launch).
            let r = unsafe {
                if kernel == "recursive_reduce" {
                    b.launch(&tail, cfg, (p, o, n as u32))
                } else {
                    b.launch(&fire, cfg, (p, o, n as u32))
                }
            };
            r.unwrap();
            let counted = b.take_counted();
            assert_eq!(counted.len(), 1 + 3 * 6, "{kernel}: the host's launch and 6 children per block");
            let mut total = crate::emu::counters::Counters::default();
            counted.iter().for_each(|c| total.add(&c.counters));
            let launches = 3 * 6;
            assert_eq!(total.gld_requests, 2 * 16 + 4, "{kernel}: loads");
            assert_eq!(total.gst_requests, 2 * 8 + 2 + 3 * launches, "{kernel}: stores");
            // A full chain's stores are 2 × 32 lanes, then 32, 16, 8, 4, 2 and 1 lanes, of 4 bytes;
            // the short chain's two of one lane; each launch's parameters 8 + 8 + 4 bytes.
            let chain = (2 * 32 + 32 + 16 + 8 + 4 + 2 + 1) * 4;
            assert_eq!(total.gst_bytes, 2 * chain + 2 * 4 + 20 * launches, "{kernel}: store bytes");
        }
    }

    #[test]
    fn fire_and_forget_chains_count_as_pending_together_as_on_a_gpu() {
        // On the H100, recursive_reduce_nosync with room for one pending child per block (and
        // the nesting depth) failed every run: its chains run at once. The emulator counts the
        // same way, so the room that is enough for the tail-launched chains is not for these.
        let (n, block) = (70_001usize, 32u32);
        let grid = n.div_ceil(block as usize) as u32;
        let b = Backend::emulator();
        let mut buf = b.upload(&input(n)).unwrap();
        let mut out = b.alloc::<i32>(grid as usize).unwrap();
        let (p, o) = (buf.as_mut_ptr(), out.as_mut_ptr());
        let cfg = LaunchConfig { grid, block, shared_bytes: 0 };
        let one_each = grid as usize + 24;
        assert!(one_each > super::DEFAULT_PENDING_LAUNCHES);
        assert_eq!(b.raise_pending_launch_limit(one_each).unwrap(), one_each);
        let tail = kernel_ref!(kernels::reduce::recursive_reduce(p, o, n));
        let fire = kernel_ref!(kernels::reduce::recursive_reduce_nosync(p, o, n));
        // SAFETY: the buffers hold n and grid elements (the kernels' documented launch).
        unsafe { b.launch(&tail, cfg, (p, o, n as u32)) }
            .expect("tail-launched chains fit one pending child per block");
        // SAFETY: as above.
        let e = unsafe { b.launch(&fire, cfg, (p, o, n as u32)) }.unwrap_err().to_string();
        assert!(e.contains(&format!("{one_each} device-side launches are already pending")), "{e}");
        b.raise_pending_launch_limit(room_for_every_chain(grid, block)).unwrap();
        // SAFETY: as above.
        unsafe { b.launch(&fire, cfg, (p, o, n as u32)) }.expect("room for every chain's launches");
    }

    #[test]
    fn room_past_what_the_h100_grants_is_clamped_as_the_h100_clamps_it() {
        // recursive_reduce_nosync at 2^24 in blocks of 128 needs 786,456; the H100 grants 599,186
        // (docs/measurements/2026-11-25-h100/nested/limits.txt), and so does the emulator.
        let b = Backend::emulator();
        assert_eq!(b.raise_pending_launch_limit(524_312).unwrap(), 524_312);
        assert_eq!(b.raise_pending_launch_limit(786_456).unwrap(), super::MAX_PENDING_LAUNCHES);
        assert_eq!(b.raise_pending_launch_limit(4096).unwrap(), super::MAX_PENDING_LAUNCHES, "never lowered");
    }

    #[test]
    fn a_launch_past_the_nesting_limit_names_kernel_block_thread_and_line() {
        let b = Backend::emulator();
        let mut out = b.alloc::<i32>(1).unwrap();
        let o = out.as_mut_ptr();
        let endless = kernel_ref!(kernels::broken::nested::endless_recursion(o, d));
        // SAFETY: one element, as the kernel needs.
        let e = unsafe { b.launch(&endless, LaunchConfig { grid: 1, block: 32, shared_bytes: 0 }, (o, 0u32)) }
            .unwrap_err()
            .to_string();
        for part in ["endless_recursion", "block 0", "thread 0", "broken.rs:", "nesting depth 25", "limit of 24"] {
            assert!(e.contains(part), "no `{part}` in: {e}");
        }
        assert_eq!(b.download(&out).unwrap(), [24], "the grid at depth 24 ran, the one past it did not");
    }

    #[test]
    fn past_the_pending_launch_limit_a_launch_is_a_fault_until_the_host_raises_the_limit() {
        let b = Backend::emulator();
        let n = 40 * 32 + 5;
        let data = input(n);
        let mut buf = b.upload(&data).unwrap();
        let mut out = b.alloc::<i32>(41).unwrap();
        let (p, o) = (buf.as_mut_ptr(), out.as_mut_ptr());
        let tail = kernel_ref!(kernels::reduce::recursive_reduce(p, o, n));
        let cfg = LaunchConfig { grid: 41, block: 32, shared_bytes: 0 };
        let Backend::Emulator(emu, _) = &b else { unreachable!("an emulator backend") };
        emu.set_pending_launch_limit(40);
        // SAFETY: the buffers hold n and 41 elements.
        let e = unsafe { b.launch(&tail, cfg, (p, o, n as u32)) }.unwrap_err().to_string();
        for part in
            ["recursive_reduce", "40 device-side launches are already pending", "cudaLimitDevRuntimePendingLaunchCount"]
        {
            assert!(e.contains(part), "no `{part}` in: {e}");
        }
        // The failed grid's queued children were dropped: with room for them, the next launch runs.
        emu.set_pending_launch_limit(41 + 5);
        let mut buf = b.upload(&data).unwrap();
        let p = buf.as_mut_ptr();
        // SAFETY: as above.
        unsafe { b.launch(&tail, cfg, (p, o, n as u32)) }.unwrap();
        let got = b.download(&out).unwrap().iter().fold(0i32, |a, &x| a.wrapping_add(x));
        assert_eq!(got, data.iter().fold(0i32, |a, &x| a.wrapping_add(x)));
    }

    #[test]
    fn a_fault_in_a_child_names_the_child_and_where_it_was_launched() {
        let b = Backend::emulator();
        let mut buf = b.upload(&[7]).unwrap();
        let p = buf.as_mut_ptr();
        let parent = kernel_ref!(kernels::broken::nested::launches_a_bad_child(p));
        // SAFETY: none for the child, on purpose: the emulator must report it.
        let e = unsafe { b.launch(&parent, LaunchConfig { grid: 2, block: 32, shared_bytes: 0 }, (p,)) }
            .unwrap_err()
            .to_string();
        for part in ["reads_past_the_end", "a device-side launch by `launches_a_bad_child` block 1, thread 3"] {
            assert!(e.contains(part), "no `{part}` in: {e}");
        }
    }
}
