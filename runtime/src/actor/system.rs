//! The actor system's handle and its shared state: guardians, spawning, uids, the
//! event stream, dead letters. The builder, termination and the system's errors are
//! `system/`'s, the composition root; the remote state is `net/remote/`'s (`Links`),
//! held here as a [`RemoteState`] the core never looks into.
//!
//! Layer: actor. Imports ground, the mailbox and the actor.
//!
//!
//! A system runs on the tokio runtime it is built in: every actor is a task spawned
//! on that runtime, whether it is multi-threaded or current-thread. On a
//! current-thread runtime all actors share the thread that drives the runtime and
//! make progress only while it is driven (inside `block_on`, or while a
//! `#[tokio::main]` body awaits).

use std::fmt;

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::actor::behavior::{Behavior, Behaviors, IntoBehavior};
use crate::actor::effects::Effects;
use crate::actor::spawn::{self, ChildName};
use crate::actor::{
    ActorPath, ActorRef, Address, AnonymousName, AnyActorRef, AnyCell, CellCore, Parent,
};
use crate::ground::codec::WireLimits;
use crate::ground::error::{NotTopLevel, SpawnError};
use crate::ground::events::{DeadLetter, DeadLetterReason, EventStream};
use crate::ground::failure::Failure;
use crate::ground::message::{Message, Payload};
#[cfg(feature = "testkit")]
use crate::mailbox::LeakCounts;
use crate::mailbox::{MailboxConfig, Pending};
use std::time::Duration;

/// The settings of an actor system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub(crate) name: String,
    pub(crate) shutdown_timeout: Duration,
    #[cfg(feature = "testkit")]
    pub(crate) track_leaks: bool,
    pub(crate) wire_limits: WireLimits,
}

impl Settings {
    /// How long `terminate()` lets the whole tree take before it cancels what is left.
    pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

    /// Whether a system counts pending asks and running timers unless told: in debug
    /// builds (`debug_assertions`) it does, in release builds it does not. Only
    /// with the `testkit` feature.
    #[cfg(feature = "testkit")]
    pub const DEFAULT_TRACK_LEAKS: bool = cfg!(debug_assertions);

    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            shutdown_timeout: Self::DEFAULT_SHUTDOWN_TIMEOUT,
            #[cfg(feature = "testkit")]
            track_leaks: Self::DEFAULT_TRACK_LEAKS,
            wire_limits: WireLimits::DEFAULT,
        }
    }

    /// What frames from a peer are held to.
    pub fn wire_limits(&self) -> &WireLimits {
        &self.wire_limits
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The deadline the whole tree races when the system terminates.
    pub fn shutdown_timeout(&self) -> Duration {
        self.shutdown_timeout
    }

    /// Whether the system counts its pending asks and running timers, for the
    /// testkit's [`LeakReport`](crate::testkit::LeakReport); see
    /// [`ActorSystemBuilder::track_leaks`](crate::ActorSystemBuilder::track_leaks). Only
    /// with the `testkit` feature.
    #[cfg(feature = "testkit")]
    pub fn tracks_leaks(&self) -> bool {
        self.track_leaks
    }
}

/// An actor the shutdown deadline cancelled.
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
#[derive(Debug, Clone)]
pub(crate) struct Cancelled {
    pub(crate) path: ActorPath,
    /// Whether it was awaiting a handler, rather than waiting for others to stop.
    pub(crate) in_handler: bool,
}

/// An actor system: the root of a tree of actors, with a `/user` guardian above
/// everything spawned with [`ActorSystem::spawn`] and a `/system` guardian above the
/// runtime's own actors.
///
/// Cloning gives another handle to the same system.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = ActorSystem::new("hello")?;
/// let (done, finished) = tokio::sync::oneshot::channel();
/// let done = std::sync::Mutex::new(Some(done));
/// let greeter = system.spawn(
///     Behaviors::receive_message(move |whom: String| {
///         if let Some(done) = done.lock().unwrap().take() {
///             let _ = done.send(format!("hello, {whom}!"));
///         }
///     }),
///     "greeter",
/// )?;
/// greeter.tell(String::from("world"));
/// assert_eq!(finished.await?, "hello, world!");
/// system.terminate().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ActorSystem {
    pub(crate) shared: Arc<SystemShared>,
}

