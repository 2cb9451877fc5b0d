//! DSatur's colouring on two threads: the painter (the colours full on each resource, the
//! cliques, the frames) on one, the queue of uncoloured vertices on the other. The queue's
//! thread takes the vertex of the largest key and hands it over; the painter colours it and
//! publishes, resource after resource, the vertices the colour newly blocks; the queue's
//! thread raises each list while the painter gathers the next. The next vertex is taken once
//! every list of a step is raised, so the colouring is the one of [`super::dsatur`] on one
//! thread, vertex for vertex.
//!
//! Why: at a million transfers on a fat tree the pushes (gathering the lists) and the raises
//! (a cache miss each, a billion of them) take about as long as each other; done side by side
//! they take about as long as the longer.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use super::degrees::joined;
use super::dsatur::{colour_in_one, Clock, Painter, Sink};
use super::queue::MaxTree;
use crate::error::CoreResult;

/// A word alone on its cache line, so that the two threads' words do not share one.
#[repr(align(64))]
struct Line(AtomicU64);

/// What the two threads hand each other, step by step (a step colours one vertex).
///
/// The protocol: the queue's thread writes `next` (the step and its vertex) after it read all
/// that the painter published of the step before; the painter writes its lists into `buffer`
/// after it read `next`, and `published` (the step, whether it is done, and how many vertices
/// its lists hold so far) after it wrote them. So the queue's thread reads only what the
/// painter wrote before it published it, and the painter writes only where the queue's thread
/// has read all it will: the buffer is never read and written at once in the same place.
struct Handoff {
    /// `(step + 1) << 32 | v`: colour vertex `v` at `step`; [`Handoff::STOP`]: stop.
    next: Line,
    /// `(step + 1) << 33 | done << 32 | count`: the first `count` vertices of the buffer are
    /// the step's lists so far (all of them once `done`).
    published: Line,
    /// The painter's thread ended, returning or not (a panic).
    gone: AtomicBool,
    buffer: *mut u32,
    capacity: usize,
}

// The buffer is shared by the protocol above; everything else is atomic.
unsafe impl Sync for Handoff {}

impl Handoff {
    const STOP: u64 = u64::MAX;

    /// Spins before each yield while waiting for the other thread.
    const SPINS: u32 = 1 << 10;

    fn stop(&self) {
        self.next.0.store(Self::STOP, Ordering::Release);
    }

    /// The vertex of `step`, once handed over; `None` once told to stop.
    fn wait_next(&self, step: u64) -> Option<usize> {
        let mut spins = 0;
        loop {
            let next = self.next.0.load(Ordering::Acquire);
            if next == Self::STOP {
                return None;
            }
            if next >> 32 == step + 1 {
                return Some((next & 0xffff_ffff) as usize);
            }
            wait_a_little(&mut spins);
        }
    }

    /// What the painter published of `step` once it is more than `read` vertices or done:
    /// `(count, done, whether the wait gave the processor up)`; `None` if the painter's thread
    /// ended first.
    fn wait_published(&self, step: u64, read: usize) -> Option<(usize, bool, bool)> {
        let mut spins = 0;
        loop {
            // Read before the word: a painter that published and then ended is seen to have
            // published.
            let gone = self.gone.load(Ordering::Acquire);
            let published = self.published.0.load(Ordering::Acquire);
            if published >> 33 == step + 1 {
                let (count, done) = ((published & 0xffff_ffff) as usize, published >> 32 & 1 == 1);
                if count > read || done {
                    return Some((count, done, spins >= Self::SPINS));
                }
            }
            if gone {
                return None;
            }
            wait_a_little(&mut spins);
        }
    }
}

/// Spin a while, then give the processor up at each call: another program may want the core
/// the other thread is waiting for.
fn wait_a_little(spins: &mut u32) {
    if *spins < Handoff::SPINS {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        thread::yield_now();
    }
}

/// The painter's side of a step: its lists written into the buffer, published one by one.
struct Publish<'h> {
    hand: &'h Handoff,
    step: u64,
    count: usize,
}

impl Publish<'_> {
    fn mark(&self, done: bool) {
        let word = (self.step + 1) << 33 | u64::from(done) << 32 | self.count as u64;
        self.hand.published.0.store(word, Ordering::Release);
    }
}

impl Sink for Publish<'_> {
    fn room(&mut self, len: usize) -> &mut [u32] {
        assert!(
            self.count + len <= self.hand.capacity,
            "a step's lists outgrew the buffer"
        );
        // Past what this step published: the queue's thread reads none of it until it is.
        unsafe { std::slice::from_raw_parts_mut(self.hand.buffer.add(self.count), len) }
    }

    fn publish(&mut self, found: usize) {
        self.count += found;
        self.mark(false);
    }
}

