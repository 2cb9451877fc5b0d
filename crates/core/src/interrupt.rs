//! Interruption of long computations (Ctrl-C) without any Python in the core.
//!
//! The caller hands a probe, a cheap `Fn() -> bool` that says whether the user asked to stop
//! (the Python binding's calls `check_signals`), to an [`Interrupt`]; every long loop of the core
//! calls [`Interrupt::check`] every few thousand iterations (see [`Pacer`]) and returns
//! [`CoreError::Interrupted`] once it is true. The probe is called only on the thread that made
//! the `Interrupt`, since a signal is delivered there (Python runs its handlers on the main
//! thread only); other threads of the core see the interruption through a shared flag, which
//! the calling thread sets while it waits for them ([`Interrupt::wait_for`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, ThreadId};
use std::time::Duration;

use crate::error::{CoreError, CoreResult};
use crate::progress::Progress;

/// Iterations of an inner loop between two probes: a probe costs about a microsecond (the
/// binding takes the GIL), so this keeps its cost far below 1 % while a loop of a few hundred
/// nanoseconds per iteration still answers within a few milliseconds.
pub const EVERY: u32 = 4096;

/// How often a thread waiting for a worker of the core probes for an interruption.
const WAIT_POLL: Duration = Duration::from_millis(10);

/// Whether the user asked the computation to stop; see the module documentation.
pub struct Interrupt<'p> {
    probe: Option<&'p (dyn Fn() -> bool + Sync)>,
    tripped: AtomicBool,
    owner: ThreadId,
    /// Where a search reports its progress and reads a request to stop with its best answer
    /// (see [`Progress`]); None when the caller does not watch.
    progress: Option<&'p Progress>,
}

impl<'p> Interrupt<'p> {
    /// An interrupt asked of `probe`, on the calling thread.
    pub fn new(probe: &'p (dyn Fn() -> bool + Sync)) -> Self {
        Interrupt {
            probe: Some(probe),
            tripped: AtomicBool::new(false),
            owner: thread::current().id(),
            progress: None,
        }
    }

    /// An interrupt that never fires (Rust callers, tests, the C interface).
    pub fn never() -> Self {
        Interrupt {
            probe: None,
            tripped: AtomicBool::new(false),
            owner: thread::current().id(),
            progress: None,
        }
    }

    /// This interrupt, with `progress` for the computation to report to.
    pub fn with_progress(mut self, progress: &'p Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Tell the caller's [`Progress`], if it watches, what `update` writes.
    #[inline]
    pub fn report(&self, update: impl FnOnce(&Progress)) {
        if let Some(progress) = self.progress {
            update(progress);
        }
    }

    /// Whether the caller asked the computation to stop with its best answer (not to give up
    /// on it, as [`is_set`](Self::is_set) tells).
    pub fn stop_requested(&self) -> bool {
        self.progress.is_some_and(Progress::stop_requested)
    }

    /// Mark the computation interrupted, for every thread of it.
    pub fn trip(&self) {
        self.tripped.store(true, Ordering::Relaxed);
    }

    /// True once the computation is to stop: the flag, or else (on the thread that owns the
    /// probe) the probe. Cheap on other threads, about a microsecond on the owner's: call it
    /// every [`EVERY`] iterations of an inner loop, or once per step of an outer one.
    pub fn is_set(&self) -> bool {
        if self.tripped.load(Ordering::Relaxed) {
            return true;
        }
        match self.probe {
            Some(probe) if thread::current().id() == self.owner && probe() => {
                self.trip();
                true
            }
            _ => false,
        }
    }

    /// `Err(CoreError::Interrupted)` once the computation is to stop, for `?`.
    pub fn check(&self) -> CoreResult<()> {
        if self.is_set() {
            Err(CoreError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// Run `f` on a thread with a stack of `stack_bytes`, probing on this thread while it runs
    /// (a worker cannot see the signal itself) and setting the flag for it when the user asks to
    /// stop; the worker, which checks this interrupt, then returns soon after.
    pub fn run_on_thread<T: Send>(
        &self,
        stack_bytes: usize,
        f: impl FnOnce() -> T + Send,
    ) -> CoreResult<T> {
        let waiter = thread::current();
        thread::scope(|s| {
            let handle = thread::Builder::new()
                .stack_size(stack_bytes)
                .spawn_scoped(s, move || {
                    let out = f();
                    // Wake the waiting thread now rather than at its next poll.
                    waiter.unpark();
                    out
                })
                .map_err(|e| CoreError::Internal(format!("cannot start a worker thread: {e}")))?;
            self.wait_for(|| handle.is_finished());
            handle
                .join()
                .map_err(|_| CoreError::Internal("a worker thread panicked".into()))
        })
    }

    /// Probe every few milliseconds until `done()`.
    fn wait_for(&self, done: impl Fn() -> bool) {
        while !done() {
            self.is_set();
            thread::park_timeout(WAIT_POLL);
        }
    }
}

/// Work done since the last probe, so that a loop probes every [`EVERY`] units of work
/// whatever its iterations cost: an inner loop adds 1 per iteration, an outer one the size of
/// what its iteration went through.
#[derive(Default)]
pub struct Pacer(u64);

impl Pacer {
    /// Count `work` units; true when a probe is due.
    #[inline]
    pub fn due(&mut self, work: usize) -> bool {
        self.0 += work as u64;
        if self.0 >= EVERY as u64 {
            self.0 = 0;
            true
        } else {
            false
        }
    }

    /// Count `work` units and, when a probe is due, `Err(CoreError::Interrupted)` if the
    /// interrupt fired.
    #[inline]
    pub fn check(&mut self, work: usize, interrupt: &Interrupt) -> CoreResult<()> {
        if self.due(work) {
            interrupt.check()
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn never_is_never_set() {
        let i = Interrupt::never();
        assert!(!i.is_set());
        assert_eq!(i.check(), Ok(()));
    }

    #[test]
    fn a_probe_that_fires_stays_fired() {
        let calls = AtomicU32::new(0);
        let probe = || calls.fetch_add(1, Ordering::Relaxed) >= 2;
        let i = Interrupt::new(&probe);
        assert!(!i.is_set() && !i.is_set());
        assert_eq!(i.check(), Err(CoreError::Interrupted));
        // Latched: the probe is not asked again.
        assert!(i.is_set());
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn the_probe_is_asked_on_its_own_thread_only() {
        let calls = AtomicU32::new(0);
        let probe = || {
            calls.fetch_add(1, Ordering::Relaxed);
            false
        };
        let i = Interrupt::new(&probe);
        thread::scope(|s| {
            s.spawn(|| assert!(!i.is_set()));
        });
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_worker_sees_what_the_waiting_thread_probed() {
        // The probe fires at its third call, made by the waiting thread while the worker spins
        // on the flag alone.
        let calls = AtomicU32::new(0);
        let probe = || calls.fetch_add(1, Ordering::Relaxed) >= 2;
        let i = Interrupt::new(&probe);
        let out = i.run_on_thread(1 << 20, || {
            let mut spins = 0u64;
            while !i.is_set() {
                spins += 1;
                std::hint::spin_loop();
            }
            spins
        });
        assert!(out.is_ok());
        assert!(calls.load(Ordering::Relaxed) >= 3);
    }

    #[test]
    fn a_pacer_probes_every_few_thousand_calls() {
        let mut p = Pacer::default();
        let due = (0..3 * EVERY).filter(|_| p.due(1)).count();
        assert_eq!(due, 3);
        // A step that went through more than EVERY units is probed at once.
        assert!(p.due(EVERY as usize + 1));
    }
}