pub(crate) struct SystemShared {
    pub(crate) settings: Settings,
    pub(crate) address: Address,
    /// `None` for the system of a `BehaviorTestKit`, which runs no tasks (only with
    /// the `testkit` feature).
    pub(crate) runtime: Option<Handle>,
    pub(crate) events: EventStream,
    pub(crate) next_uid: AtomicU64,
    /// The first uid this system handed out: anonymous names count from it.
    pub(crate) first_uid: u64,
    pub(crate) live_cells: AtomicUsize,
    /// Pending asks and running timers, counted only when the settings say to
    /// track leaks.
    #[cfg(feature = "testkit")]
    leaks: Arc<LeakCounts>,
    pub(crate) terminating: AtomicBool,
    /// Whether tracing was asked once to look at its callsites again, for a span
    /// that came out disabled under a scoped subscriber (see `refresh_tracing`).
    pub(crate) tracing_refreshed: AtomicBool,
    pub(crate) guardians: Mutex<Option<Guardians>>,
    /// Bit 0: the user guardian has stopped; bit 1: the system guardian has.
    pub(crate) guardians_stopped: watch::Sender<u8>,
    pub(crate) outcome: watch::Sender<Option<Result<(), Failure>>>,
    /// Actors cancelled at the shutdown deadline, for the testkit's leak report.
    #[cfg(feature = "testkit")]
    pub(crate) cancelled: Mutex<Vec<Cancelled>>,
    /// The first failure escalated to a guardian: what `when_terminated` returns.
    pub(crate) escalated: Mutex<Option<Failure>>,
    /// `/system/promises`, the parent path of every ask's promise.
    pub(crate) promises: std::sync::OnceLock<ActorPath>,
    /// What the system keeps for links with other systems (the registry, the
    /// transport, exported promises, cached routes): made and read by the network
    /// layer (`net/remote/links.rs`) alone; the core only holds it.
    pub(crate) remote: RemoteState,
    /// How this system terminates (stopping its tree within the shutdown timeout,
    /// then telling peers and letting go of its links): the composition root's
    /// procedure, called once an escalation reaches a guardian.
    terminate: fn(&Arc<SystemShared>),
}

/// What the layers above the actor give a system they build: its remote state and
/// how it terminates. The core holds both and looks into neither.
pub(crate) struct Outer {
    /// The state of its links with other systems (see [`RemoteState`]).
    pub(crate) remote: RemoteState,
    /// Begin terminating the system, once (the composition root's procedure).
    pub(crate) terminate: fn(&Arc<SystemShared>),
}

/// The state of a system's links with other systems, as the core holds it: owned
/// by the layer that links systems, which made it and alone reads it back (by its
/// type), so the core names nothing of the network.
pub(crate) type RemoteState = Box<dyn std::any::Any + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Guardians {
    pub(crate) user: AnyActorRef,
    pub(crate) user_task: AbortHandle,
    pub(crate) system: AnyActorRef,
    pub(crate) system_task: AbortHandle,
}

/// The protocol of the guardians: they take no messages.
#[derive(Debug)]
pub(crate) enum GuardianMsg {}

impl Message for GuardianMsg {
    type ReplySlot = crate::NoReply;
}

pub(crate) const USER_STOPPED: u8 = 1;
pub(crate) const SYSTEM_STOPPED: u8 = 2;

impl ActorSystem {
    pub(crate) fn shared_for(
        settings: Settings,
        address: Address,
        outer: Outer,
        runtime: Option<Handle>,
    ) -> Arc<SystemShared> {
        let first_uid = random_seed() >> 16;
        Arc::new(SystemShared {
            address,
            settings,
            runtime,
            events: EventStream::default(),
            next_uid: AtomicU64::new(first_uid),
            first_uid,
            live_cells: AtomicUsize::new(0),
            #[cfg(feature = "testkit")]
            leaks: Arc::default(),
            terminating: AtomicBool::new(false),
            tracing_refreshed: AtomicBool::new(false),
            guardians: Mutex::new(None),
            guardians_stopped: watch::Sender::new(0),
            outcome: watch::Sender::new(None),
            #[cfg(feature = "testkit")]
            cancelled: Mutex::new(Vec::new()),
            escalated: Mutex::new(None),
            promises: std::sync::OnceLock::new(),
            remote: outer.remote,
            terminate: outer.terminate,
        })
    }

