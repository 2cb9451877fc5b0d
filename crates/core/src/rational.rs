//! Exact ratios of non-negative integers, compared by cross-multiplication.
//!
//! Loads are `transfers / capacity`; comparing them as floats would make classes of equal
//! throughput depend on rounding, so they are kept exact.

use std::cmp::Ordering;

/// A non-negative ratio `num / den` with `den > 0`.
#[derive(Debug, Clone, Copy)]
pub struct Ratio {
    pub num: u128,
    pub den: u128,
}

impl Ratio {
    /// Build a ratio; `den` must be positive.
    pub fn new(num: u128, den: u128) -> Self {
        debug_assert!(den > 0);
        Ratio { num, den }
    }

    /// The zero ratio.
    pub fn zero() -> Self {
        Ratio { num: 0, den: 1 }
    }

    /// The same value with numerator and denominator divided by their gcd.
    pub fn reduced(self) -> Self {
        let g = gcd(self.num, self.den);
        if g <= 1 {
            self
        } else {
            Ratio {
                num: self.num / g,
                den: self.den / g,
            }
        }
    }

    /// The value as a float (for display only; comparisons stay exact).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl PartialEq for Ratio {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ratio {}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ratio {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
}

/// Greatest common divisor (Euclid).
pub fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_by_value() {
        assert!(Ratio::new(6, 100) > Ratio::new(5, 100));
        assert_eq!(Ratio::new(2, 4), Ratio::new(1, 2));
        assert!(Ratio::new(1, 3) < Ratio::new(1, 2));
    }

    #[test]
    fn reduces() {
        let r = Ratio::new(2500, 600).reduced();
        assert_eq!((r.num, r.den), (25, 6));
        assert_eq!(gcd(0, 7), 7);
    }
}
