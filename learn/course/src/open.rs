//! Which exercises are open: the rule the build script (which copies the starting files) and
//! `./x learn` (which lists and opens them) share.
//!
//! Each starting file holds the previous lesson's kernel, which is the previous exercise's
//! answer. So a starting file is copied into the learner's folder only when its exercise opens:
//! the first one at once, each next one when the one before it passes, or any one when the
//! learner asks for it (`./x learn N`). Until then the build compiles the starting file from
//! `learn/start/` in its place.

/// The exercises passed, from the text of `learn/exercises/.progress` (`N passed` lines).
pub fn passed_in(progress: &str) -> Vec<u32> {
    progress.lines().filter_map(|l| l.strip_suffix(" passed")?.parse().ok()).collect()
}

/// Whether exercise `number` opens by itself: the first, or the next after one passed.
pub fn opens_by_itself(number: u32, passed: &[u32]) -> bool {
    number <= 1 || passed.contains(&(number - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_opens_at_once_and_each_next_when_the_one_before_passes() {
        let passed = passed_in("1 passed\n2 passed\n5 passed\nnot a line\n");
        assert_eq!(passed, [1, 2, 5]);
        let open: Vec<u32> = (1..=8).filter(|&n| opens_by_itself(n, &passed)).collect();
        assert_eq!(open, [1, 2, 3, 6], "passed {passed:?}");
        assert!(opens_by_itself(1, &[]) && !opens_by_itself(2, &[]));
    }
}
