//! The cell task: one per actor. It reads the system lane before the user lane, runs
//! one handler at a time, applies the answer, and carries the actor through restarts
//! and its stop.
//!
//! Life of a cell:
//!
//! ```text
//!  start ──> Running ──failure, restart──> Restarting ──children gone, backoff over──> Running
//!              │  │                            │
//!              │  └────stopped / failure / Stop┴──> Stopping ──children gone──> PostStop ──> Finished
//! ```

use std::collections::HashSet;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Sleep;

use crate::actor::context::ActorContext;
use crate::actor::{ActorRef, AnyActorRef, LocalCell, Parent};
use crate::behavior::{Actor, Behavior, Behaviors, HandledKind, Kind, Receive, StartedKind};
use crate::events::DeadLetterReason;
use crate::failure::{Failure, InvalidBehavior};
use crate::mailbox::SystemMessage;
use crate::message::Message;
use crate::signal::{DeathPact, Signal, Terminated};
use crate::supervision::{self, Decision, Level};
use crate::system::ActorSystem;

/// Run the actor in `cell`, starting from `behavior`, until it has stopped.
pub(crate) async fn run<P: Message>(cell: Arc<LocalCell<P>>, behavior: Behavior<P>) {
    let system = ActorSystem::from_shared(cell.core.system().clone());
    let mut state = CellState {
        ctx: ActorContext::new(ActorRef::local(cell.clone()), system),
        cell,
        running: Running::Idle,
        receiver: None,
        phase: Phase::Running,
        rare: None,
    };
    if let Err(failure) = state.start(behavior, 0) {
        state.fail(failure).await;
    }
    loop {
        match poll_fn(|cx| state.poll_event(cx)).await {
            Event::User(message) => state.on_message(message).await,
            Event::System(message) => state.on_system(message).await,
            Event::Restart => state.restart().await,
            Event::Finish => {
                state.finish().await;
                return;
            }
        }
    }
}

/// The running incarnation.
enum Running<P: Message> {
    /// Not started, between incarnations, or stopped.
    Idle,
    Receive(Receive<P>),
    Actor(Box<dyn Actor<Msg = P>>),
    Empty,
    Ignore,
}

enum Phase {
    Running,
    /// Children are stopping, then a backoff runs, then the actor starts again.
    Restarting {
        level: usize,
        backoff: Option<Pin<Box<Sleep>>>,
    },
    /// Children are stopping; then `PostStop`, and the end.
    Stopping {
        escalate: Option<Failure>,
    },
    Finished,
}

enum Event<P> {
    User(P),
    System(SystemMessage),
    Restart,
    Finish,
}

/// State most actors never need, allocated on first use.
struct Rare<P: Message> {
    watchers: HashSet<AnyActorRef>,
    levels: Vec<Level<P>>,
}

struct CellState<P: Message> {
    ctx: ActorContext<P>,
    cell: Arc<LocalCell<P>>,
    running: Running<P>,
    receiver: Option<UnboundedReceiver<P>>,
    phase: Phase,
    rare: Option<Box<Rare<P>>>,
}

impl<P: Message> CellState<P> {
    fn rare(&mut self) -> &mut Rare<P> {
        self.rare.get_or_insert_with(|| {
            Box::new(Rare {
                watchers: HashSet::new(),
                levels: Vec::new(),
            })
        })
    }

