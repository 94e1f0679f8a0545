//! `TestProbe`: an actor a test hands out, with bounded, typed expectations.
//!
//! A probe is a real actor under `/system`; its messages and the ends it watches go to
//! the test through unbounded channels. Every expectation waits at most its own bound,
//! capped by `max_wait`.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio::time::Instant;

use crate::actor::ActorSystem;
use crate::actor::behavior::Behaviors;
use crate::actor::signal::Signal;
use crate::actor::{ActorRef, AnyActorRef};
use crate::ground::error::SpawnError;
use crate::ground::message::Message;
use crate::mailbox::SystemMessage;

/// A real actor (under `/system`) whose messages go to the test, with expectations
/// that each take a bound.
///
/// Every expectation waits at most its bound, itself capped at
/// [`TestProbe::max_wait`] (30 s unless [`with_max_wait`](Self::with_max_wait) says
/// otherwise, and never more than an hour), so no expectation can hang a test. A
/// bound of zero looks once, without waiting. Once the probe's system has terminated,
/// every expectation fails at once, including one already waiting, and
/// `expect_no_message`: a probe that can receive nothing proves nothing. A failed expectation panics with what was expected, what arrived instead
/// (or that nothing did), and after how long. Under tokio's paused clock
/// (`start_paused`), waiting out a bound takes no real time.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tapio::prelude::*;
/// use tapio::testkit::TestProbe;
///
/// #[message]
/// pub struct Say { pub text: String, pub to: ActorRef<String> }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = ActorSystem::new("probing")?;
/// let mut probe = TestProbe::<String>::new(&system);
/// let echo = system.spawn(Behaviors::receive_message(|say: Say| say.to.tell(say.text)), "echo")?;
/// echo.tell(Say { text: "hi".into(), to: probe.actor_ref().clone() });
/// assert_eq!(probe.expect_message(Duration::from_secs(1)).await, "hi");
/// probe.expect_no_message(Duration::from_millis(20)).await;
///
/// probe.watch(&echo);
/// system.terminate().await;
/// # Ok(())
/// # }
/// ```
pub struct TestProbe<M: Message> {
    actor: ActorRef<M>,
    messages: UnboundedReceiver<M>,
    terminations: UnboundedReceiver<AnyActorRef>,
    max_wait: Duration,
}

static PROBES: AtomicU64 = AtomicU64::new(1);

impl<M: Message> TestProbe<M> {
    /// The cap on every expectation's bound, unless changed with `with_max_wait`.
    pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(30);

    /// The highest cap `with_max_wait` accepts: an hour.
    pub const LONGEST_MAX_WAIT: Duration = Duration::from_secs(3600);

    /// A probe on `system`.
    ///
    /// # Panics
    ///
    /// If the system has terminated; [`try_new`](Self::try_new) returns the error.
    pub fn new(system: &ActorSystem) -> Self {
        match Self::try_new(system) {
            Ok(probe) => probe,
            Err(error) => panic!("cannot start a test probe: {error}"),
        }
    }

    /// A probe on `system`.
    ///
    /// # Errors
    ///
    /// [`SpawnError::SystemTerminated`] once the system is terminating.
    pub fn try_new(system: &ActorSystem) -> Result<Self, SpawnError> {
        let (to_test, messages) = mpsc::unbounded_channel();
        let (terminated, terminations) = mpsc::unbounded_channel();
        let behavior = Behaviors::receive_message(move |message: M| {
            let _ = to_test.send(message);
        })
        .on_signal(move |_, signal| {
            if let Signal::Terminated(end) = signal {
                let _ = terminated.send(end.actor().clone());
            }
            Behaviors::same()
        });
        let name = format!("probe-{}", PROBES.fetch_add(1, Ordering::Relaxed));
        let actor = system.spawn_system_actor(behavior, Some(&name))?;
        Ok(Self {
            actor,
            messages,
            terminations,
            max_wait: Self::DEFAULT_MAX_WAIT,
        })
    }

