//! The sparse matrix of cells: the flows of group `s` that cross resource `r`, kept per row (a
//! resource) and per column (a group), found by a hash of their (resource, group) key. Laid out
//! only when a sweep needs them; the exact load of a resource from its row.

use std::hash::Hasher;

use super::{Sharing, ARRIVING};

/// A multiplicative hash for the cells' (resource, group) keys: std's default SipHash is made to
/// resist adversarial keys, which these are not, and costs several times more per lookup.
#[derive(Default)]
pub(super) struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

pub(super) fn cell_key(res: u32, group: u32) -> u64 {
    (res as u64) << 32 | group as u64
}

/// The flows of one group crossing one resource.
pub(super) struct Cell {
    pub(super) res: u32,
    pub(super) group: u32,
    /// Positions in the resource's row and the group's column, for removal in O(1).
    row_pos: u32,
    col_pos: u32,
    /// (flow, position of `res` in the flow's path).
    pub(super) flows: Vec<(u32, u32)>,
}

/// What the sweep reads of a cell on every pass over a row or a column, kept apart from its
/// flows (in `Sharing::tallies`, by cell id): on a crossbar the sweep goes through rows and
/// columns of about n/4 cells for every level change, and reading 12 bytes a cell instead of
/// the whole cell keeps those passes in cache.
#[derive(Clone, Copy)]
pub(super) struct Tally {
    pub(super) res: u32,
    pub(super) group: u32,
    /// How many flows the cell holds.
    pub(super) flows: u32,
}

impl<'a> Sharing<'a> {
    pub(super) fn cell_add(&mut self, i: u32, k: u32, res: u32, group: u32) {
        let key = cell_key(res, group);
        let id = match self.index.get(&key) {
            Some(&id) => id,
            None => {
                let id = match self.free_cells.pop() {
                    Some(id) => id,
                    None => {
                        self.cells.push(Cell {
                            res,
                            group,
                            row_pos: 0,
                            col_pos: 0,
                            flows: Vec::new(),
                        });
                        self.tallies.push(Tally {
                            res,
                            group,
                            flows: 0,
                        });
                        self.cells.len() as u32 - 1
                    }
                };
                let cell = &mut self.cells[id as usize];
                cell.res = res;
                cell.group = group;
                cell.row_pos = self.row[res as usize].len() as u32;
                cell.col_pos = self.col[group as usize].len() as u32;
                self.tallies[id as usize] = Tally {
                    res,
                    group,
                    flows: 0,
                };
                self.row[res as usize].push(id);
                self.col[group as usize].push(id);
                self.index.insert(key, id);
                id
            }
        };
        let cell = &mut self.cells[id as usize];
        self.slot[(self.path_start[i as usize] + k) as usize] = cell.flows.len() as u32;
        cell.flows.push((i, k));
        self.tallies[id as usize].flows += 1;
    }

    pub(super) fn cell_remove(&mut self, i: u32, k: u32, res: u32, group: u32) {
        let key = cell_key(res, group);
        let id = self.index[&key];
        let pos = self.slot[(self.path_start[i as usize] + k) as usize] as usize;
        self.tallies[id as usize].flows -= 1;
        let cell = &mut self.cells[id as usize];
        cell.flows.swap_remove(pos);
        if let Some(&(j, jk)) = cell.flows.get(pos) {
            self.slot[(self.path_start[j as usize] + jk) as usize] = pos as u32;
        }
        if cell.flows.is_empty() {
            let (rp, cp) = (cell.row_pos as usize, cell.col_pos as usize);
            let row = &mut self.row[res as usize];
            row.swap_remove(rp);
            if let Some(&other) = row.get(rp) {
                self.cells[other as usize].row_pos = rp as u32;
            }
            let col = &mut self.col[group as usize];
            col.swap_remove(cp);
            if let Some(&other) = col.get(cp) {
                self.cells[other as usize].col_pos = cp as u32;
            }
            self.index.remove(&key);
            self.free_cells.push(id);
        }
    }

    /// Lay out the cells of every active flow in a group (arriving ones join theirs after), and
    /// the loads from them.
    pub(super) fn build_cells(&mut self) {
        self.cells_built = true;
        let active = std::mem::take(&mut self.active);
        for &i in &active {
            for &q in self.path(i) {
                self.load[q as usize] = 0.0;
            }
        }
        for &i in &active {
            let g = self.group[i as usize];
            if g == ARRIVING {
                continue;
            }
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_add(i, k as u32, q, g);
                self.load[q as usize] += rate;
            }
        }
        self.active = active;
    }

    /// Forget every cell: a rebuild does not need them, and a run whose events all rebuild (equal
    /// sizes: flows leave in a few large batches) never lays them out.
    pub(super) fn drop_cells(&mut self) {
        self.cells_built = false;
        for (_, id) in self.index.drain() {
            let cell = &mut self.cells[id as usize];
            cell.flows.clear();
            self.tallies[id as usize].flows = 0;
            self.row[cell.res as usize].clear();
            self.col[cell.group as usize].clear();
            self.load[cell.res as usize] = 0.0;
            self.free_cells.push(id);
        }
    }

    pub(super) fn exact_load(&self, q: u32) -> f64 {
        self.row[q as usize]
            .iter()
            .map(|&id| {
                let tally = self.tallies[id as usize];
                tally.flows as f64 * self.rate_of(tally.group)
            })
            .sum()
    }
}
