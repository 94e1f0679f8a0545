//! Termination: the tree stops bottom-up against one deadline; past it, only the
//! actors still in a handler are given up on, and every other one still sees
//! `PostStop`.
//!
//! `ActorSystem::terminate` calls `begin_termination` at once (so synchronous code can
//! start it) and returns a future on `when_terminated`. `run_termination` runs in a task
//! of its own, guarded by `Published`, which publishes the outcome even if that task
//! panics or is dropped: it stops `/user`, waits, then stops `/system`. Each actor stops
//! bottom-up by construction: `begin_stop` closes its user lane, cancels its timers,
//! closes its child table and asks each child to stop (oldest first), and the actor
//! waits in `Stopping` until `CellCore::children_settled`.
//!
//! The whole tree races `Settings::shutdown_timeout`. When it passes, `abandon_busy`
//! walks both trees and gives up on every actor still busy (in a handler, or not
//! parked): it sets `ABANDONED`, records the actor for the `LeakReport`, asks its
//! children to stop, aborts its task and wakes its parent. A parent counts abandoned
//! children as settled once their own children are; `wake_waiting_ancestor` skips
//! abandoned ancestors. Every other actor still stops normally and sees `PostStop`.
//! Rounds of `PAST_DEADLINE_ROUND` follow, each abandoning newly stuck actors (a hanging
//! `PostStop`, say); a round in which nothing was abandoned and the live count did not
//! drop ends in `cancel_tree`, which drains the tables and aborts every task, deepest
//! first, then the guardians'. A task aborted at the deadline is dropped by tokio only
//! when it next runs, which is why `LeakReport::after_terminating` waits (up to a
//! second) before counting.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::AbortHandle;

use crate::actor::AnyActorRef;
use crate::actor::system::{Cancelled, SYSTEM_STOPPED, SystemShared, USER_STOPPED};

impl SystemShared {
    /// Start terminating, once; a second call changes nothing.
    pub(crate) fn begin_termination(self: &Arc<Self>) {
        if self.terminating.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(runtime) = &self.runtime else {
            self.outcome.send_replace(Some(self.outcome_now()));
            return;
        };
        // Whatever happens to the task (it finishes, panics, or its runtime drops it),
        // the guard publishes the outcome, so nobody waits for it forever.
        let guard = Published(self.clone());
        runtime.spawn(async move {
            guard.0.run_termination().await;
            drop(guard);
        });
    }

    async fn run_termination(&self) {
        let Some(guardians) = self.guardians().clone() else {
            return;
        };
        let mut stopped = self.guardians_stopped.subscribe();
        // A timeout too large to add to the clock means no deadline at all.
        let deadline = crate::ground::clock::deadline_after(
            tokio::time::Instant::now(),
            self.settings.shutdown_timeout(),
        );
        let stop_both = async {
            guardians.user.request_stop();
            let _ = stopped.wait_for(|s| s & USER_STOPPED != 0).await;
            guardians.system.request_stop();
            let _ = stopped.wait_for(|s| s & SYSTEM_STOPPED != 0).await;
        };
        let mut stop_both = std::pin::pin!(stop_both);
        let in_time = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, stop_both.as_mut())
                .await
                .is_ok(),
            None => {
                stop_both.as_mut().await;
                true
            }
        };
        if !in_time {
            tracing::warn!(
                timeout = ?self.settings.shutdown_timeout(),
                "the actor tree did not stop within the shutdown timeout; cancelling the actors still in a handler"
            );
            let mut cancelled = Vec::new();
            // Give up on the actors still running a handler; every other one goes on
            // stopping, children before parents, and sees `PostStop`. A `PostStop`
            // that hangs in its turn is given up on at the next round; a round in
            // which nothing ended and nothing new was given up on cancels the rest.
            let mut live = usize::MAX;
            loop {
                let abandoned = abandon_busy(&guardians.user, &mut cancelled)
                    + abandon_busy(&guardians.system, &mut cancelled);
                let now_live = self.live_cells.load(Ordering::Acquire);
                if abandoned == 0 && now_live >= live {
                    tracing::warn!(
                        "actors past the shutdown deadline make no progress; cancelling what is left"
                    );
                    cancel_tree(&guardians.user, &mut cancelled);
                    cancel_tree(&guardians.system, &mut cancelled);
                    guardians.user_task.abort();
                    guardians.system_task.abort();
                    break;
                }
                live = now_live;
                let round = tokio::time::Instant::now() + PAST_DEADLINE_ROUND;
                if tokio::time::timeout_at(round, stop_both.as_mut())
                    .await
                    .is_ok()
                {
                    break;
                }
            }
            #[cfg(feature = "testkit")]
            {
                *self
                    .cancelled
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner()) = cancelled;
            }
        }
        *self.guardians() = None;
        // Peers hear that this system stops: their watchers of its actors hear
        // `Terminated` now, not after their failure detector's window (S41).
        if let Some(transport) = self.transport() {
            transport.leave().await;
            transport.close_listener().await;
        }
        // The exported promises hold the system (each cell does): let go of them,
        // or the system would never be freed.
        self.release_links();
    }
}

