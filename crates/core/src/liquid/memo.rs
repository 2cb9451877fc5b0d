//! The memo: sub-traffics proven to have no schedule in `k` frames, keyed by a hash of
//! `(k, remaining transfers)`, so that a set of frames reached in another order is not searched
//! twice. The search records a failure when a level is exhausted (`Search::level`), within
//! `SearchOptions::memo_bytes`.

use super::search::Search;

/// Frames left and remaining transfers of a sub-traffic with no schedule.
pub(super) type FailedState = (u32, Box<[u64]>);

/// A 64-bit hash of `(k, remaining)` (FNV-1a over the words, then a final mix).
pub(super) fn rem_hash(k: u32, rem: &[u64]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ k as u64;
    for &w in rem {
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        h ^= h >> 29;
    }
    h
}

impl Search<'_> {
    pub(super) fn known_to_fail(&self, key: u64, k: u32) -> bool {
        self.failed.get(&key).is_some_and(|entries| {
            entries
                .iter()
                .any(|(kk, rem)| *kk == k && rem[..] == self.rem[..])
        })
    }
}
