//! The cell task: one per actor. It reads the system lane before the user lane, runs
//! one handler at a time, applies the answer, and carries the actor through restarts
//! and its stop.
//!
//! ```text
//!  start ──> Running ──failure, restart──> Restarting ──children gone, backoff over──> Running
//!              │                              │
//!              └──stopped / failure / Stop────┴──> Stopping ──children gone──> PostStop ──> Finished
//! ```
//!
//! The task's future is the actor's fixed cost, so only the path a message takes
//! when nothing goes wrong is inline in it. Signals, failures, restarts and the stop
//! run as boxed futures when they happen, and the state they need lives in a box
//! that most actors never allocate.
//!
//! # The loop
//!
//! One actor is one `Arc<LocalCell<P>>` (what refs share) and one task; everything else
//! (the behavior, the context, the reader's batch, supervision state) is the task's own,
//! in `CellState`. `Phase` is `Spawned`, `Running`, `Restarting` (children stopping,
//! then the backoff), `Stopping` (children stopping, then `PostStop`) and `Finished`.
//! `run` loops on `CellState::poll_event`, which reads, in order:
//!
//! 1. `Rare::held`: system messages set aside during an `async` handler, or the one
//!    that interrupted it;
//! 2. the system lane (the `STOP` bit first, then the deque);
//! 3. by phase: `Running` takes a unit of tokio's budget (or a message of `credit`) and
//!    polls the user lane, batch first; `Restarting` waits for the children and the
//!    backoff, then yields `Slow::Restart`; `Stopping` waits for the children, then
//!    yields `Slow::Finish`;
//! 4. nothing: look at the system lane once more (a push between the look and the
//!    registration must not be lost), mark the lane parked, return `Pending`.
//!
//! The budget: one unit of tokio's cooperative budget per `MESSAGES_PER_UNIT` user
//! messages, the rest kept as `credit`, so an actor draining a long backlog still
//! yields to its neighbours (after 512 messages), without reading tokio's thread-local
//! on every message.
//!
//! `Slow` holds a boxed `SystemMessage`; `on_system`, `fail` and `restart` are
//! `Box::pin`ned. `PostStop` is handed over by `Running::signal_now` (one `static`
//! value), and only an `async` handler's future is awaited. `Rare` holds what most
//! actors never need, allocated on first use: watchers, supervision levels, restart
//! bookkeeping (`restart_level`, `restart_clause`, `backoff`, a `Pause` that may be
//! `Forever` for a delay the clock cannot hold, `children_since`, `deferred`), the
//! failure to escalate, and `held`.
//!
//! # Failures
//!
//! A handler's `Err` (through `IntoFailure`) or a panic (caught in `Running::dispatch`
//! for synchronous handlers, by `CatchPanic` for `async` ones) becomes a `Failure`.
//! An escalation reaches the parent as `SystemMessage::ChildFailed` (the failure
//! `climb`ed by the child's path). `on_system` ignores it from a child older than the
//! current incarnation (`uid < children_since`) or while the parent stops, defers it
//! while the parent restarts (`Rare::deferred`, moved to `held` once the next
//! incarnation runs), terminates the system if the parent is a guardian
//! (`escalated_to_guardian`), and otherwise shows the handler `Signal::ChildFailed`,
//! then fails with the child's error (or the handler's own) under the parent's own
//! supervision (`AfterSignal::answer`). An unhandled `Terminated` becomes a `DeathPact`
//! failure the same way.

use std::collections::{HashSet, VecDeque};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Sleep;

use crate::actor::behavior::Behavior;
use crate::actor::context::ActorContext;
use crate::actor::incarnation::{
    AfterSignal, Dispatched, Guarded, NextStep, Running, SignalAnswer, Started,
};
use crate::actor::lanes::{Batch, Envelope};
use crate::actor::signal::{ChildFailed, Signal, Terminated};
use crate::actor::supervision::{self, Decision, Level};
use crate::actor::{ActorRef, AnyActorRef, LocalCell, Parent};
use crate::ground::events::DeadLetterReason;
use crate::ground::failure::Failure;
use crate::ground::message::Message;
use crate::mailbox::{MailboxOverflow, NEVER_RAN, SystemMessage};

mod end;
mod interrupt;
mod restart;

use self::interrupt::{Answer, Awaited, Interruptible};

