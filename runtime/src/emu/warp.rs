//! What a warp-collective operation returns to each lane, as pure functions of what the
//! lanes handed in. These follow the PTX ISA's definitions of `shfl.sync`, `vote.sync` and
//! `redux.sync`.

use device::emu::{ReduxOp, ShflMode, VoteMode, WarpOp};

/// What a lane reads from a lane that is not in the mask: PTX leaves it undefined; a
/// conspicuous value makes a kernel that relies on it fail its check.
pub const UNDEFINED: u32 = 0xDEAD_BEEF;

/// The lane `lane` reads from, for `shfl.sync.mode` with operands `b` and `c`, and whether
/// the read is in range (`false`: the lane keeps its own value). PTX ISA, `shfl.sync`:
/// `c` packs the segment mask (`c >> 8`) and the clamp value (`c & 0x1f`).
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let seg_mask = (c >> 8) & 0x1f;
    let clamp = c & 0x1f;
    let max_lane = (lane & seg_mask) | (clamp & !seg_mask);
    let min_lane = lane & seg_mask;
    let (j, in_range) = match mode {
        ShflMode::Up => {
            let j = lane as i64 - b as i64;
            (j, j >= max_lane as i64)
        }
        ShflMode::Down => {
            let j = lane as i64 + b as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Bfly => {
            let j = (lane ^ b) as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Idx => {
            let j = (min_lane | (b & !seg_mask)) as i64;
            (j, j <= max_lane as i64)
        }
    };
    if in_range { (j as u32 & 31, true) } else { (lane, false) }
}

/// Results for the lanes of `mask`, given each lane's operation (`ops[lane]`, `Some` for
/// every lane of the mask, all of the same kind).
pub fn resolve(mask: u32, ops: &[Option<WarpOp>; 32]) -> [u32; 32] {
    let mut out = [0u32; 32];
    let lanes = (0..32u32).filter(|l| mask & (1 << l) != 0);
    let first = ops[mask.trailing_zeros() as usize].expect("a lane of the mask has no operation");
    match first {
        WarpOp::Shfl { .. } => {
            for lane in lanes {
                let Some(WarpOp::Shfl { mode, value, b, c }) = ops[lane as usize] else {
                    continue;
                };
                let (src, _) = shfl_source(mode, lane, b, c);
                out[lane as usize] = if src == lane {
                    value
                } else if mask & (1 << src) != 0 {
                    match ops[src as usize] {
                        Some(WarpOp::Shfl { value, .. }) => value,
                        _ => UNDEFINED,
                    }
                } else {
                    UNDEFINED
                };
            }
        }
        WarpOp::Sync => {}
        WarpOp::Vote { mode, .. } => {
            let ballot = lanes
                .clone()
                .filter(|&l| matches!(ops[l as usize], Some(WarpOp::Vote { pred: true, .. })))
                .fold(0u32, |acc, l| acc | (1 << l));
            let r = match mode {
                VoteMode::Ballot => ballot,
                VoteMode::All => (ballot == mask) as u32,
                VoteMode::Any => (ballot != 0) as u32,
            };
            for lane in lanes {
                out[lane as usize] = r;
            }
        }
        WarpOp::Redux { op, .. } => {
            let values = lanes.clone().map(|l| match ops[l as usize] {
                Some(WarpOp::Redux { value, .. }) => value,
                _ => 0,
            });
            let r = match op {
                ReduxOp::Add => values.fold(0u32, u32::wrapping_add),
                ReduxOp::MinS32 => values.map(|v| v as i32).min().unwrap_or(0) as u32,
                ReduxOp::MaxS32 => values.map(|v| v as i32).max().unwrap_or(0) as u32,
                ReduxOp::MinU32 => values.min().unwrap_or(0),
                ReduxOp::MaxU32 => values.max().unwrap_or(0),
                ReduxOp::And => values.fold(u32::MAX, |a, v| a & v),
                ReduxOp::Or => values.fold(0, |a, v| a | v),
                ReduxOp::Xor => values.fold(0, |a, v| a ^ v),
            };
            for lane in lanes {
                out[lane as usize] = r;
            }
        }
    }
    out
}

/// Whether two lanes' operations may meet in one warp-collective step: the same
/// instruction with the same qualifiers (PTX: "the same qualifiers and same membermask").
pub fn same_kind(a: &WarpOp, b: &WarpOp) -> bool {
    match (a, b) {
        (WarpOp::Shfl { mode: m1, .. }, WarpOp::Shfl { mode: m2, .. }) => m1 == m2,
        (WarpOp::Sync, WarpOp::Sync) => true,
        (WarpOp::Vote { mode: m1, .. }, WarpOp::Vote { mode: m2, .. }) => m1 == m2,
        (WarpOp::Redux { op: o1, .. }, WarpOp::Redux { op: o2, .. }) => o1 == o2,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shfl_all(mode: ShflMode, b: u32, c: u32) -> [u32; 32] {
        let mut ops = [None; 32];
        for l in 0..32u32 {
            ops[l as usize] = Some(WarpOp::Shfl { mode, value: 100 + l, b, c });
        }
        resolve(u32::MAX, &ops)
    }

    #[test]
    fn shfl_down_keeps_own_value_past_the_end() {
        let r = shfl_all(ShflMode::Down, 4, 0x1f);
        for l in 0..28 {
            assert_eq!(r[l], 100 + l as u32 + 4);
        }
        for l in 28..32 {
            assert_eq!(r[l], 100 + l as u32);
        }
    }

    #[test]
    fn shfl_up_keeps_own_value_below_delta() {
        let r = shfl_all(ShflMode::Up, 3, 0);
        for l in 0..3 {
            assert_eq!(r[l], 100 + l as u32);
        }
        for l in 3..32 {
            assert_eq!(r[l], 100 + l as u32 - 3);
        }
    }

    #[test]
    fn shfl_xor_and_idx() {
        let r = shfl_all(ShflMode::Bfly, 1, 0x1f);
        assert_eq!((r[0], r[1], r[30], r[31]), (101, 100, 131, 130));
        let r = shfl_all(ShflMode::Idx, 7, 0x1f);
        assert!(r.iter().all(|&v| v == 107));
    }

    #[test]
    fn shfl_width_16_stays_in_segment() {
        // width 16: c = ((32 - 16) << 8) | 0x1f
        let r = shfl_all(ShflMode::Down, 8, (16 << 8) | 0x1f);
        assert_eq!(r[0], 108);
        assert_eq!(r[8], 108, "lane 8 + 8 = 16 leaves the first segment");
        assert_eq!(r[16], 124);
        let r = shfl_all(ShflMode::Idx, 3, (16 << 8) | 0x1f);
        assert_eq!((r[0], r[20]), (103, 119));
    }

    #[test]
    fn shfl_from_lane_outside_mask_is_undefined() {
        let mut ops = [None; 32];
        for l in 0..16u32 {
            ops[l as usize] = Some(WarpOp::Shfl { mode: ShflMode::Down, value: l, b: 1, c: 0x1f });
        }
        let r = resolve(0xffff, &ops);
        assert_eq!(r[14], 15);
        assert_eq!(r[15], UNDEFINED);
    }

    #[test]
    fn votes_and_redux() {
        let mut ops = [None; 32];
        for l in 0..32u32 {
            ops[l as usize] = Some(WarpOp::Vote { mode: VoteMode::Ballot, pred: l % 2 == 0 });
        }
        assert_eq!(resolve(u32::MAX, &ops)[5], 0x5555_5555);
        assert_eq!(resolve(0xff, &ops)[0], 0x55);
        let mut ops = [None; 32];
        for l in 0..32u32 {
            ops[l as usize] = Some(WarpOp::Redux { op: ReduxOp::Add, value: (l as i32 - 20) as u32 });
        }
        let sum: i32 = (0..32).map(|l| l - 20).sum();
        assert_eq!(resolve(u32::MAX, &ops)[31] as i32, sum);
        let mut ops = [None; 32];
        for l in 0..32u32 {
            ops[l as usize] = Some(WarpOp::Redux { op: ReduxOp::MinS32, value: (l as i32 - 20) as u32 });
        }
        assert_eq!(resolve(u32::MAX, &ops)[0] as i32, -20);
    }
}
