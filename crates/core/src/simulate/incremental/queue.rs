//! An indexed min-heap of ids by key, each id in it at most once, smallest key first and ties by
//! smaller id, as the engine's other heaps order their entries (`Least`). Two of them: the sweep's
//! queue of resources (by a bound of the level at which each next matters) and the groups' next
//! finish times.
//!
//! On a crossbar every level change lowers the keys of a whole column of resources and moves the
//! finish time of its group: with one heap entry per change, the heaps held many stale entries per
//! live one, and popping them took a third of the simulation. Here a changed key moves the id's
//! one entry, and a heap never holds more entries than ids.

use std::cmp::Ordering;

use super::NONE;

pub(super) struct Queue {
    /// A binary min-heap of resources.
    heap: Vec<u32>,
    /// Each resource's position in `heap`, or `NONE`.
    pos: Vec<u32>,
    /// Each queued resource's key.
    key: Vec<f64>,
}

impl Queue {
    pub(super) fn new(resources: usize) -> Self {
        Queue {
            heap: Vec::new(),
            pos: vec![NONE; resources],
            key: vec![0.0; resources],
        }
    }

    fn before(&self, a: u32, b: u32) -> bool {
        match self.key[a as usize].total_cmp(&self.key[b as usize]) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        }
    }

    pub(super) fn contains(&self, q: u32) -> bool {
        self.pos[q as usize] != NONE
    }

    /// Resource `q`'s key (meaningful while it is queued).
    pub(super) fn key(&self, q: u32) -> f64 {
        self.key[q as usize]
    }

    /// Queue `q` at `key`; if it is queued already, at the lower of its key and `key`.
    pub(super) fn push(&mut self, q: u32, key: f64) {
        let qu = q as usize;
        if self.pos[qu] == NONE {
            self.key[qu] = key;
            self.pos[qu] = self.heap.len() as u32;
            self.heap.push(q);
        } else if key.total_cmp(&self.key[qu]) == Ordering::Less {
            self.key[qu] = key;
        } else {
            return;
        }
        self.up(self.pos[qu] as usize);
    }

    /// Queue `q` at `key`, whether it is queued at another key or not.
    pub(super) fn set(&mut self, q: u32, key: f64) {
        let qu = q as usize;
        if self.pos[qu] == NONE {
            self.push(q, key);
            return;
        }
        let lower = key.total_cmp(&self.key[qu]) == Ordering::Less;
        self.key[qu] = key;
        if lower {
            self.up(self.pos[qu] as usize);
        } else {
            self.down(self.pos[qu] as usize);
        }
    }

    /// Take `q` out, if it is in.
    pub(super) fn remove(&mut self, q: u32) {
        let at = self.pos[q as usize];
        if at == NONE {
            return;
        }
        self.pos[q as usize] = NONE;
        let last = self.heap.pop().expect("the heap holds q");
        if last != q {
            let at = at as usize;
            self.heap[at] = last;
            self.pos[last as usize] = at as u32;
            self.up(at);
            self.down(self.pos[last as usize] as usize);
        }
    }

    /// The first id and its key.
    pub(super) fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().map(|&q| (self.key[q as usize], q))
    }

    pub(super) fn pop(&mut self) -> Option<(f64, u32)> {
        let first = *self.heap.first()?;
        let last = self.heap.pop().expect("the heap is not empty");
        self.pos[first as usize] = NONE;
        if last != first {
            self.heap[0] = last;
            self.pos[last as usize] = 0;
            self.down(0);
        }
        Some((self.key[first as usize], first))
    }

    pub(super) fn clear(&mut self) {
        for &q in &self.heap {
            self.pos[q as usize] = NONE;
        }
        self.heap.clear();
    }

    fn up(&mut self, mut at: usize) {
        let q = self.heap[at];
        while at > 0 {
            let parent = (at - 1) / 2;
            let p = self.heap[parent];
            if !self.before(q, p) {
                break;
            }
            self.heap[at] = p;
            self.pos[p as usize] = at as u32;
            at = parent;
        }
        self.heap[at] = q;
        self.pos[q as usize] = at as u32;
    }

    fn down(&mut self, mut at: usize) {
        let q = self.heap[at];
        let n = self.heap.len();
        loop {
            let mut child = 2 * at + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.before(self.heap[child + 1], self.heap[child]) {
                child += 1;
            }
            let c = self.heap[child];
            if !self.before(c, q) {
                break;
            }
            self.heap[at] = c;
            self.pos[c as usize] = at as u32;
            at = child;
        }
        self.heap[at] = q;
        self.pos[q as usize] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::Queue;

    #[test]
    fn pops_by_key_then_resource_and_lowers_keys_only() {
        let mut rng = crate::testing::Rng(0x0123_4567_89ab_cdef);
        for _ in 0..200 {
            let n = 1 + rng.below(40) as usize;
            let mut queue = Queue::new(n);
            // The same pushes kept as a plain list: the lowest key per resource.
            let mut expected: Vec<Option<f64>> = vec![None; n];
            for _ in 0..rng.below(120) {
                let q = rng.below(n as u64) as u32;
                let key = rng.below(8) as f64 / 2.0;
                queue.push(q, key);
                let e = &mut expected[q as usize];
                *e = Some(e.map_or(key, |k: f64| k.min(key)));
            }
            let mut order: Vec<(f64, u32)> = expected
                .iter()
                .enumerate()
                .filter_map(|(q, k)| k.map(|k| (k, q as u32)))
                .collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (k, q) in &order {
                assert!(queue.contains(*q));
                assert_eq!(queue.key(*q), *k);
            }
            let mut got = Vec::new();
            while let Some(entry) = queue.pop() {
                assert!(!queue.contains(entry.1));
                got.push(entry);
            }
            assert_eq!(got, order);
        }
    }

    #[test]
    fn keys_set_either_way_and_ids_removed() {
        let mut rng = crate::testing::Rng(0x0bad_cafe_dead_beef);
        for _ in 0..200 {
            let n = 1 + rng.below(40) as usize;
            let mut queue = Queue::new(n);
            let mut expected: Vec<Option<f64>> = vec![None; n];
            for _ in 0..rng.below(150) {
                let q = rng.below(n as u64) as u32;
                if rng.below(4) == 0 {
                    queue.remove(q);
                    expected[q as usize] = None;
                } else {
                    let key = rng.below(8) as f64 / 2.0;
                    queue.set(q, key);
                    expected[q as usize] = Some(key);
                }
            }
            let mut order: Vec<(f64, u32)> = expected
                .iter()
                .enumerate()
                .filter_map(|(q, k)| k.map(|k| (k, q as u32)))
                .collect();
            order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut got = Vec::new();
            while let Some(entry) = queue.pop() {
                got.push(entry);
            }
            assert_eq!(got, order);
        }
    }
}