/// The task of the actor in `cell`, which starts from `behavior` and runs until the
/// actor has stopped.
pub(crate) fn run<P: Message>(
    cell: Arc<LocalCell<P>>,
    behavior: Behavior<P>,
) -> impl Future<Output = ()> + Send {
    let mut state = CellState {
        ctx: ActorContext::new(ActorRef::local(cell.clone())),
        cell,
        running: Running::Unstarted(behavior),
        batch: None,
        phase: Phase::Spawned,
        // A cell counts as parked until its task first runs.
        parked: true,
        credit: 0,
        rare: None,
    };
    // An `async` block rather than an `async fn` taking the state: the block uses the
    // state where it was captured, where an `async fn` would also keep a moved copy.
    async move {
        state.phase = Phase::Running;
        if let Some(failure) = state.start_unstarted() {
            Box::pin(state.fail(failure)).await;
        }
        loop {
            let next = poll_fn(|cx| state.poll_event(cx)).await;
            // `next` is consumed whole here, so nothing of it stays in the task's
            // state while an `async` handler runs.
            let message = match state.take(next) {
                Taken::Message(message) => message,
                Taken::Nothing => continue,
                Taken::Failed(failure) => {
                    Box::pin(state.fail(failure)).await;
                    continue;
                }
                Taken::Slow(slow) => {
                    match slow {
                        Slow::System(message) => Box::pin(state.on_system(*message)).await,
                        Slow::Restart => Box::pin(state.restart()).await,
                        Slow::Finish => {
                            // Most `PostStop` handlers answer at once: only an `async`
                            // one is awaited, and nothing is boxed for the others.
                            let post_stop = if state.sees_post_stop() {
                                state.cell.core.set_in_handler(true);
                                let outcome =
                                    match state.running.signal_now(&mut state.ctx, &end::POST_STOP)
                                    {
                                        SignalAnswer::Ready(outcome) => outcome,
                                        SignalAnswer::Pending(future) => future.await,
                                    };
                                state.cell.core.set_in_handler(false);
                                Some(outcome)
                            } else {
                                None
                            };
                            state.finish(post_stop);
                            return;
                        }
                    }
                    continue;
                }
            };
            // One future, awaited whole, for every answer that is not "the same": what
            // `dispatch` returned is gone from the task's state while an `async`
            // handler is awaited, so the task stays as small as it was without one.
            let answer = match state.running.dispatch(&mut state.ctx, message) {
                Dispatched::Same => continue,
                Dispatched::Done(outcome) => Answer::Ready(Some(outcome)),
                Dispatched::Pending(future) => {
                    state.cell.core.set_in_handler(true);
                    Answer::Pending(Interruptible {
                        handler: Guarded::new(future),
                        cell: &state.cell,
                        rare: &mut state.rare,
                        escalations_interrupt: true,
                    })
                }
                Dispatched::Nowhere(message) => {
                    undeliverable(&state.cell, message, DeadLetterReason::RecipientStopped);
                    continue;
                }
                Dispatched::Unhandled(message) => {
                    undeliverable(&state.cell, message, DeadLetterReason::Unhandled);
                    continue;
                }
            };
            let outcome = match answer.await {
                Awaited::Done(outcome) => outcome,
                // The handler's future is gone; what interrupted it is next.
                Awaited::Interrupted(message) => {
                    let rare = state.rare.get_or_insert_with(Rare::boxed);
                    rare.held.push_front(message);
                    continue;
                }
            };
            if let Some(failure) = state.apply(outcome) {
                Box::pin(state.fail(failure)).await;
            }
        }
    }
}

/// What an event from the lanes comes to.
enum Taken<P> {
    /// A message for the behavior.
    Message(P),
    /// Nothing to do: a tick of a timer cancelled or replaced since, dropped unseen,
    /// or queued work that had no message to hand on.
    Nothing,
    /// Queued work failed: the actor's failure.
    Failed(Failure),
    /// Work besides handling a message.
    Slow(Slow),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The task has not run yet.
    Spawned,
    Running,
    /// Children are stopping, then a backoff runs, then the actor starts again.
    Restarting,
    /// Children are stopping; then `PostStop`, and the end.
    Stopping,
    Finished,
}

/// What the loop has to do besides handling a message.
///
/// Small on purpose (a system message is boxed): it is held across the `await` of an
/// `async` handler, inside every actor's task.
enum Slow {
    System(Box<SystemMessage>),
    Restart,
    Finish,
}