    /// The system of a `BehaviorTestKit`: no runtime, no guardians, no tasks; its
    /// links link nothing.
    #[cfg(feature = "testkit")]
    pub(crate) fn detached(name: &str, outer: Outer) -> Self {
        Self {
            shared: Self::shared_for(Settings::new(name), Address::local(name), outer, None),
        }
    }

    pub(crate) fn start(
        settings: Settings,
        address: Address,
        outer: Outer,
        runtime: Handle,
    ) -> Self {
        let shared = Self::shared_for(settings, address, outer, Some(runtime));
        let root = ActorPath::root(shared.address.clone());
        let guardian = |name: &str| {
            let core = CellCore::new(
                Some(root.child(name)),
                shared.next_uid(),
                shared.clone(),
                Parent::System,
            );
            let (cell, task) = spawn::start_cell(core, Behaviors::ignore::<GuardianMsg>())?;
            Some((AnyActorRef::from_cell(cell as Arc<dyn AnyCell>), task))
        };
        // The runtime was just found, so the guardians can always be started.
        if let (Some((user, user_task)), Some((system, system_task))) =
            (guardian("user"), guardian("system"))
        {
            *shared.guardians() = Some(Guardians {
                user,
                user_task,
                system,
                system_task,
            });
        }
        Self { shared }
    }

    pub(crate) fn from_shared(shared: Arc<SystemShared>) -> Self {
        Self { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<SystemShared> {
        &self.shared
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// The system's address, which every ref's URI starts with.
    pub fn address(&self) -> &Address {
        &self.shared.address
    }

    /// The settings the system was built with.
    pub fn settings(&self) -> &Settings {
        &self.shared.settings
    }

    /// The event stream, where dead letters and system events are published.
    pub fn events(&self) -> &EventStream {
        &self.shared.events
    }

    /// Spawn a top-level actor named `name` under `/user`.
    ///
    /// The name becomes one segment of the actor's URI, so it must stand there as it
    /// is: 1 to [`ActorPath::MAX_NAME_LEN`](crate::ActorPath::MAX_NAME_LEN) bytes of
    /// ASCII letters, digits and `-_.*+:@&=,!~;'$`, neither `.` nor `..`, and not
    /// starting with `$` (reserved for generated names; see
    /// [`spawn_anonymous`](Self::spawn_anonymous)). It must be unique among the live
    /// actors under `/user`.
    ///
    /// # Errors
    ///
    /// [`SpawnError::InvalidName`] and [`SpawnError::NameTaken`] for the name,
    /// [`SpawnError::SystemTerminated`] once the system is terminating,
    /// [`SpawnError::RuntimeShutDown`] once its tokio runtime has shut down. Nothing
    /// is spawned when an error is returned.
    pub fn spawn<P, B>(&self, behavior: B, name: &str) -> Result<ActorRef<P>, SpawnError>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        self.spawn_with(behavior, name, MailboxConfig::unbounded())
    }

    /// [`spawn`](Self::spawn) a top-level actor whose mailbox is built as `mailbox`
    /// says: bounded, with an overflow strategy, for example.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn).
    pub fn spawn_with<P, B>(
        &self,
        behavior: B,
        name: &str,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<P>, SpawnError>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        self.spawn_top_level(behavior.into_behavior(), ChildName::Given(name), mailbox)
    }

    /// Spawn a top-level actor under `/user` with a name picked for it.
    ///
    /// # Errors
    ///
    /// [`SpawnError::SystemTerminated`] once the system is terminating.
    pub fn spawn_anonymous<P, B>(&self, behavior: B) -> Result<ActorRef<P>, SpawnError>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        self.spawn_anonymous_with(behavior, MailboxConfig::unbounded())
    }

    /// [`spawn_anonymous`](Self::spawn_anonymous) with a mailbox built as `mailbox`
    /// says.
    ///
    /// # Errors
    ///
    /// As [`spawn_anonymous`](Self::spawn_anonymous).
    pub fn spawn_anonymous_with<P, B>(
        &self,
        behavior: B,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<P>, SpawnError>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        self.spawn_top_level(behavior.into_behavior(), ChildName::Anonymous, mailbox)
    }

    /// Spawn `behavior` under `/user`.
    fn spawn_top_level<P: Message>(
        &self,
        behavior: Behavior<P>,
        name: ChildName<'_>,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<P>, SpawnError> {
        let guardian = self
            .shared
            .guardian(|g| g.user.clone())
            .ok_or_else(|| self.terminated())?;
        spawn::spawn_child(&guardian, behavior, name, mailbox, Effects::LIVE)
    }

    /// Stop a top-level actor (one spawned with [`spawn`](Self::spawn) or
    /// [`spawn_anonymous`](Self::spawn_anonymous)) from outside the tree. It stops
    /// as if its parent had stopped it: its children first, then its `PostStop`; an
    /// `async` handler it awaits is interrupted. Takes a typed or an untyped ref.
    /// Stopping one that has stopped already does nothing.
    ///
    /// # Errors
    ///
    /// [`NotTopLevel`] for an actor that is not a child of this system's `/user`
    /// (a deeper actor, a probe, or an actor of another system).
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("stopping")?;
    /// let worker = system.spawn(Behaviors::ignore::<u64>(), "worker")?;
    /// system.stop(&worker)?;
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn stop(&self, actor: impl Into<AnyActorRef>) -> Result<(), NotTopLevel> {
        let actor = actor.into().unnarrowed();
        let refused = || NotTopLevel {
            target: actor.path().clone(),
            system: self.name().to_owned(),
        };
        let Some(core) = actor.local() else {
            return Err(refused());
        };
        let ours = Arc::ptr_eq(core.system(), &self.shared);
        // Its parent is `/user`: named "user", one level below the root.
        let top_level = matches!(core.parent(), Parent::Cell(parent)
            if parent.path().name() == "user"
                && parent.path().parent().is_some_and(|root| root.parent().is_none()));
        if !ours || !top_level {
            return Err(refused());
        }
        // Refused by a closed lane: it has stopped already.
        actor.request_stop();
        Ok(())
    }

    /// Spawn one of the runtime's own actors under `/system` (a test probe).
    #[cfg(feature = "testkit")]
    pub(crate) fn spawn_system_actor<P, B>(
        &self,
        behavior: B,
        name: Option<&str>,
    ) -> Result<ActorRef<P>, SpawnError>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        let guardian = self.guardian(|g| g.system.clone())?;
        let name = match name {
            Some(name) => ChildName::Given(name),
            None => ChildName::Anonymous,
        };
        spawn::spawn_child(
            &guardian,
            behavior.into_behavior(),
            name,
            MailboxConfig::unbounded(),
            Effects::LIVE,
        )
    }