/// Publishes a system's termination outcome when dropped.
struct Published(Arc<SystemShared>);

impl Drop for Published {
    fn drop(&mut self) {
        let outcome = self.0.outcome_now();
        self.0.outcome.send_replace(Some(outcome));
    }
}

/// How long termination waits, past the deadline, for the actors that still stop
/// before it looks again for ones stuck in a handler.
const PAST_DEADLINE_ROUND: Duration = Duration::from_millis(20);

/// Give up on every actor below `root` still running a handler (or awaiting one): its
/// task is cancelled, its parent stops waiting for it, and its children, which it may
/// never have told, are told to stop. Returns how many were given up on this time.
fn abandon_busy(root: &AnyActorRef, cancelled: &mut Vec<Cancelled>) -> usize {
    // A walk with a stack of its own, not a call a level: a tree thousands of
    // actors deep must not overflow the worker's stack at the deadline (S19).
    let mut parents = vec![root.clone()];
    let mut count = 0;
    while let Some(parent) = parents.pop() {
        // The tree is made of actors of this process: each has a local core.
        let Some(parent_core) = parent.local() else {
            continue;
        };
        let entries: Vec<(AnyActorRef, Option<AbortHandle>)> = parent_core
            .children()
            .entries()
            .map(|entry| (entry.child.clone(), entry.abort.clone()))
            .collect();
        for (child, abort) in entries {
            let Some(core) = child.local() else {
                continue;
            };
            if !core.is_abandoned() && !core.lane().is_closed() && core.is_busy() {
                core.set_abandoned();
                cancelled.push(Cancelled {
                    path: child.path().clone(),
                    in_handler: true,
                });
                for grandchild in core.children().refs() {
                    grandchild.request_stop();
                }
                if let Some(abort) = abort {
                    abort.abort();
                }
                parent.wake();
                count += 1;
            }
            parents.push(child);
        }
    }
    count
}

/// Cancel every task below `root`, deepest first, empty the child tables, and list
/// the actors cancelled.
fn cancel_tree(root: &AnyActorRef, cancelled: &mut Vec<Cancelled>) {
    // Every entry below `root`, each parent's before its children's (a walk with a
    // stack of its own, however deep the tree: S19); then carried out in reverse,
    // so every actor's descendants are cancelled before it.
    let mut entries = Vec::new();
    let mut parents = vec![root.clone()];
    while let Some(parent) = parents.pop() {
        let Some(core) = parent.local() else {
            continue;
        };
        for entry in core.children().drain() {
            parents.push(entry.child.clone());
            entries.push(entry);
        }
    }
    for entry in entries.into_iter().rev() {
        match &entry.abort {
            Some(abort) => abort.abort(),
            // Listed, its task not spawned yet: it stops as soon as it runs.
            None => {
                entry.child.request_stop();
            }
        }
        if let Some(core) = entry.child.local()
            && !core.is_abandoned()
        {
            cancelled.push(Cancelled {
                path: entry.child.path().clone(),
                in_handler: core.is_busy(),
            });
        }
    }
}