/// Sets the flag when the painter's thread ends, a panic included.
struct Gone<'a>(&'a AtomicBool);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Tells the painter to stop when the queue's thread leaves its loop, a panic included.
struct StopOnLeaving<'a>(&'a Handoff);

impl Drop for StopOnLeaving<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// [`super::dsatur`]'s colouring with the painter on a thread of its own and the queue on the
/// calling thread (which probes the interrupt and reads the clock); `None` if `clock` expired.
///
/// When the painter is not running beside the queue's thread (another program holds the other
/// core: the threads then hand over through the scheduler, and took 19.4 s at a million
/// transfers where one thread took 9.6 s), the colouring goes on on the calling thread alone,
/// from where it is: the same colouring. `alone_at`: a step from which it goes on alone
/// whatever the other core does.
pub(super) fn colour_in_two(
    painter: Painter,
    mut queue: MaxTree,
    clock: &mut Clock,
    alone_at: Option<u64>,
) -> CoreResult<Option<Vec<Vec<u32>>>> {
    let n = painter.vertices();
    let mut buffer = vec![0u32; painter.most_per_colour()];
    let hand = Handoff {
        next: Line(AtomicU64::new(0)),
        published: Line(AtomicU64::new(0)),
        gone: AtomicBool::new(false),
        capacity: buffer.len(),
        buffer: buffer.as_mut_ptr(),
    };
    let (painter, ended) = thread::scope(|s| {
        let hand = &hand;
        let painting = s.spawn(move || paint(painter, hand));
        let ended = {
            let _stop = StopOnLeaving(hand);
            drive(&mut queue, hand, clock, n, alone_at)
        };
        (joined(painting), ended)
    });
    drop(buffer);
    match ended {
        Ended::Done => Ok(Some(painter.into_frames())),
        Ended::Stopped => Ok(None),
        Ended::Alone => colour_in_one(painter, queue, clock),
    }
}

/// How the queue's thread left its loop.
enum Ended {
    /// Every vertex coloured.
    Done,
    /// The clock expired or the user interrupted (or the painter ended early).
    Stopped,
    /// The painter was too often not running beside it: go on alone.
    Alone,
}

/// Steps over which the queue's thread counts the waits for the painter that had to give the
/// processor up, and how many of them make it go on alone: with the other core free, a wait
/// is a few microseconds of spinning (a million transfers take 7.3 s, as fast as before this
/// check: it did not go on alone, which takes 9.6 s); with it busy, most steps wait for the
/// scheduler.
const WINDOW: u64 = 1024;
const SLOW_WAITS: u32 = 128;

/// The painter's thread: each vertex handed over coloured and its lists published, until all
/// are or it is told to stop; the painter, for the frames or for the calling thread to go on.
fn paint<'a>(mut painter: Painter<'a>, hand: &Handoff) -> Painter<'a> {
    let _gone = Gone(&hand.gone);
    for step in 0..painter.vertices() as u64 {
        let Some(v) = hand.wait_next(step) else {
            break;
        };
        let mut publish = Publish {
            hand,
            step,
            count: 0,
        };
        painter.colour(v, &mut publish);
        publish.mark(true);
    }
    painter
}

/// The queue's thread: for each step, the vertex of the largest key handed over and every
/// list published for it raised.
fn drive(
    queue: &mut MaxTree,
    hand: &Handoff,
    clock: &mut Clock,
    n: usize,
    alone_at: Option<u64>,
) -> Ended {
    let mut slow = 0;
    for step in 0..n as u64 {
        if clock.expired() {
            return Ended::Stopped;
        }
        if alone_at == Some(step) {
            return Ended::Alone;
        }
        if step % WINDOW == 0 {
            if slow >= SLOW_WAITS {
                return Ended::Alone;
            }
            slow = 0;
        }
        let v = queue.max_leaf();
        queue.remove(v);
        hand.next
            .0
            .store((step + 1) << 32 | v as u64, Ordering::Release);
        let mut read = 0;
        loop {
            let Some((count, done, yielded)) = hand.wait_published(step, read) else {
                return Ended::Stopped;
            };
            slow += u32::from(yielded);
            // Published before it was marked so: the painter writes there no more this step.
            let lists = unsafe { std::slice::from_raw_parts(hand.buffer.add(read), count - read) };
            for &u in lists {
                queue.raise(u as usize);
            }
            read = count;
            if done {
                break;
            }
        }
    }
    Ended::Done
}