    /// The guardian to spawn under, unless the system has begun to terminate.
    #[cfg(feature = "testkit")]
    fn guardian(
        &self,
        pick: impl FnOnce(&Guardians) -> AnyActorRef,
    ) -> Result<AnyActorRef, SpawnError> {
        if self.is_terminating() {
            return Err(self.terminated());
        }
        self.shared.guardian(pick).ok_or_else(|| self.terminated())
    }

    fn terminated(&self) -> SpawnError {
        if self.shared.runtime.is_none() {
            return self.shared.no_runtime();
        }
        SpawnError::SystemTerminated {
            system: self.name().to_owned(),
        }
    }

    /// Whether termination has begun.
    pub fn is_terminating(&self) -> bool {
        self.shared.terminating.load(Ordering::Acquire)
    }

    /// How many actor tasks are running, the system's own included: its two
    /// guardians (`/user` and `/system`) and any actor under `/system` (a test
    /// probe, say). Zero once the system has terminated, unless a task was
    /// cancelled mid-handler and has not yet been dropped by the runtime. To count
    /// your own actors, compare with a reading taken before you spawned them:
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("census")?;
    /// let before = system.live_actors(); // the guardians
    /// let _worker = system.spawn(Behaviors::ignore::<u64>(), "worker")?;
    /// assert_eq!(system.live_actors(), before + 1);
    /// system.terminate().await;
    /// assert_eq!(system.live_actors(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn live_actors(&self) -> usize {
        self.shared.live_cells.load(Ordering::Acquire)
    }
}

impl fmt::Debug for ActorSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorSystem")
            .field("name", &self.name())
            .field("live_actors", &self.live_actors())
            .field("terminating", &self.is_terminating())
            .finish()
    }
}

impl SystemShared {
    /// What frames from a peer are held to.
    pub(crate) fn wire_limits(&self) -> crate::ground::codec::WireLimits {
        *self.settings.wire_limits()
    }

