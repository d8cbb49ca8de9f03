//! The room a nested reduction (dynamic parallelism, `Finish::Nested`) needs for the launches
//! its blocks make from the device, and how a grid too large for the room the device grants is
//! cut into host launches that fit.

/// CUDA's default limit of pending device-side launches (`cudaLimitDevRuntimePendingLaunchCount`).
pub const DEFAULT_PENDING_LAUNCHES: usize = 2048;

/// The pending device-side launches a per-block nested grid of `grid` blocks of `block` needs
/// at once. Each block's chain makes `log2(block) - 1` launches (down to a 2-thread child).
/// - Children that start after their parent grid (the tail-launch stream): one pending child
///   per block, and the chain's own while it runs: `grid + 24`.
/// - Children that start at once (the fire-and-forget stream): every chain may have all its
///   launches pending together. On the H100, `recursive_reduce_nosync` with `grid + 24` failed
///   every run (the launch refused, so the kernel trapped).
///
/// Not more than that: a larger pool makes every device-side launch slower. On the H100,
/// `recursive_reduce` at 2^20 + 7 in blocks of 128 took 0.65 s with `grid + 24` and 1.07 s with
/// the fire-and-forget bound (`docs/nested.md`). At least CUDA's default.
pub fn per_block_pending_launches(grid: u32, block: u32, children: Children) -> usize {
    (grid as usize * pending_per_chain(block, children) + kernels::device::launch::MAX_DEPTH as usize)
        .max(DEFAULT_PENDING_LAUNCHES)
}

/// The launches of one block's chain that may be pending at once: its one tail-launched child,
/// or every launch of a fire-and-forget chain (`log2(block) - 1`, down to a 2-thread child).
pub(super) fn pending_per_chain(block: u32, children: Children) -> usize {
    match children {
        Children::AfterTheGrid => 1,
        Children::AtOnce => block.max(2).ilog2().saturating_sub(1) as usize,
    }
}

/// Blocks per host launch of a per-block nested grid of `grid` blocks of `block`, when the
/// device grants `room` pending device-side launches: the whole grid where its launches fit
/// ([`per_block_pending_launches`]), else the grid cut into as few launches of equal size as fit
/// (the last may be shorter). A host launch completes only once every child it made has, so
/// each launch starts with the pool empty. `None` when not even one block's chain fits.
///
/// On the H100 the driver grants at most 599,186: `recursive_reduce_nosync` at 2^24 in blocks of
/// 128 (131,072 chains of 6 launches) runs as two launches of 65,536 blocks.
pub fn blocks_per_nested_launch(grid: u32, block: u32, children: Children, room: usize) -> Option<u32> {
    if per_block_pending_launches(grid, block, children) <= room {
        return Some(grid);
    }
    let most =
        room.checked_sub(kernels::device::launch::MAX_DEPTH as usize)? / pending_per_chain(block, children).max(1);
    let most = u32::try_from(most).unwrap_or(u32::MAX);
    if most == 0 {
        return None;
    }
    let launches = grid.div_ceil(most);
    Some(grid.div_ceil(launches))
}

