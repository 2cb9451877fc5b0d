//! DSatur's queue of uncoloured vertices: the one of highest saturation, then highest
//! tie-break priority, and a saturation raised by one, which DSatur does about a billion times
//! for a million transfers: each raise should touch as little memory as it can.

/// A key per leaf (0: removed; otherwise one more than the vertex's saturation in the high 32
/// bits and its tie-break priority in the low 32), the leaves in blocks of [`BLOCK`], and a
/// complete binary tree over the blocks whose nodes hold the largest key below
/// them. Priorities are distinct, so the largest key is one leaf's.
///
/// Why blocks: a raise reads and writes its leaf, and then the node above it only if the key
/// now beats it. A binary tree over the leaves puts that node in an array half as large as the
/// leaves, a cache miss of its own for each raise (the raised leaves are scattered); the
/// maxima of blocks of sixteen take a sixteenth of the leaves' memory, and mostly stay in cache
/// (DSatur at a million transfers on a fat tree: 26 s with the binary tree, 18-20 s with blocks
/// of 8, 16 or 32, alike within the noise of a shared machine).
pub(super) struct MaxTree {
    leaf: Vec<u64>,
    /// The tree over the blocks: node `i` has children `2i` and `2i + 1`, block `b` is node
    /// `blocks + b`, node 0 is unused.
    blocks: usize,
    node: Vec<u64>,
}

/// Leaves in a block: two cache lines of keys, which a removal and the search for the largest
/// key read (once per vertex); a raise reads only its own.
const BLOCK: usize = 16;

impl MaxTree {
    const SATURATION: u64 = 1 << 32;

    /// A leaf for each vertex, of saturation 0 and priority `priority[v]`.
    pub(super) fn new(priority: &[u32]) -> Self {
        let blocks = priority.len().div_ceil(BLOCK).next_power_of_two();
        let mut leaf = vec![0u64; blocks * BLOCK];
        for (v, &p) in priority.iter().enumerate() {
            leaf[v] = Self::SATURATION | u64::from(p);
        }
        let mut node = vec![0u64; 2 * blocks];
        for (b, keys) in leaf.chunks_exact(BLOCK).enumerate() {
            node[blocks + b] = keys.iter().copied().max().unwrap_or(0);
        }
        for i in (1..blocks).rev() {
            node[i] = node[2 * i].max(node[2 * i + 1]);
        }
        MaxTree { leaf, blocks, node }
    }

    /// The leaf of the largest key (the tree must have a leaf not removed).
    pub(super) fn max_leaf(&self) -> usize {
        let mut i = 1;
        while i < self.blocks {
            i = if self.node[2 * i] == self.node[i] {
                2 * i
            } else {
                2 * i + 1
            };
        }
        let first = (i - self.blocks) * BLOCK;
        let keys = &self.leaf[first..first + BLOCK];
        first + keys.iter().position(|&k| k == self.node[i]).unwrap_or(0)
    }

    /// Whether `leaf` is not removed.
    #[inline]
    pub(super) fn contains(&self, leaf: usize) -> bool {
        self.leaf[leaf] != 0
    }

    /// Add one to the saturation of `leaf`, if not removed.
    #[inline]
    pub(super) fn raise(&mut self, leaf: usize) {
        let key = self.leaf[leaf];
        if key == 0 {
            return;
        }
        let key = key + Self::SATURATION;
        self.leaf[leaf] = key;
        let mut i = self.blocks + leaf / BLOCK;
        while i >= 1 && self.node[i] < key {
            self.node[i] = key;
            i /= 2;
        }
    }

    /// Set the key of `leaf` to 0.
    pub(super) fn remove(&mut self, leaf: usize) {
        self.leaf[leaf] = 0;
        let first = leaf / BLOCK * BLOCK;
        let mut key = self.leaf[first..first + BLOCK]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        let mut i = self.blocks + leaf / BLOCK;
        loop {
            if self.node[i] == key {
                break;
            }
            self.node[i] = key;
            i /= 2;
            if i == 0 {
                break;
            }
            key = self.node[2 * i].max(self.node[2 * i + 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn the_largest_key_is_found_through_raises_and_removals() {
        let mut rng = Rng(31);
        for n in [1usize, 2, 7, 8, 9, 63, 100, 300] {
            let mut priority: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                priority.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut queue = MaxTree::new(&priority);
            let mut saturation = vec![0u64; n];
            let mut left: Vec<usize> = (0..n).collect();
            while !left.is_empty() {
                for _ in 0..rng.below(20) {
                    let v = rng.below(n as u64) as usize;
                    queue.raise(v);
                    if left.contains(&v) {
                        saturation[v] += 1;
                    }
                }
                let best = *left
                    .iter()
                    .max_by_key(|&&v| (saturation[v], priority[v]))
                    .unwrap();
                assert_eq!(queue.max_leaf(), best);
                assert!(queue.contains(best));
                queue.remove(best);
                assert!(!queue.contains(best));
                left.retain(|&v| v != best);
            }
        }
    }
}
