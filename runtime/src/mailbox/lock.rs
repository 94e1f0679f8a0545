//! The user lane's lock: a spin lock whose release is a plain store.
//!
//! Every tell takes the lock of its target's mailbox, and every reader takes it to
//! look for more, so the lock's two halves are on the hot path of every message.
//! `std::sync::Mutex` releases with a locked swap (it must learn whether a thread
//! sleeps on it, to wake it); on x86 that is a second full barrier per message. The
//! sections this lock guards are a few dozen instructions (a push, a pop, a swap of
//! buffers, a look at a flag; never user code, never an await, never a system call),
//! so a thread that finds it taken spins a little and then yields its time slice
//! instead of sleeping, and the release needs no more than a store.
//!
//! This is the one module of the crate with `unsafe` code (the workspace denies it
//! everywhere else): the guard's access to the value inside the lock.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// How many times a thread that finds the lock taken spins before it yields.
const SPINS: u32 = 64;

/// A value behind a spin lock (see the module).
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives access to the value to one holder at a time, as a `Mutex`
// does, so sharing the lock between threads moves the value between them (`T: Send`)
// and never shares it (`T: Sync` is not needed).
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Take the lock, spinning (then yielding) while another thread holds it.
    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        SpinGuard {
            lock: self,
            not_send: PhantomData,
        }
    }

    #[cold]
    fn lock_contended(&self) {
        let mut spins = 0_u32;
        loop {
            // Wait on a plain read, which leaves the cache line shared, until the
            // lock looks free; only then try to take it.
            while self.locked.load(Ordering::Relaxed) {
                if spins < SPINS {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    // The holder may have been preempted: let it run.
                    std::thread::yield_now();
                }
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl<T> fmt::Debug for SpinLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpinLock")
            .field("locked", &self.locked.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Access to the value while the lock is held; dropping it releases the lock (also
/// on unwinding, so a panic never leaves the lock taken).
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    /// Released by the thread that took it, as a `MutexGuard` is.
    not_send: PhantomData<*const ()>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while its thread holds the lock (taken with
        // `Acquire` in `lock`), so no other reference to the value exists.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the guard's only borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // `Release`: what the holder wrote is seen by the next thread to take it.
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::SpinLock;

    /// Increments from several threads, each under the lock: none is lost, which
    /// they would be if two threads held the lock at once.
    #[test]
    fn the_lock_admits_one_holder_at_a_time() {
        const THREADS: u64 = 4;
        const EACH: u64 = 100_000;
        let lock = Arc::new(SpinLock::new((0_u64, 0_u64)));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..EACH {
                        let mut guard = lock.lock();
                        // Two fields written apart: a second holder would see them
                        // differ.
                        guard.0 += 1;
                        std::hint::black_box(&mut *guard);
                        assert_eq!(guard.0, guard.1 + 1);
                        guard.1 += 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            assert!(thread.join().is_ok());
        }
        assert_eq!(*lock.lock(), (THREADS * EACH, THREADS * EACH));
    }

    /// A panic while the lock is held releases it.
    #[test]
    fn a_panic_under_the_lock_releases_it() {
        let lock = Arc::new(SpinLock::new(0_u32));
        let holder = lock.clone();
        let panicked = std::thread::spawn(move || {
            let _guard = holder.lock();
            panic!("a test panic while holding the lock");
        })
        .join();
        assert!(panicked.is_err());
        *lock.lock() += 1;
        assert_eq!(*lock.lock(), 1);
    }
}