/// State most actors never need, allocated on first use.
struct Rare<P: Message> {
    watchers: HashSet<AnyActorRef>,
    levels: Vec<Level<P>>,
    /// How many levels the last start or restart left: a switch to another behavior
    /// replaces the levels beyond these instead of adding to them.
    base_levels: usize,
    /// While restarting: the supervision level to restart from, and the clause that
    /// decided it.
    restart_level: usize,
    restart_clause: usize,
    /// While restarting: whether to wait for the children to stop first.
    restart_stops_children: bool,
    /// While restarting with a backoff: when it ends.
    backoff: Option<Pause>,
    /// While stopping because of an escalation: the failure for the parent.
    escalate: Option<Failure>,
    /// Children with a uid below this belong to an incarnation a restart replaced:
    /// a failure they escalate late is no business of the current one.
    children_since: u64,
    /// System messages that came while an `async` handler ran and need the
    /// behavior (a watched actor's end, a watch to start), or that interrupted it:
    /// read before the system lane, in the order they came.
    held: VecDeque<SystemMessage>,
    /// While restarting: escalations from children the restart keeps
    /// (`with_stop_children(false)`), for the next incarnation to decide on.
    deferred: Vec<SystemMessage>,
}

impl<P: Message> Rare<P> {
    fn boxed() -> Box<Self> {
        Box::new(Self {
            watchers: HashSet::new(),
            levels: Vec::new(),
            base_levels: 0,
            restart_level: 0,
            restart_clause: 0,
            restart_stops_children: true,
            backoff: None,
            escalate: None,
            children_since: 0,
            held: VecDeque::new(),
            deferred: Vec::new(),
        })
    }
}

struct CellState<P: Message> {
    ctx: ActorContext<P>,
    cell: Arc<LocalCell<P>>,
    running: Running<P>,
    /// The front buffer, read before the mailbox: what the reader took out of its
    /// unbounded mailbox in one go (see `Batch`), with a replayed stash put in front
    /// of it (see `NextStep::of`).
    batch: Batch<P>,
    phase: Phase,
    /// Whether the last poll ended waiting: the lane's shared `parked` mark is then
    /// set and is cleared at the next poll. Kept here too, so the message path reads
    /// a field of its own task instead of the shared cell.
    parked: bool,
    /// Messages the actor may still take on the unit of tokio's cooperative budget
    /// it last spent (see `MESSAGES_PER_UNIT`).
    credit: u8,
    rare: Option<Box<Rare<P>>>,
}

/// A restart's backoff: until the sleep ends, or for good when the delay does not
/// fit the clock (`Duration::MAX`): a restart that never comes, even on a paused
/// clock, which would jump to any instant at all.
enum Pause {
    Until(Pin<Box<Sleep>>),
    Forever,
}

/// Messages taken for each unit of tokio's cooperative budget. tokio gives a task
/// 128 units a turn, so an actor draining a backlog yields after 512 messages; one
/// unit per message cost the message path a fifth of its time on a thread-local,
/// and a neighbour on the thread still runs while the backlog drains (S29).
const MESSAGES_PER_UNIT: u8 = 4;

impl<P: Message> CellState<P> {
    /// Start the behavior the actor was spawned with.
    fn start_unstarted(&mut self) -> Option<Failure> {
        let Running::Unstarted(behavior) = std::mem::replace(&mut self.running, Running::Idle)
        else {
            return None;
        };
        let failure = self.start(behavior, 0, false).err();
        self.settle_levels();
        failure
    }

    /// Start `behavior`, keeping the first `keep_levels` supervision levels (a
    /// restart keeps the ones above the level it restarts from). With `inherit`, a
    /// level the behavior brings takes over the restart history of the level it
    /// replaces at the same depth when both have the same clauses: a state machine
    /// whose states each return `supervise(next)` keeps counting its restarts.
    fn start(
        &mut self,
        behavior: Behavior<P>,
        keep_levels: usize,
        inherit: bool,
    ) -> Result<(), Failure> {
        let mut replaced = match &mut self.rare {
            Some(rare) if inherit => rare.levels.split_off(keep_levels.min(rare.levels.len())),
            Some(rare) => {
                rare.levels.truncate(keep_levels);
                Vec::new()
            }
            None => Vec::new(),
        }
        .into_iter();
        let rare = &mut self.rare;
        let front = &mut self.batch;
        let started = self
            .running
            .start(&mut self.ctx, behavior, front, &mut |spec| {
                let mut level = Level::new(spec);
                if let Some(old) = replaced.next() {
                    level.inherit(old);
                }
                rare.get_or_insert_with(Rare::boxed).levels.push(level);
            })?;
        if started == Started::Stopped {
            self.begin_stop(None);
        }
        Ok(())
    }