    /// The system's address.
    pub(crate) fn address(&self) -> &Address {
        &self.address
    }

    /// The path `/` of this system.
    pub(crate) fn root_path(&self) -> ActorPath {
        ActorPath::root(self.address.clone())
    }

    /// The guardian `user` or `system`, while the system runs.
    pub(crate) fn guardian_named(&self, name: &str) -> Option<AnyActorRef> {
        self.guardian(|guardians| match name {
            "user" => guardians.user.clone(),
            _ => guardians.system.clone(),
        })
    }

    pub(crate) fn name(&self) -> &str {
        self.settings.name()
    }

    pub(crate) fn runtime(&self) -> Option<&Handle> {
        self.runtime.as_ref()
    }

    /// Why nothing can be spawned on a system without a runtime: only a test kit's
    /// has none.
    pub(crate) fn no_runtime(&self) -> SpawnError {
        #[cfg(feature = "testkit")]
        return SpawnError::NoRuntime {
            system: self.name().to_owned(),
        };
        // Every system outside the testkit is built on a runtime, which may since
        // have shut down.
        #[cfg(not(feature = "testkit"))]
        SpawnError::RuntimeShutDown {
            system: self.name().to_owned(),
        }
    }

    /// The actors cancelled at the shutdown deadline.
    #[cfg(feature = "testkit")]
    pub(crate) fn cancelled_at_deadline(&self) -> Vec<Cancelled> {
        self.cancelled
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    pub(crate) fn next_uid(&self) -> u64 {
        self.next_uid.fetch_add(1, Ordering::Relaxed)
    }

    /// Every uid handed out from now on is at least this.
    pub(crate) fn uid_mark(&self) -> u64 {
        self.next_uid.load(Ordering::Relaxed)
    }

    /// Whether this system has handed out `uid`, to an actor or a promise.
    pub(crate) fn issued_uid(&self, uid: u64) -> bool {
        (self.first_uid..self.uid_mark()).contains(&uid)
    }

    /// The name `spawn_anonymous` gives the actor with `uid`: unique because the uid
    /// is, short because it counts from this system's first uid.
    pub(crate) fn anonymous_name(&self, uid: u64) -> AnonymousName {
        AnonymousName::new(uid.wrapping_sub(self.first_uid))
    }

    /// The uid of the actor an anonymous name was made for, if `name` is one.
    pub(crate) fn anonymous_uid(&self, name: &str) -> Option<u64> {
        AnonymousName::parse(name).map(|n| n.wrapping_add(self.first_uid))
    }

    pub(crate) fn cell_started(&self) {
        self.live_cells.fetch_add(1, Ordering::AcqRel);
    }

    /// An actor has ended: it no longer counts as live.
    pub(crate) fn cell_ended(&self) {
        self.live_cells.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether pending asks and running timers are counted: a plain field, fixed
    /// when the system was built.
    #[cfg(feature = "testkit")]
    pub(crate) fn tracks_leaks(&self) -> bool {
        self.settings.tracks_leaks()
    }

    /// Called only when [`tracks_leaks`](Self::tracks_leaks).
    #[cfg(feature = "testkit")]
    pub(crate) fn timer_started(&self) {
        self.leaks.timer_started();
    }

    #[cfg(feature = "testkit")]
    pub(crate) fn timer_stopped(&self) {
        self.leaks.timer_stopped();
    }

    pub(crate) fn promises_path(&self) -> &ActorPath {
        self.promises.get_or_init(|| {
            ActorPath::root(self.address.clone())
                .child("system")
                .child("promises")
        })
    }

    /// A new ask's place in the count of pending asks: counted when the system
    /// tracks leaks (only with the `testkit` feature), empty otherwise.
    pub(crate) fn pending_promise(&self) -> Pending {
        #[cfg(feature = "testkit")]
        if self.tracks_leaks() {
            return Pending::promise(&self.leaks);
        }
        Pending::default()
    }

    /// The asks still waiting for their answer; `None` if the system does not count
    /// them.
    #[cfg(feature = "testkit")]
    pub(crate) fn live_promises(&self) -> Option<usize> {
        self.tracks_leaks().then(|| self.leaks.promises())
    }

    /// The timers still running; `None` if the system does not count them.
    #[cfg(feature = "testkit")]
    pub(crate) fn live_timers(&self) -> Option<usize> {
        self.tracks_leaks().then(|| self.leaks.timers())
    }

    /// An actor's span came out disabled though this thread has a subscriber: ask
    /// tracing to look at its callsites again, once a system. Says whether it did.
    ///
    /// tracing-core 0.1 keeps each callsite's interest from the first time any
    /// thread reaches it, and while exactly one subscriber exists it asks the
    /// subscriber of the thread that got there first: with the one subscriber set
    /// for another thread (`set_default`), a thread with none (another test, say)
    /// caches "never" for everyone, and actors spawned under that subscriber
    /// would log without their path (S8; tokio-rs/tracing#3611). A subscriber that
    /// does not want the span costs one needless look a system.
    pub(crate) fn refresh_tracing(&self) -> bool {
        if !tracing::dispatcher::get_default(|d| !d.is::<tracing::subscriber::NoSubscriber>())
            || self.tracing_refreshed.swap(true, Ordering::Relaxed)
        {
            return false;
        }
        tracing::callsite::rebuild_interest_cache();
        true
    }

    pub(crate) fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::Acquire)
    }