    fn levels_len(&self) -> usize {
        self.rare.as_ref().map_or(0, |rare| rare.levels.len())
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Event<P>> {
        let mut registered = false;
        loop {
            if let Some(message) = self.cell.core.lane().pop() {
                return Poll::Ready(Event::System(message));
            }
            match &mut self.phase {
                Phase::Running => {
                    if self.receiver.is_none() {
                        self.receiver = self.cell.user.take_receiver();
                    }
                    if let Some(receiver) = &mut self.receiver {
                        if let Poll::Ready(Some(message)) = receiver.poll_recv(cx) {
                            return Poll::Ready(Event::User(message));
                        }
                    }
                }
                Phase::Restarting { backoff, .. } => {
                    if self.cell.core.children().is_empty() {
                        let over = match backoff {
                            None => true,
                            Some(sleep) => sleep.as_mut().poll(cx).is_ready(),
                        };
                        if over {
                            return Poll::Ready(Event::Restart);
                        }
                    }
                }
                Phase::Stopping { .. } | Phase::Finished => {
                    if self.cell.core.children().is_empty() {
                        return Poll::Ready(Event::Finish);
                    }
                }
            }
            if registered {
                return Poll::Pending;
            }
            // Register, then look once more, so a wake between the look and the
            // registration is not lost.
            self.cell.core.waker().register(cx.waker());
            registered = true;
        }
    }

    /// Start `behavior`: run setups, record supervision, install what it builds.
    /// `keep_levels` supervision levels stay from before (a restart keeps the ones
    /// above the level it restarts from).
    fn start(&mut self, behavior: Behavior<P>, keep_levels: usize) -> Result<(), Failure> {
        if let Some(rare) = &mut self.rare {
            rare.levels.truncate(keep_levels);
        }
        let mut next = behavior;
        loop {
            match next.kind {
                Kind::Setup(factory) => {
                    let ctx = &mut self.ctx;
                    let started = catch_unwind(AssertUnwindSafe(|| factory(ctx)))
                        .map_err(Failure::from_panic)??;
                    match started.0 {
                        StartedKind::Behavior(behavior) => next = behavior,
                        StartedKind::Actor(actor) => {
                            self.running = Running::Actor(actor);
                            return Ok(());
                        }
                    }
                }
                Kind::Supervise(spec) => {
                    next = spec.inner.clone();
                    self.rare().levels.push(Level::new(spec));
                }
                Kind::Actor(factory) => {
                    let actor = catch_unwind(AssertUnwindSafe(|| factory()))
                        .map_err(Failure::from_panic)?;
                    self.running = Running::Actor(actor);
                    return Ok(());
                }
                Kind::Receive(receive) => {
                    self.running = Running::Receive(receive);
                    return Ok(());
                }
                Kind::Empty => {
                    self.running = Running::Empty;
                    return Ok(());
                }
                Kind::Ignore => {
                    self.running = Running::Ignore;
                    return Ok(());
                }
                Kind::Stopped => {
                    self.begin_stop(None);
                    return Ok(());
                }
                Kind::Same | Kind::Unhandled => {
                    return Err(Failure::new(InvalidBehavior(
                        "an actor cannot start as `same` or `unhandled`: give it a behavior that handles messages",
                    )));
                }
            }
        }
    }

    async fn on_message(&mut self, message: P) {
        let outcome = match &mut self.running {
            Running::Receive(receive) => {
                let ctx = &mut self.ctx;
                catch_unwind(AssertUnwindSafe(|| receive.message(ctx, message)))
                    .unwrap_or_else(|panic| Err(Failure::from_panic(panic)))
            }
            Running::Actor(actor) => {
                let ctx = &mut self.ctx;
                let call = move || {
                    let (actor, ctx) = (actor, ctx);
                    actor.handle(ctx, message).0
                };
                match catch_unwind(AssertUnwindSafe(call)) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => guarded(future).await,
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Empty => Ok(Behaviors::unhandled()),
            Running::Ignore => Ok(Behaviors::same()),
            Running::Idle => {
                self.cell.core.system().dead_letter(
                    message.into_payload(),
                    self.cell.core.path(),
                    DeadLetterReason::RecipientStopped,
                );
                return;
            }
        };
        match outcome {
            Ok(next) if next.is_same() => {}
            Ok(next) if next.is_unhandled() => self.cell.core.system().dead_letter_of_type(
                std::any::type_name::<P>(),
                self.cell.core.path(),
                DeadLetterReason::Unhandled,
            ),
            outcome => self.apply(outcome).await,
        }
    }

    /// Deliver a signal to the running incarnation.
    async fn signal(&mut self, signal: Signal) -> Result<Behavior<P>, Failure> {
        match &mut self.running {
            Running::Receive(receive) => {
                let ctx = &mut self.ctx;
                catch_unwind(AssertUnwindSafe(|| receive.signal(ctx, &signal)))
                    .unwrap_or_else(|panic| Err(Failure::from_panic(panic)))
            }
            Running::Actor(actor) => {
                let (ctx, signal) = (&mut self.ctx, &signal);
                // Moving the borrows in makes the closure `FnOnce`, so what it
                // returns may keep borrowing the actor and its context.
                let call = move || {
                    let (actor, ctx) = (actor, ctx);
                    actor.signal(ctx, signal).0
                };
                match catch_unwind(AssertUnwindSafe(call)) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => guarded(future).await,
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Empty | Running::Ignore | Running::Idle => Ok(Behaviors::unhandled()),
        }
    }

    /// Apply a handler's answer: switch, stop, or fail.
    async fn apply(&mut self, outcome: Result<Behavior<P>, Failure>) {
        match outcome {
            Ok(next) => match next.kind {
                Kind::Same | Kind::Unhandled => {}
                Kind::Stopped => self.begin_stop(None),
                _ => {
                    let keep = self.levels_len();
                    if let Err(failure) = self.start(next, keep) {
                        self.fail(failure).await;
                    }
                }
            },
            Err(failure) => self.fail(failure).await,
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
            SystemMessage::Unwatch(watcher) => {
                if let Some(rare) = &mut self.rare {
                    rare.watchers.remove(&watcher);
                }
            }
            SystemMessage::Terminated(actor) => {
                if !matches!(self.phase, Phase::Running) || !self.ctx.take_watch(&actor) {
                    return;
                }
                let outcome = self
                    .signal(Signal::Terminated(Terminated::new(actor.clone())))
                    .await;
                match outcome {
                    Ok(next) if next.is_unhandled() => {
                        self.fail(Failure::new(DeathPact { actor })).await;
                    }
                    outcome => self.apply(outcome).await,
                }
            }
            SystemMessage::ChildTerminated => {
                // The child left the table before it said so; the next poll sees
                // whether a stop or restart waiting on children can go on.
            }
            SystemMessage::ChildFailed { child, failure } => {
                tracing::warn!(%child, error = %failure, "a child escalated its failure");
                let failure = failure.climb(self.cell.core.path());
                match self.cell.core.parent() {
                    Parent::System => self.cell.core.system().escalated_to_guardian(failure),
                    Parent::Cell(_) => self.fail(failure).await,
                }
            }
        }
    }

    /// Take the supervision decision on `failure` and start carrying it out.
    async fn fail(&mut self, failure: Failure) {
        if !matches!(self.phase, Phase::Running) {
            tracing::warn!(error = %failure, "failure while stopping or restarting; ignored");
            return;
        }
        let decision = match &mut self.rare {
            Some(rare) => supervision::decide(&mut rare.levels, &failure),
            None => Decision::Stop { exhausted: false },
        };
        let decision = match decision {
            // A system on its way down restarts nothing.
            Decision::Restart { .. } if self.cell.core.system().is_terminating() => {
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
            Decision::Restart { level, delay } => {
                tracing::warn!(error = %failure, backoff = ?delay, "handler failed; restarting");
                self.begin_restart(level, delay).await;
            }
        }
    }

    async fn begin_restart(&mut self, level: usize, delay: Option<Duration>) {
        if let Err(failure) = self.signal(Signal::PreRestart).await {
            tracing::warn!(error = %failure, "PreRestart handler failed; restarting anyway");
        }
        self.running = Running::Idle;
        self.ctx.unwatch_all();
        for child in self.cell.core.children().refs() {
            let _ = child.send_system(SystemMessage::Stop);
        }
        self.phase = Phase::Restarting {
            level,
            backoff: delay.map(|delay| Box::pin(tokio::time::sleep(delay))),
        };
    }

    async fn restart(&mut self) {
        let Phase::Restarting { level, .. } = self.phase else {
            return;
        };
        self.phase = Phase::Running;
        let Some(inner) = self
            .rare
            .as_ref()
            .and_then(|rare| rare.levels.get(level))
            .map(|level| level.spec.inner.clone())
        else {
            return;
        };
        if let Err(failure) = self.start(inner, level + 1) {
            self.fail(failure).await;
        }
    }

    /// Begin to stop: no more user messages, children told to stop.
    fn begin_stop(&mut self, escalate: Option<Failure>) {
        if matches!(self.phase, Phase::Stopping { .. } | Phase::Finished) {
            return;
        }
        self.phase = Phase::Stopping { escalate };
        self.close_user_lane();
        for child in self.cell.core.children().close() {
            let _ = child.send_system(SystemMessage::Stop);
        }
    }

    /// Close the user lane and turn what it still holds into dead letters.
    fn close_user_lane(&mut self) {
        let receiver = match self.receiver.take() {
            Some(mut receiver) => {
                let _ = self.cell.user.close();
                receiver.close();
                Some(receiver)
            }
            None => self.cell.user.close(),
        };
        if let Some(mut receiver) = receiver {
            while let Ok(message) = receiver.try_recv() {
                self.cell.core.system().dead_letter(
                    message.into_payload(),
                    self.cell.core.path(),
                    DeadLetterReason::RecipientStopped,
                );
            }
        }
    }

    /// Every child has stopped: `PostStop`, then tell the watchers and the parent.
    async fn finish(&mut self) {
        let escalate = match std::mem::replace(&mut self.phase, Phase::Finished) {
            Phase::Stopping { escalate } => escalate,
            _ => None,
        };
        if let Err(failure) = self.signal(Signal::PostStop).await {
            tracing::warn!(error = %failure, "PostStop handler failed");
        }
        self.running = Running::Idle;
        self.close_user_lane();
        self.ctx.unwatch_all();
        let me = self.ctx.self_ref().erase();
        let core = &self.cell.core;
        for message in core.lane().close() {
            if let SystemMessage::Watch(watcher) = message {
                let _ = watcher.send_system(SystemMessage::Terminated(me.clone()));
            }
        }
        if let Some(rare) = self.rare.take() {
            for watcher in rare.watchers {
                let _ = watcher.send_system(SystemMessage::Terminated(me.clone()));
            }
        }
        match core.parent() {
            Parent::Cell(parent) => {
                parent.core().children().remove(&me);
                let message = match escalate {
                    Some(failure) => SystemMessage::ChildFailed {
                        child: me.clone(),
                        failure: failure.climb(core.path()),
                    },
                    None => SystemMessage::ChildTerminated,
                };
                let _ = parent.send_system(message);
            }
            Parent::System => core.system().guardian_stopped(core.path()),
        }
    }
}

impl<P: Message> Drop for CellState<P> {
    fn drop(&mut self) {
        if !matches!(self.phase, Phase::Finished) {
            // Cancelled at the shutdown deadline, or dropped with its runtime: make
            // sure nothing more is queued where nobody reads.
            self.close_user_lane();
            self.cell.core.lane().close();
        }
        self.cell.core.system().cell_dropped();
    }
}

/// Poll a handler's future, turning a panic into a failure.
async fn guarded<P: Message>(
    mut future: Pin<Box<dyn Future<Output = Result<Behavior<P>, Failure>> + Send + '_>>,
) -> Result<Behavior<P>, Failure> {
    poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(Failure::from_panic(panic))),
        },
    )
    .await
}
