//! Helpers shared by the unit tests of the algorithm modules.

use std::collections::HashSet;

/// Every transfer in exactly one frame, and no resource twice in a frame.
pub fn is_valid_schedule(paths: &[Vec<u32>], frames: &[Vec<u32>]) -> bool {
    let mut seen = vec![false; paths.len()];
    for f in frames {
        let mut used = HashSet::new();
        for &t in f {
            if std::mem::replace(&mut seen[t as usize], true) {
                return false;
            }
            if !paths[t as usize].iter().all(|r| used.insert(*r)) {
                return false;
            }
        }
    }
    seen.iter().all(|&s| s)
}

/// Paper 000 Fig. 2, half all-to-all: resources 0-4 are the sender links, 5-9 the receiver
/// links, 10 the link a→b (senders 0-2 to receivers 3-4) and 11 the link b→a.
pub fn two_switch_paths() -> Vec<Vec<u32>> {
    let mut paths = Vec::new();
    for i in 0..5u32 {
        for j in 0..5u32 {
            let mut p = vec![i, 5 + j];
            if i < 3 && j >= 3 {
                p.push(10);
            }
            if i >= 3 && j < 3 {
                p.push(11);
            }
            paths.push(p);
        }
    }
    paths
}
