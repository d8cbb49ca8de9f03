//! Deterministic test inputs: the same seed gives the same values on every machine — `i32`s
//! ([`Input`]) and, for the typed reductions, any [`Value`] type in the patterns of
//! [`Pattern`] ([`typed`]).

use crate::types::Value;

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

/// What a typed input looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Random values ([`Value::random`]: integers over their whole range, floats ±[2⁻⁸, 2⁸)).
    Random,
    /// Cancellation: pairs `+x`, `−x` of large values (±2¹⁰…2²⁰) with small values (±2⁻⁸…2⁸)
    /// between them, so that the sum is small next to Σ|x| — the case where a float sum's
    /// rounding shows. For integers, the same shape (the pairs cancel exactly).
    Cancelling,
    /// One value, repeated.
    AllEqual,
    /// The type's extremes ([`Value::extremes`]) in a random order (`for_sum`: values whose
    /// float sums cannot overflow).
    Extremes {
        /// Leave out ±MAX and ±inf (float sums).
        for_sum: bool,
    },
}

/// `n` values of `T` in `pattern` from `seed`.
pub fn typed<T: Value>(n: usize, seed: u64, pattern: Pattern) -> Vec<T> {
    let mut rng = SplitMix64::new(seed);
    match pattern {
        Pattern::Random => (0..n).map(|_| T::random(rng.next())).collect(),
        Pattern::AllEqual => vec![T::random(rng.next()); n],
        Pattern::Extremes { for_sum } => {
            let pool = T::extremes(for_sum);
            (0..n).map(|_| pool[(rng.next() % pool.len() as u64) as usize]).collect()
        }
        Pattern::Cancelling => {
            let mut out = Vec::with_capacity(n);
            while out.len() < n {
                let w = rng.next();
                if w.is_multiple_of(3) {
                    out.push(T::random(rng.next()));
                } else {
                    // A large value, then its negation, a few places later.
                    let big = T::from_f64(((w >> 8) % (1 << 20) + (1 << 10)) as f64);
                    out.push(big);
                    out.push(T::random(rng.next()));
                    out.push(T::from_f64(-(((w >> 8) % (1 << 20) + (1 << 10)) as f64)));
                }
            }
            out.truncate(n);
            out
        }
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

    #[test]
    fn typed_patterns() {
        let c = typed::<f64>(3001, 7, Pattern::Cancelling);
        assert_eq!(c.len(), 3001);
        let (sum, abs): (f64, f64) = (c.iter().sum(), c.iter().map(|x| x.abs()).sum());
        assert!(sum.abs() < abs / 100.0, "cancelling input should cancel: {sum} vs {abs}");
        assert!(typed::<u32>(10, 1, Pattern::AllEqual).windows(2).all(|w| w[0] == w[1]));
        assert_eq!(typed::<i64>(50, 3, Pattern::Random), typed::<i64>(50, 3, Pattern::Random));
        assert!(typed::<f32>(500, 3, Pattern::Extremes { for_sum: false }).iter().any(|x| x.is_infinite()));
    }
}