    /// Start the behavior a handler switched to. Supervision it brings replaces what
    /// an earlier switch brought, rather than piling up on every switch.
    fn switch(&mut self, behavior: Behavior<P>) -> Result<(), Failure> {
        let base = self.rare.as_ref().map_or(0, |rare| rare.base_levels);
        self.start(behavior, base, true)
    }

    /// Remember how many supervision levels the behavior spawned (or restarted) has.
    fn settle_levels(&mut self) {
        if let Some(rare) = &mut self.rare {
            rare.base_levels = rare.levels.len();
        }
    }

    /// Deliver a signal to the running incarnation, marking the cell as inside a
    /// handler while an `async` signal handler runs. `PreRestart` and `PostStop`
    /// run to their end (only the shutdown deadline cuts them short).
    async fn signal(&mut self, signal: Signal) -> Result<Behavior<P>, Failure> {
        self.cell.core.set_in_handler(true);
        let outcome = self.running.signal(&mut self.ctx, signal).await;
        self.cell.core.set_in_handler(false);
        outcome
    }

    /// Deliver a signal that a stop or an escalation may interrupt, as it may a
    /// message's handler: `None` when it was interrupted (what interrupted it is
    /// held, to be read next).
    async fn interruptible_signal(
        &mut self,
        signal: Signal,
    ) -> Option<Result<Behavior<P>, Failure>> {
        // A second escalation waits for the handler of the first.
        let escalations_interrupt = !matches!(signal, Signal::ChildFailed(_));
        self.cell.core.set_in_handler(true);
        let handler = std::pin::pin!(self.running.signal(&mut self.ctx, signal));
        let awaited = Interruptible {
            handler,
            cell: &self.cell,
            rare: &mut self.rare,
            escalations_interrupt,
        }
        .await;
        self.cell.core.set_in_handler(false);
        match awaited {
            Awaited::Done(outcome) => Some(outcome),
            Awaited::Interrupted(message) => {
                let rare = self.rare.get_or_insert_with(Rare::boxed);
                rare.held.push_front(message);
                None
            }
        }
    }

    /// Open what `poll_event` produced: a message (a timer's tick becomes its
    /// timer's message), or the slow work to do.
    #[inline]
    fn take(&mut self, next: Result<Envelope<P>, Slow>) -> Taken<P> {
        match next {
            Ok(Envelope::Message(message)) => Taken::Message(message),
            Ok(Envelope::Tick(id)) => match self.ctx.fire_timer(id) {
                Some(message) => Taken::Message(message),
                None => Taken::Nothing,
            },
            Ok(Envelope::Run(work)) => self.run_work(*work),
            Ok(Envelope::Adapted(adapted)) => self.run_work(move |ctx| (*adapted).adapt(ctx)),
            Err(slow) => Taken::Slow(slow),
        }
    }