    /// Cap every expectation's bound at `max_wait` instead of 30 s; a cap above
    /// [`LONGEST_MAX_WAIT`](Self::LONGEST_MAX_WAIT) is taken as that, so that even an
    /// absurd bound still ends.
    pub fn with_max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait.min(Self::LONGEST_MAX_WAIT);
        self
    }

    /// The cap on every expectation's bound.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    /// The probe's ref, to hand to the actors under test.
    pub fn actor_ref(&self) -> &ActorRef<M> {
        &self.actor
    }

    fn bound(&self, within: Duration) -> Duration {
        within.min(self.max_wait)
    }

    /// The next message, if one arrives within `within`; `Err` says how long it waited
    /// and whether the probe's actor is gone.
    async fn next(&mut self, within: Duration) -> Result<M, NotReceived> {
        let bound = self.bound(within);
        receive(&mut self.messages, bound).await
    }

    /// Panic unless `got` is a timeout: silence was expected (`expected` says what
    /// of), and `arrived` names what came instead.
    fn expect_silence<T>(
        &self,
        expected: &str,
        started: Instant,
        got: Result<T, NotReceived>,
        arrived: impl FnOnce(T) -> String,
    ) {
        match got {
            Ok(item) => panic!(
                "{}: expected {expected}, but {} arrived after {:?}",
                self.actor.path(),
                arrived(item),
                started.elapsed()
            ),
            Err(NotReceived::Timeout(_)) => {}
            Err(stopped) => self.fail(expected, stopped),
        }
    }

    fn fail(&self, expected: &str, got: NotReceived) -> ! {
        let path = self.actor.path();
        match got {
            NotReceived::Timeout(waited) => {
                panic!("{path}: expected {expected}, but nothing arrived within {waited:?}")
            }
            NotReceived::Stopped(waited) => panic!(
                "{path}: expected {expected}, but the probe stopped after {waited:?}: its actor system terminated"
            ),
        }
    }

    /// The next message if one arrives within `within`, without failing when none
    /// does: for a test that counts what arrives.
    pub async fn receive_message(&mut self, within: Duration) -> Option<M> {
        self.next(within).await.ok()
    }

    /// The next message, which must arrive within `within`.
    ///
    /// # Panics
    ///
    /// If none arrives in time, or the probe's system terminates first.
    pub async fn expect_message(&mut self, within: Duration) -> M {
        match self.next(within).await {
            Ok(message) => message,
            Err(got) => self.fail(&format!("a message within {within:?}"), got),
        }
    }

    /// The next message, which must arrive within `within` and satisfy `predicate`.
    ///
    /// # Panics
    ///
    /// If none arrives in time, or the one that does fails the predicate (the message
    /// says which it was).
    pub async fn expect_message_where(
        &mut self,
        within: Duration,
        predicate: impl FnOnce(&M) -> bool,
    ) -> M
    where
        M: fmt::Debug,
    {
        let started = Instant::now();
        match self.next(within).await {
            Ok(message) if predicate(&message) => message,
            Ok(message) => panic!(
                "{}: expected a message matching the predicate within {within:?}, but {message:?} arrived after {:?}",
                self.actor.path(),
                started.elapsed()
            ),
            Err(got) => self.fail(
                &format!("a message matching the predicate within {within:?}"),
                got,
            ),
        }
    }

    /// Wait `within` and check that no message arrives.
    ///
    /// # Panics
    ///
    /// If one does (the message says which, and when), or if the probe's system
    /// terminates: then nothing could have arrived, and the silence proves nothing.
    pub async fn expect_no_message(&mut self, within: Duration)
    where
        M: fmt::Debug,
    {
        let started = Instant::now();
        let got = self.next(within).await;
        let expected = format!("no message for {within:?}");
        self.expect_silence(&expected, started, got, |message| format!("{message:?}"));
    }

    /// The next `n` messages, which must all arrive within `within` (in total).
    ///
    /// # Panics
    ///
    /// If fewer arrive in time; the message says how many did.
    pub async fn receive_messages(&mut self, n: usize, within: Duration) -> Vec<M> {
        let started = Instant::now();
        let bound = self.bound(within);
        // Room for what is likely to come, not for whatever `n` says.
        let mut received = Vec::with_capacity(n.min(1024));
        while received.len() < n {
            let left = bound.saturating_sub(started.elapsed());
            match self.next(left).await {
                Ok(message) => received.push(message),
                // The failure reports the whole wait, not the last message's.
                Err(got) => self.fail(
                    &format!(
                        "{n} messages within {within:?} (got {} of them)",
                        received.len()
                    ),
                    got.after(started.elapsed()),
                ),
            }
        }
        received
    }

    /// Watch `target`: its end becomes expectable with
    /// [`expect_terminated`](Self::expect_terminated). A message adapter is watched
    /// through its owner, as [`ActorContext::watch`](crate::ActorContext::watch) says.
    pub fn watch<Q: Message>(&self, target: &ActorRef<Q>) {
        let _ = self
            .actor
            .erase()
            .send_system(SystemMessage::WatchFor(target.erase()));
    }

    /// The next end of a watched actor, if one comes within `within`.
    async fn next_termination(&mut self, within: Duration) -> Result<AnyActorRef, NotReceived> {
        let bound = self.bound(within);
        receive(&mut self.terminations, bound).await
    }

    /// Expect that `target`, watched with [`watch`](Self::watch), stops within
    /// `within`.
    ///
    /// # Panics
    ///
    /// If it does not stop in time, or another watched actor's end comes first.
    pub async fn expect_terminated<Q: Message>(&mut self, target: &ActorRef<Q>, within: Duration) {
        let started = Instant::now();
        let expected = format!("Terminated({target}) within {within:?}");
        let got = self.next_termination(within).await;
        match got {
            Ok(actor) if actor == *target => {}
            Ok(other) => panic!(
                "{}: expected {expected}, but Terminated({other}) arrived after {:?}",
                self.actor.path(),
                started.elapsed()
            ),
            Err(got) => self.fail(&expected, got),
        }
    }
    /// Wait `within` and check that no watched actor's end arrives: for example
    /// that a restart is not an end.
    ///
    /// # Panics
    ///
    /// If one does (the message says which, and when), or if the probe's system
    /// terminates.
    pub async fn expect_no_termination(&mut self, within: Duration) {
        let started = Instant::now();
        let got = self.next_termination(within).await;
        let expected = format!("no Terminated for {within:?}");
        self.expect_silence(&expected, started, got, |actor| {
            format!("Terminated({actor})")
        });
    }
}

