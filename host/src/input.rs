//! Deterministic test inputs: the same seed gives the same `i32`s on every machine.

/// An input array and how it was made.
#[derive(Clone, Debug)]
pub struct Input {
    /// The elements.
    pub data: Vec<i32>,
    /// The seed they came from.
    pub seed: u64,
}

/// SplitMix64: a tiny, well-mixed 64-bit generator (Steele, Lea & Flood, 2014).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Input {
    /// `n` values in `-128..=127`, like the book's `rand() & 0xFF` but with negatives:
    /// sums stay readable and fit in `i32` up to 2^24 elements.
    pub fn small(n: usize, seed: u64) -> Self {
        Self::generate(n, seed, |w| (w as u8 as i8) as i32)
    }

    /// `n` values over the whole `i32` range: sums wrap at every size, which checks that the
    /// kernels wrap exactly as the reference does.
    pub fn full_range(n: usize, seed: u64) -> Self {
        Self::generate(n, seed, |w| w as i32)
    }

    fn generate(n: usize, seed: u64, f: impl Fn(u32) -> i32) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut data = Vec::with_capacity(n);
        while data.len() < n {
            let w = rng.next();
            data.push(f(w as u32));
            if data.len() < n {
                data.push(f((w >> 32) as u32));
            }
        }
        Self { data, seed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_signed() {
        let a = Input::small(1001, 42);
        let b = Input::small(1001, 42);
        assert_eq!(a.data, b.data);
        assert_eq!(a.data.len(), 1001);
        assert!(a.data.iter().any(|&x| x < 0) && a.data.iter().any(|&x| x > 0));
        assert!(a.data.iter().all(|&x| (-128..=127).contains(&x)));
        assert_ne!(Input::small(64, 1).data, Input::small(64, 2).data);
    }
}
