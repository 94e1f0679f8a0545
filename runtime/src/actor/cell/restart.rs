//! Failures and restarts: the supervision decision on a failure, and carrying it out.
//!
//! `fail` asks `supervision::decide` for a decision over the `Level`s that each
//! `Behaviors::supervise` registered as the behavior started (innermost first; none
//! means stop), and `carry_out` acts on it: resume (a failure while starting cannot
//! resume: it stops), stop (`begin_stop`), escalate (`begin_stop` with the failure kept
//! for the parent), or restart (a stop once the system terminates): `begin_restart` runs
//! `PreRestart`, drops the incarnation with its watches and timers, asks the children to
//! stop (unless `with_stop_children(false)`), notes `children_since` and the backoff,
//! and enters `Restarting`; `restart` starts the level's behavior again, and a restart
//! that fails is decided by the same clause (`decide_failed_restart`). Each clause
//! keeps its own restart history (`History`: the window, and the restarts in a row
//! that set the backoff's exponent); a behavior that switches to a `supervise(..)`
//! with the same clauses inherits it (`Level::inherit`), so state machines keep
//! counting.

use super::*;

impl<P: Message> CellState<P> {
    /// Take the supervision decision on `failure` and start carrying it out.
    pub(super) async fn fail(&mut self, failure: Failure) {
        if self.phase != Phase::Running {
            tracing::warn!(error = %failure, "failure while stopping or restarting; ignored");
            return;
        }
        let decision = match &mut self.rare {
            Some(rare) => supervision::decide(&mut rare.levels, &failure),
            None => Decision::Stop { exhausted: false },
        };
        self.carry_out(decision, failure).await;
    }

    /// Carry out a supervision decision on `failure`, for a running actor.
    pub(super) async fn carry_out(&mut self, decision: Decision, failure: Failure) {
        let decision = match decision {
            // A system on its way down restarts nothing.
            Decision::Restart { .. } if self.cell.core.system().is_terminating() => {
                Decision::Stop { exhausted: false }
            }
            // A failure to start leaves nothing to resume with.
            Decision::Resume if matches!(self.running, Running::Idle | Running::Unstarted(_)) => {
                Decision::Stop { exhausted: false }
            }
            decision => decision,
        };
        match decision {
            Decision::Resume => {
                tracing::warn!(error = %failure, "handler failed; resuming with the same state");
            }
            Decision::Stop { exhausted } => {
                if exhausted {
                    tracing::error!(error = %failure, "handler failed and the restart limit is used up; stopping");
                } else {
                    tracing::error!(error = %failure, "handler failed; stopping");
                }
                self.begin_stop(None);
            }
            Decision::Escalate => {
                tracing::error!(error = %failure, "handler failed; escalating to the parent");
                self.begin_stop(Some(failure));
            }
            Decision::Restart {
                level,
                clause,
                delay,
                stop_children,
            } => {
                tracing::warn!(error = %failure, backoff = ?delay, "handler failed; restarting");
                self.rare().restart_clause = clause;
                self.begin_restart(level, delay, stop_children).await;
            }
        }
    }

    pub(super) async fn begin_restart(
        &mut self,
        level: usize,
        delay: Option<Duration>,
        stop_children: bool,
    ) {
        if let Err(failure) = self.signal(Signal::PreRestart).await {
            tracing::warn!(error = %failure, "PreRestart handler failed; restarting anyway");
        }
        self.running = Running::Idle;
        self.ctx.unwatch_all();
        self.ctx.cancel_timers();
        if stop_children {
            for child in self.cell.core.children().refs() {
                child.request_stop();
            }
        }
        let children_since = self.cell.core.system().uid_mark();
        let rare = self.rare();
        rare.restart_level = level;
        rare.restart_stops_children = stop_children;
        if stop_children {
            rare.children_since = children_since;
        }
        rare.backoff = delay.map(|delay| {
            match crate::ground::clock::deadline_after(tokio::time::Instant::now(), delay) {
                Some(until) => Pause::Until(Box::pin(tokio::time::sleep_until(until))),
                None => Pause::Forever,
            }
        });
        self.phase = Phase::Restarting;
        self.cell.core.set_waiting_for_children(stop_children);
    }

    pub(super) async fn restart(&mut self) {
        if self.phase != Phase::Restarting {
            return;
        }
        self.phase = Phase::Running;
        self.cell.core.set_waiting_for_children(false);
        let rare = self.rare();
        rare.backoff = None;
        let level = rare.restart_level;
        let Some(inner) = rare.levels.get(level).map(|level| level.spec.inner.clone()) else {
            // Nothing to restart from: stop rather than run on with no incarnation.
            self.begin_stop(None);
            return;
        };
        let clause = rare.restart_clause;
        let base_before = rare.base_levels;
        let started = self.start(inner, level + 1, false);
        if level < base_before {
            self.settle_levels();
        } else if let Some(rare) = &mut self.rare {
            // The level that restarted came with a switch: it, and what the restart
            // brought inside it, stay replaceable by the next switch (which takes over
            // their histories), so restarts and switches cannot pile up levels.
            rare.base_levels = base_before;
        }
        if let Err(failure) = started {
            // The restart itself failed: the clause that ordered it decides again.
            let rare = self.rare();
            let decision = supervision::decide_failed_restart(&mut rare.levels, level, clause);
            self.carry_out(decision, failure).await;
        }
        // Escalations that came during the restart reach the incarnation that runs
        // now (one restarting again keeps them for the next; one stopping drops them,
        // as it would have while stopping).
        if self.phase == Phase::Running
            && let Some(rare) = &mut self.rare
            && !rare.deferred.is_empty()
        {
            let deferred = std::mem::take(&mut rare.deferred);
            rare.held.extend(deferred);
        }
    }
}
