//! DSatur's queue of uncoloured vertices: the one of highest saturation, then highest
//! tie-break priority, and a saturation raised by one, which DSatur does about a billion times
//! for a million transfers: each raise should touch as little memory as it can.

/// A key per leaf (0: removed; otherwise one more than the vertex's saturation in the high 32
/// bits and its tie-break priority in the low 32), the leaves in blocks of [`WIDE`], and a
/// tree of the same width above the blocks whose nodes hold the largest key below them.
/// Priorities are distinct, so the largest key is one leaf's.
///
/// Why blocks: a raise reads and writes its leaf, and then the node above it only if the key
/// now beats it. A binary tree over the leaves puts that node in an array half as large as the
/// leaves, a cache miss of its own for each raise (the raised leaves are scattered); the
/// maxima of blocks of sixteen take a sixteenth of the leaves' memory, and mostly stay in cache
/// (DSatur at a million transfers on a fat tree: 26 s with the binary tree, 18-20 s with blocks
/// of 8, 16 or 32, alike within the noise of a shared machine).
///
/// Why wide above the blocks too: a raised vertex is a neighbour of the vertex just coloured,
/// of high saturation, so its key often beats the maxima far up; a binary tree over the
/// blocks made such a raise climb up to 16 levels at a million transfers (a fifth of DSatur's
/// time), this one climbs at most 4 (DSatur at a million transfers on a fat tree 13.0-13.4 s -> 11.7-12.2 s).
pub(super) struct MaxTree {
    leaf: Vec<u64>,
    /// The nodes level by level from the blocks' maxima up to the root, level `l` at
    /// `node[start[l]..start[l + 1]]`: node `i` of level `l + 1` holds the largest of nodes
    /// `WIDE * i..WIDE * (i + 1)` of level `l`.
    node: Vec<u64>,
    start: Vec<usize>,
}

/// Leaves in a block, and children of a node: two cache lines of keys, which a removal and
/// the search for the largest key read at every level (once per vertex); a raise reads only
/// one key per level.
const WIDE: usize = 16;

impl MaxTree {
    const SATURATION: u64 = 1 << 32;

    /// A leaf for each vertex, of saturation 0 and priority `priority[v]`.
    pub(super) fn new(priority: &[u32]) -> Self {
        let mut len = priority.len().div_ceil(WIDE).max(1);
        let mut start = vec![0];
        loop {
            start.push(start[start.len() - 1] + len);
            if len == 1 {
                break;
            }
            len = len.div_ceil(WIDE);
        }
        let mut leaf = vec![0u64; (start[1] - start[0]) * WIDE];
        for (v, &p) in priority.iter().enumerate() {
            leaf[v] = Self::SATURATION | u64::from(p);
        }
        let mut node = vec![0u64; (start[start.len() - 1]).div_ceil(WIDE) * WIDE + WIDE];
        for (b, keys) in leaf.chunks_exact(WIDE).enumerate() {
            node[b] = keys.iter().copied().max().unwrap_or(0);
        }
        for l in 1..start.len() - 1 {
            for i in 0..start[l + 1] - start[l] {
                let below = start[l - 1] + WIDE * i;
                let end = (below + WIDE).min(start[l]);
                node[start[l] + i] = node[below..end].iter().copied().max().unwrap_or(0);
            }
        }
        MaxTree { leaf, node, start }
    }

    fn levels(&self) -> usize {
        self.start.len() - 1
    }

    /// The leaf of the largest key (the tree must have a leaf not removed).
    pub(super) fn max_leaf(&self) -> usize {
        let top = self.start[self.levels() - 1];
        let best = self.node[top];
        let mut i = 0;
        for l in (0..self.levels() - 1).rev() {
            let first = self.start[l] + WIDE * i;
            let keys = &self.node[first..first + WIDE];
            i = WIDE * i + keys.iter().position(|&k| k == best).unwrap_or(0);
        }
        let first = WIDE * i;
        let keys = &self.leaf[first..first + WIDE];
        first + keys.iter().position(|&k| k == best).unwrap_or(0)
    }

    /// Whether `leaf` is not removed.
    #[cfg(test)]
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
        let mut i = leaf / WIDE;
        for &first in &self.start[..self.levels()] {
            let node = &mut self.node[first + i];
            if *node >= key {
                break;
            }
            *node = key;
            i /= WIDE;
        }
    }

    /// Set the key of `leaf` to 0.
    pub(super) fn remove(&mut self, leaf: usize) {
        self.leaf[leaf] = 0;
        let first = leaf / WIDE * WIDE;
        let mut key = self.leaf[first..first + WIDE]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        let mut i = leaf / WIDE;
        for l in 0..self.levels() {
            let at = self.start[l] + i;
            if self.node[at] == key {
                break;
            }
            self.node[at] = key;
            if l + 1 == self.levels() {
                break;
            }
            i /= WIDE;
            let below = self.start[l] + WIDE * i;
            let end = (below + WIDE).min(self.start[l + 1]);
            key = self.node[below..end].iter().copied().max().unwrap_or(0);
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
        for n in [1usize, 2, 7, 8, 9, 16, 17, 63, 100, 300, 4097] {
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