/// When a per-block nested kernel's children start, which decides how many launches may be
/// pending at once ([`per_block_pending_launches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Children {
    /// After the launching grid has completed (`DeviceStream::Tail`).
    AfterTheGrid,
    /// At once, unordered with the launching grid (`DeviceStream::FireAndForget`).
    AtOnce,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, LaunchConfig};
    use crate::registry::find;

    #[test]
    fn a_per_block_nested_grid_has_room_for_the_launches_its_children_keep_pending() {
        use Children::{AfterTheGrid, AtOnce};
        // Fire and forget, 2049 blocks of 512: 8 launches per chain (256 … 2 threads) at once,
        // plus the nesting depth.
        assert_eq!(per_block_pending_launches(2049, 512, AtOnce), 2049 * 8 + 24);
        assert_eq!(per_block_pending_launches(524_288, 32, AtOnce), 524_288 * 4 + 24);
        // Tail launches: one pending child per block.
        assert_eq!(per_block_pending_launches(32_769, 32, AfterTheGrid), 32_769 + 24);
        // Never below CUDA's default, even for a grid that needs less.
        assert_eq!(per_block_pending_launches(1, 32, AtOnce), DEFAULT_PENDING_LAUNCHES);
        assert_eq!(per_block_pending_launches(2049, 512, AfterTheGrid), 2049 + 24);
        assert_eq!(per_block_pending_launches(1000, 512, AfterTheGrid), DEFAULT_PENDING_LAUNCHES);
        assert_eq!(per_block_pending_launches(1, 2, AtOnce), DEFAULT_PENDING_LAUNCHES);
    }

    #[test]
    fn a_nested_grid_past_the_room_the_device_grants_is_cut_into_launches_that_fit() {
        use Children::{AfterTheGrid, AtOnce};
        const H100: usize = crate::emu::nested::MAX_PENDING_LAUNCHES;
        // Fits: the whole grid in one launch.
        assert_eq!(blocks_per_nested_launch(8193, 128, AtOnce, H100), Some(8193));
        assert_eq!(blocks_per_nested_launch(131_072, 128, AfterTheGrid, H100), Some(131_072));
        // recursive_reduce_nosync at 2^24 in blocks of 128: 786,456 needed, at most 99,860
        // chains of 6 fit, so two launches of 65,536.
        assert_eq!(blocks_per_nested_launch(131_072, 128, AtOnce, H100), Some(65_536));
        // At 2^24 + 7 the last launch is one block shorter.
        assert_eq!(blocks_per_nested_launch(131_073, 128, AtOnce, H100), Some(65_537));
        // Blocks of 32 at 2^24: 524,288 chains of 4, 149,790 fit: four launches of 131,072.
        assert_eq!(blocks_per_nested_launch(524_288, 32, AtOnce, H100), Some(131_072));
        // Not even one chain (4 launches and the depth) fits in 27.
        assert_eq!(blocks_per_nested_launch(10, 32, AtOnce, 27), None);
        assert_eq!(blocks_per_nested_launch(10, 32, AtOnce, 28), Some(1));
    }

    #[test]
    fn a_nested_reduction_runs_in_parts_where_the_device_grants_too_little_room() {
        use crate::emu::Emulator;
        // A device granting 3,000: 1,000 chains of 4 fire-and-forget launches need 4,024, so the
        // plan launches two parts of 500 blocks (at most 744 fit), each with its own segments.
        let b = Backend::with_emulator(Emulator::new().granting_at_most(3000));
        let n = 1000 * 32 - 7;
        let data: Vec<i32> = (0..n).map(|i| ((i as i64 * 7919 % 2003) - 1001) as i32).collect();
        let want = data.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        let input = b.upload(&data).unwrap();
        for name in ["recursive_reduce_nosync", "recursive_reduce"] {
            let mut r = crate::reduce::Reduction::new(&b, find(name).unwrap(), &input, n, 32).unwrap();
            r.reset().unwrap();
            r.launch().unwrap_or_else(|e| panic!("{name} n={n} block=32: {e}"));
            assert_eq!(r.result().unwrap(), want, "{name} n={n} block=32: expected {want}");
        }
        // The same grid as one launch does not fit: the kernel's own launch faults.
        let mut scratch = b.upload(&data).unwrap();
        let mut out = b.alloc::<i32>(1000).unwrap();
        let (p, o) = (scratch.as_mut_ptr(), out.as_mut_ptr());
        let fire = crate::kernel_ref!(kernels::reduce::recursive_reduce_nosync(p, o, n));
        let cfg = LaunchConfig { grid: 1000, block: 32, shared_bytes: 0 };
        // SAFETY: the buffers hold n and 1000 elements (the kernel's documented launch).
        let e = unsafe { b.launch(&fire, cfg, (p, o, n as u32)) }.unwrap_err().to_string();
        assert!(e.contains("3000 device-side launches are already pending"), "{e}");
    }
}