    pub(crate) fn guardians(&self) -> MutexGuard<'_, Option<Guardians>> {
        // Only plain assignments happen under this lock.
        self.guardians
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn guardian(&self, pick: impl FnOnce(&Guardians) -> AnyActorRef) -> Option<AnyActorRef> {
        self.guardians().as_ref().map(pick)
    }

    /// Publish a dead letter. With no dead-letter subscriber and debug logging off,
    /// the message is dropped here: no letter is built, no lock taken.
    pub(crate) fn dead_letter<M: Message>(
        &self,
        message: M,
        recipient: &ActorPath,
        reason: DeadLetterReason,
    ) {
        self.publish_dead_letter(|| {
            DeadLetter::new(message.into_payload(), recipient.clone(), reason)
        });
    }

    /// Publish a dead letter for a message already type-erased.
    pub(crate) fn dead_letter_of_payload(
        &self,
        message: Payload,
        recipient: &ActorPath,
        reason: DeadLetterReason,
    ) {
        self.publish_dead_letter(|| DeadLetter::new(message, recipient.clone(), reason));
    }

    /// Publish a dead letter for a message whose value is gone.
    pub(crate) fn dead_letter_of_type(
        &self,
        message_type: &'static str,
        recipient: &ActorPath,
        reason: DeadLetterReason,
    ) {
        self.publish_dead_letter(|| {
            DeadLetter::without_value(message_type, recipient.clone(), reason)
        });
    }

    /// Build, log and publish a dead letter, when anyone would see it.
    fn publish_dead_letter(&self, letter: impl FnOnce() -> DeadLetter) {
        if self.dead_letters_wanted() {
            let letter = letter();
            tracing::debug!(%letter, "dead letter");
            self.events.publish(letter);
        }
    }

    /// Whether anyone would see a dead letter: a subscriber, or the debug log. One
    /// atomic load, then tracing's cached level check.
    fn dead_letters_wanted(&self) -> bool {
        self.events.subscriber_count::<DeadLetter>() > 0 || tracing::enabled!(tracing::Level::DEBUG)
    }

    /// A guardian has finished stopping.
    pub(crate) fn guardian_stopped(&self, guardian: &ActorPath) {
        let bit = if guardian.name() == "user" {
            USER_STOPPED
        } else {
            SYSTEM_STOPPED
        };
        self.guardians_stopped
            .send_modify(|stopped| *stopped |= bit);
    }

    /// A failure was escalated to a guardian: nobody took responsibility for it. The
    /// first such failure is what the system terminates with, also when it arrives
    /// while the system is already terminating.
    pub(crate) fn escalated_to_guardian(self: &Arc<Self>, failure: Failure) {
        tracing::error!(error = %failure, climbed = ?failure.climbed(), "an escalation reached a guardian; terminating the system");
        self.escalated
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get_or_insert(failure);
        (self.terminate)(self);
    }

    /// The outcome `when_terminated` reports.
    pub(crate) fn outcome_now(&self) -> Result<(), Failure> {
        match self
            .escalated
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
        {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}

fn random_seed() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(std::process::id() as usize);
    hasher.finish()
}
