//! The CPU references the scan kernels are checked against: sequential scans with wrapping
//! `i32` addition, as the GPU adds.

/// `out[i] = data[0] + … + data[i]` (wrapping). Empty for an empty slice.
pub fn inclusive_scan(data: &[i32]) -> Vec<i32> {
    let mut sum = 0i32;
    data.iter()
        .map(|&x| {
            sum = sum.wrapping_add(x);
            sum
        })
        .collect()
}

/// `out[i] = data[0] + … + data[i-1]` (wrapping), so `out[0] = 0`. Empty for an empty slice.
pub fn exclusive_scan(data: &[i32]) -> Vec<i32> {
    let mut sum = 0i32;
    data.iter()
        .map(|&x| {
            let before = sum;
            sum = sum.wrapping_add(x);
            before
        })
        .collect()
}

/// The first index where `got` differs from `expected` (or where one of them ends early):
/// `(index, expected, got)`, with `None` standing for a missing element.
pub fn first_mismatch(expected: &[i32], got: &[i32]) -> Option<(usize, Option<i32>, Option<i32>)> {
    if let Some(i) = expected.iter().zip(got).position(|(e, g)| e != g) {
        return Some((i, Some(expected[i]), Some(got[i])));
    }
    if expected.len() != got.len() {
        let i = expected.len().min(got.len());
        return Some((i, expected.get(i).copied(), got.get(i).copied()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;

    #[test]
    fn small_examples() {
        assert_eq!(inclusive_scan(&[3, 1, 7, 0, 4]), vec![3, 4, 11, 11, 15]);
        assert_eq!(exclusive_scan(&[3, 1, 7, 0, 4]), vec![0, 3, 4, 11, 11]);
        assert!(inclusive_scan(&[]).is_empty() && exclusive_scan(&[]).is_empty());
        assert_eq!(exclusive_scan(&[-5]), vec![0]);
    }

    #[test]
    fn wraps_like_the_gpu() {
        assert_eq!(inclusive_scan(&[i32::MAX, 1, 1]), vec![i32::MAX, i32::MIN, i32::MIN + 1]);
        assert_eq!(exclusive_scan(&[i32::MIN, -1, 0]), vec![0, i32::MIN, i32::MAX]);
    }

    #[test]
    fn exclusive_is_inclusive_shifted_and_last_is_the_sum() {
        let data = Input::full_range(1001, 9).data;
        let inc = inclusive_scan(&data);
        let exc = exclusive_scan(&data);
        assert_eq!(exc[0], 0);
        assert_eq!(&exc[1..], &inc[..1000]);
        assert_eq!(inc[1000], crate::cpu::recursive_reduce(&data));
    }

    #[test]
    fn first_mismatch_reports_index_and_values() {
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 5, 3]), Some((1, Some(2), Some(5))));
        assert_eq!(first_mismatch(&[1, 2, 3], &[1, 2]), Some((2, Some(3), None)));
    }
}
