//! Tests only: xorshift pseudo-random numbers, the same sequence from the
//! same seed on every machine, so that a generated case that fails can be
//! replayed.

/// Marsaglia's 32-bit xorshift (13, 17, 5).
pub(crate) struct XorShift32(u32);

impl XorShift32 {
    /// `seed` must not be 0 (the sequence would stay 0).
    pub(crate) fn new(seed: u32) -> XorShift32 {
        XorShift32(seed)
    }

    pub(crate) fn next_u32(&mut self) -> u32 {
        let x = &mut self.0;
        *x ^= *x << 13;
        *x ^= *x >> 17;
        *x ^= *x << 5;
        *x
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.next_u32() as usize % n
    }
}

/// Marsaglia's 64-bit xorshift (13, 7, 17).
pub(crate) struct XorShift64(u64);

impl XorShift64 {
    /// `seed` must not be 0 (the sequence would stay 0).
    pub(crate) fn new(seed: u64) -> XorShift64 {
        XorShift64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let x = &mut self.0;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_marsaglias() {
        // The first values of the published generators.
        let mut a = XorShift32::new(2_463_534_242);
        assert_eq!(a.next_u32(), 723_471_715);
        let mut b = XorShift64::new(88_172_645_463_325_252);
        assert_eq!(b.next_u64(), 8_748_534_153_485_358_512);
        assert!(XorShift32::new(7).below(10) < 10);
    }
}