    /// Run work queued on the user lane, catching a panic as the actor's failure.
    #[cold]
    fn run_work(
        &mut self,
        work: impl FnOnce(&mut ActorContext<P>) -> Result<Option<P>, Failure>,
    ) -> Taken<P> {
        let ctx = &mut self.ctx;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || work(ctx))) {
            Ok(Ok(Some(message))) => Taken::Message(message),
            Ok(Ok(None)) => Taken::Nothing,
            Ok(Err(failure)) => Taken::Failed(failure),
            Err(panic) => Taken::Failed(Failure::from_panic(panic)),
        }
    }

    fn rare(&mut self) -> &mut Rare<P> {
        self.rare.get_or_insert_with(Rare::boxed)
    }

    /// Leave the task's waker in the mailbox, for whatever comes next to wake it.
    fn register(&self, cx: &Context<'_>) {
        self.cell.user.register(cx.waker());
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Result<Envelope<P>, Slow>> {
        if self.parked {
            self.parked = false;
            self.cell.core.lane().unpark();
        }
        if let Some(rare) = &mut self.rare
            && let Some(message) = rare.held.pop_front()
        {
            return Poll::Ready(Err(Slow::System(Box::new(message))));
        }
        if let Some(message) = self.cell.core.lane().pop() {
            return Poll::Ready(Err(Slow::System(Box::new(message))));
        }
        match self.phase {
            // Known empty (the reader is marked waiting and has no batch): nothing to
            // take, so no budget to take either.
            Phase::Spawned | Phase::Running
                if self.batch.is_none()
                    && self
                        .cell
                        .core
                        .lane()
                        .reader_waiting()
                        .load(std::sync::atomic::Ordering::Acquire) => {}
            Phase::Spawned | Phase::Running => {
                // One unit of tokio's cooperative budget per `MESSAGES_PER_UNIT`
                // messages: an actor draining a long backlog yields to its
                // neighbours on the thread.
                let budget = if self.credit == 0 {
                    let Poll::Ready(budget) = tokio::task::coop::poll_proceed(cx) else {
                        return self.park();
                    };
                    Some(budget)
                } else {
                    None
                };
                // Leaves the task's waker in the mailbox when it comes back empty.
                if let Poll::Ready(envelope) = self.cell.user.poll_next(
                    cx,
                    &mut self.batch,
                    self.cell.core.lane().reader_waiting(),
                ) {
                    match budget {
                        Some(budget) => {
                            budget.made_progress();
                            self.credit = MESSAGES_PER_UNIT - 1;
                        }
                        None => self.credit -= 1,
                    }
                    return Poll::Ready(Ok(envelope));
                }
            }
            Phase::Restarting => {
                // A child's end only wakes the task: register before looking, so an
                // end between the look and the registration is not lost.
                self.register(cx);
                let waits_for_children = self
                    .rare
                    .as_ref()
                    .is_none_or(|rare| rare.restart_stops_children);
                if !waits_for_children || self.cell.core.look_at_children() {
                    let over = match self.rare.as_mut().and_then(|rare| rare.backoff.as_mut()) {
                        None => true,
                        // Registers the task with the timer when it has not elapsed.
                        Some(Pause::Until(sleep)) => sleep.as_mut().poll(cx).is_ready(),
                        Some(Pause::Forever) => false,
                    };
                    if over {
                        return Poll::Ready(Err(Slow::Restart));
                    }
                }
            }
            Phase::Stopping | Phase::Finished => {
                self.register(cx);
                if self.cell.core.look_at_children() {
                    return Poll::Ready(Err(Slow::Finish));
                }
            }
        }
        // Nothing to do, and the task's waker is in the mailbox (left there when the
        // user lane came back empty, or above). Look at the system lane once more, so
        // a push between the first look and the registration is not lost.
        if let Some(message) = self.cell.core.lane().pop() {
            return Poll::Ready(Err(Slow::System(Box::new(message))));
        }
        self.park()
    }

    /// Return `Pending`, marked as waiting for something to do.
    fn park(&mut self) -> Poll<Result<Envelope<P>, Slow>> {
        self.parked = true;
        self.cell.core.set_parked();
        Poll::Pending
    }

    /// Apply a handler's answer (read as the test kit reads it, by [`NextStep::of`]):
    /// keep going, dead-letter an unhandled message, stop, or switch. A failure (the
    /// handler's, or a new behavior's setup) is returned for [`CellState::fail`].
    #[inline]
    fn apply(&mut self, outcome: Result<Behavior<P>, Failure>) -> Option<Failure> {
        let next = match outcome {
            Ok(next) => next,
            Err(failure) => return Some(failure),
        };
        match NextStep::of(next, &mut self.batch) {
            NextStep::Same => None,
            NextStep::Unhandled(message_type) => {
                self.cell.core.system().dead_letter_of_type(
                    message_type,
                    self.cell.core.path(),
                    DeadLetterReason::Unhandled,
                );
                None
            }
            NextStep::Stop => {
                self.begin_stop(None);
                None
            }
            NextStep::Switch(behavior) => self.switch(behavior).err(),
        }
    }

    async fn on_system(&mut self, message: SystemMessage) {
        match message {
            SystemMessage::Stop => self.begin_stop(None),
            SystemMessage::Watch(watcher) => {
                if watcher != self.ctx.self_ref().erase() {
                    self.rare().watchers.insert(watcher);
                }
            }
            #[cfg(feature = "testkit")]
            SystemMessage::WatchFor(target) => self.ctx.watch_any(target),
            SystemMessage::Unwatch(watcher) => {
                if let Some(rare) = &mut self.rare {
                    rare.watchers.remove(&watcher);
                }
            }
            SystemMessage::Terminated(actor) => {
                if self.phase != Phase::Running {
                    return;
                }
                let Some(watch) = self.ctx.take_watch(&actor) else {
                    return;
                };
                if let Some(message) = watch.message {
                    // `watch_with` (S50): behind everything already queued, which
                    // holds whatever the stopped actor sent here, past any bound.
                    self.cell.deliver(Envelope::Run(Box::new(Box::new(
                        move |_: &mut ActorContext<P>| Ok(Some(message)),
                    ))));
                    return;
                }
                let terminated = Signal::Terminated(Terminated::new(watch.named));
                let after = AfterSignal::of(&terminated);
                let Some(outcome) = self.interruptible_signal(terminated).await else {
                    return;
                };
                if let Some(failure) = self.apply(after.answer(outcome)) {
                    self.fail(failure).await;
                }
            }
            SystemMessage::MailboxOverflowed => {
                // From here on, the next refused tell fails the actor again.
                let capacity = self.cell.user.overflow_handled();
                if self.phase == Phase::Running {
                    let overflow = MailboxOverflow::new(capacity);
                    self.fail(Failure::new(overflow)).await;
                }
            }
            // What this turn came to is carried out by now (a failure's decision
            // taken): the asker hears whether its target stops.
            SystemMessage::TurnOutcome(asker) => asker.tell(self.cell.core.is_stopping()),
            SystemMessage::ChildFailed { child, failure } => {
                let stale = self
                    .rare
                    .as_ref()
                    .is_some_and(|rare| child.uid() < rare.children_since);
                if stale {
                    tracing::debug!(%child, error = %failure, "a child of an earlier incarnation escalated; ignored");
                    return;
                }
                if self.phase == Phase::Restarting {
                    // A child the restart keeps escalated while this actor is between
                    // incarnations: absent, not dead (S13), so the next incarnation
                    // decides on it, as it handles what was told meanwhile.
                    tracing::warn!(%child, error = %failure, "a child escalated its failure during a restart; the next incarnation decides on it");
                    self.rare()
                        .deferred
                        .push(SystemMessage::ChildFailed { child, failure });
                    return;
                }
                tracing::warn!(%child, error = %failure, "a child escalated its failure");
                let failure = failure.climb(self.cell.core.path());
                if let Parent::System = self.cell.core.parent() {
                    self.cell.core.system().escalated_to_guardian(failure);
                    return;
                }
                if self.phase != Phase::Running {
                    tracing::warn!(error = %failure, "escalation while stopping; ignored");
                    return;
                }
                // The handler sees the escalation; supervision decides on it.
                let seen = Signal::ChildFailed(ChildFailed::new(child, failure));
                let after = AfterSignal::of(&seen);
                let Some(outcome) = self.interruptible_signal(seen).await else {
                    return;
                };
                if let Some(failure) = self.apply(after.answer(outcome)) {
                    self.fail(failure).await;
                }
            }
        }
    }

    /// Begin to stop: no more user messages, children told to stop.
    fn begin_stop(&mut self, escalate: Option<Failure>) {
        if matches!(self.phase, Phase::Stopping | Phase::Finished) {
            return;
        }
        self.phase = Phase::Stopping;
        self.cell.core.set_waiting_for_children(true);
        self.cell.core.set_stopping();
        if let Some(failure) = escalate {
            self.rare().escalate = Some(failure);
        }
        if let Some(rare) = &mut self.rare {
            rare.backoff = None;
        }
        self.ctx.cancel_timers();
        self.close_user_lane();
        self.cell.core.children().close_and_stop();
    }
}

impl<P: Message> Drop for CellState<P> {
    fn drop(&mut self) {
        if self.phase == Phase::Spawned {
            // Dropped before it ever ran: its runtime has shut down. The spawn that
            // is still under way sees this and reports it.
            self.cell.core.lane().set_flag(NEVER_RAN, true);
        }
        if self.phase != Phase::Finished {
            // Cancelled at the shutdown deadline, dropped with its runtime, or ended
            // by a panic outside every handler: nothing stays queued where nobody
            // reads, no timer runs on, and watchers and parent still hear of the end.
            self.tell_the_end();
        }
    }
}

/// A message no incarnation took becomes a dead letter.
fn undeliverable<P: Message>(cell: &LocalCell<P>, message: P, reason: DeadLetterReason) {
    cell.core
        .system()
        .dead_letter(message, cell.core.path(), reason);
}