/// The next item on `channel` within `bound` (a bound of zero looks once); `Err`
/// says how long it waited and whether the channel's sender, the probe's actor, is
/// gone.
async fn receive<T>(channel: &mut UnboundedReceiver<T>, bound: Duration) -> Result<T, NotReceived> {
    let started = Instant::now();
    match channel.try_recv() {
        Ok(item) => Ok(item),
        Err(TryRecvError::Disconnected) => Err(NotReceived::Stopped(Duration::ZERO)),
        Err(TryRecvError::Empty) if bound.is_zero() => Err(NotReceived::Timeout(Duration::ZERO)),
        Err(TryRecvError::Empty) => match tokio::time::timeout(bound, channel.recv()).await {
            Ok(Some(item)) => Ok(item),
            Ok(None) => Err(NotReceived::Stopped(started.elapsed())),
            Err(_) => Err(NotReceived::Timeout(started.elapsed())),
        },
    }
}

enum NotReceived {
    Timeout(Duration),
    Stopped(Duration),
}

impl NotReceived {
    /// The same outcome, reported after `waited` in all.
    fn after(self, waited: Duration) -> Self {
        match self {
            Self::Timeout(_) => Self::Timeout(waited),
            Self::Stopped(_) => Self::Stopped(waited),
        }
    }
}

impl<M: Message> fmt::Debug for TestProbe<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestProbe")
            .field("actor", &self.actor)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}
