//! The context a handler gets: the actor's own ref, its children, its watches.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::actor::ActorSystem;
use crate::actor::adapter::{self, Adapters};
use crate::actor::behavior::IntoBehavior;
use crate::actor::blocking::{self, Blocking};
use crate::actor::effects::Effects;
use crate::actor::spawn::{self, ChildName};
use crate::actor::stash::{StashBuffer, StashHandle};
use crate::actor::timer::TimerScheduler;
use crate::actor::{ActorPath, ActorRef, AnyActorRef};
use crate::ground::error::{NotAChild, SpawnError};
use crate::ground::failure::Failure;
use crate::ground::message::{Accepts, Message, Protocol};
use crate::mailbox::MailboxConfig;

/// `Ctx<T>` is the context of an actor whose protocol is `T`'s: write `&mut Ctx<Self>`
/// in an `#[actor]` block, or `&mut Ctx<MyMessage>` in a functional behavior.
pub type Ctx<T> = ActorContext<<T as Protocol>::Msg>;

/// What a handler can do besides answering: reach itself, spawn and stop children,
/// watch other actors, and log.
///
/// Every record a handler logs through `tracing` carries the actor's path, because
/// the cell runs each handler inside the actor's span ([`ActorContext::log`]). The
/// span has the target `tapio::actor` and the level `ERROR`: a subscriber that filters
/// by target must let `tapio::actor` through (at any level) to keep it, for example
/// `RUST_LOG=my_app=debug,tapio::actor=error`.
pub struct ActorContext<P: Message> {
    self_ref: ActorRef<P>,
    extra: Option<Box<Extra<P>>>,
}

/// What most contexts never need, allocated on first use.
struct Extra<P: Message> {
    /// The watches, by the actor whose stop ends them (an adapter's owner, for an
    /// adapter).
    watching: HashMap<AnyActorRef, Watch<P>>,
    /// Where the capabilities take effect; live unless the context was built with
    /// other effects (see `ActorContext::with_effects`).
    effects: Effects,
    /// The cell's timers, once one was asked for.
    timers: Option<TimerScheduler<P>>,
    /// The translations of the actor's message adapters, by foreign type.
    adapters: Adapters,
    /// The stashes `with_stash` made for this actor, lettered at its stop.
    stashes: Vec<StashHandle<P>>,
}

/// What a watch delivers when the actor it watches stops.
pub(crate) struct Watch<P> {
    /// The ref [`Terminated`](crate::Terminated) names: the one watched, which is
    /// an adapter's when an adapter was watched through its owner (S51).
    pub(crate) named: AnyActorRef,
    /// The message [`ActorContext::watch_with`] queues in place of `Terminated`.
    pub(crate) message: Option<P>,
}

impl<P: Message> Default for Extra<P> {
    fn default() -> Self {
        Self {
            watching: HashMap::new(),
            effects: Effects::Live,
            timers: None,
            adapters: Adapters::default(),
            stashes: Vec::new(),
        }
    }
}

impl<P: Message> ActorContext<P> {
    /// The context of a running actor: its capabilities take effect live.
    pub(crate) fn new(self_ref: ActorRef<P>) -> Self {
        Self {
            self_ref,
            extra: None,
        }
    }

    /// A context whose capabilities take effect through `effects` (a test kit's
    /// context records them).
    #[cfg(feature = "testkit")]
    pub(crate) fn with_effects(self_ref: ActorRef<P>, effects: Effects) -> Self {
        let extra = match effects {
            // A live context allocates nothing until it needs to.
            Effects::Live => None,
            effects => Some(Box::new(Extra {
                effects,
                ..Extra::default()
            })),
        };
        Self { self_ref, extra }
    }

    fn extra(&mut self) -> &mut Extra<P> {
        self.extra.get_or_insert_with(Default::default)
    }

    /// The seam every capability goes through.
    fn effects(&self) -> &Effects {
        self.extra
            .as_ref()
            .map_or(Effects::LIVE, |extra| &extra.effects)
    }

    /// This actor's own ref, to hand out in messages.
    pub fn self_ref(&self) -> &ActorRef<P> {
        &self.self_ref
    }

    /// This actor's path.
    pub fn path(&self) -> &ActorPath {
        self.self_ref.path()
    }

    /// The system this actor runs in.
    pub fn system(&self) -> &ActorSystem {
        self.self_ref.core().system_handle()
    }

    /// The actor's tracing span, which carries its path. Handlers run inside it, so
    /// `tracing::info!(..)` in a handler is already tagged; use the span to tag work
    /// the handler hands elsewhere, for example with `tracing::Instrument`.
    ///
    /// The span is made when the actor is spawned, and only if a subscriber wants it
    /// then: install the subscriber before spawning actors (as at the top of `main`),
    /// or the actor's records go untagged for its whole life.
    pub fn log(&self) -> tracing::Span {
        tracing::Span::current()
    }

    /// The actor's timers: start, replace and cancel messages it sends itself later.
    /// They belong to the actor's cell: a restart or a stop cancels all of them.
    pub fn timers(&mut self) -> TimerScheduler<P> {
        if let Some(timers) = self.extra.as_ref().and_then(|extra| extra.timers.as_ref()) {
            return timers.clone();
        }
        let timers = self.effects().timers(&self.self_ref);
        self.extra().timers = Some(timers.clone());
        timers
    }

    /// Run `call`, a function that blocks its thread, on tokio's blocking pool, and
    /// return a future of its result for an `async` handler to await: the actor waits
    /// for the call, and every other actor keeps running meanwhile (S33).
    ///
    /// Made directly in a handler, a blocking call holds the thread the handler runs
    /// on, and with it every actor waiting for that thread: on a current-thread
    /// runtime, the whole system. Through `run_blocking` it holds a thread of the
    /// blocking pool instead, which tokio keeps for this (on current-thread runtimes
    /// too). The call runs inside the actor's tracing span, so what it logs carries
    /// the actor's path.
    ///
    /// While the handler awaits the call, the actor handles no other message, but a
    /// stop still interrupts it: the handler's future is dropped where it awaits, the
    /// actor stops and sees `PostStop`, and the call's result is thrown away when it
    /// comes (see "Cancel safety of handlers" in the crate docs).
    ///
    /// The call starts now, not when the future is first polled. The future borrows
    /// nothing, so the handler can go on using the context before awaiting it. A
    /// synchronous handler has nothing to await it with: use an `async` one
    /// ([`Behaviors::receive_async`](crate::Behaviors::receive_async), or an `async
    /// fn` in an `#[actor]` block).
    ///
    /// # Errors
    ///
    /// The future resolves to a [`Failure`](crate::Failure), which `?` in the handler
    /// turns into the actor's failure, for its supervision to decide on:
    ///
    /// - [`Panicked`](crate::Panicked) if `call` panicked, as if the handler had;
    /// - [`BlockingError::NoRuntime`] if there is no tokio runtime to run it on (a
    ///   `testkit::BehaviorTestKit` used outside one);
    /// - [`BlockingError::RuntimeShutDown`] if the runtime shut down before the call
    ///   ran.
    ///
    /// # Cancel safety
    ///
    /// A call cannot be stopped from outside: dropping the future lets it run to its
    /// end and discards its result. A call that never returns keeps its pool thread,
    /// and holds up dropping the runtime (tokio waits for running blocking calls;
    /// `Runtime::shutdown_timeout` does not). Give a call that may hang a bound of
    /// its own, such as a timeout on its socket.
    ///
    /// # Examples
    ///
    /// A synchronous read in an `async` handler; the reader still answers a stop, and
    /// other actors keep running, while it waits for the disk:
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use tapio::prelude::*;
    /// use tapio::BoxError;
    ///
    /// #[message]
    /// pub struct Read {
    ///     pub path: PathBuf,
    ///     pub reply_to: ActorRef<usize>,
    /// }
    ///
    /// fn reader() -> Behavior<Read> {
    ///     Behaviors::receive_async(async move |ctx, read: Read| -> Result<_, BoxError> {
    ///         let path = read.path;
    ///         // `?` twice: once for a panic in the call, once for the read's own error.
    ///         let text = ctx.run_blocking(move || std::fs::read_to_string(path)).await??;
    ///         read.reply_to.tell(text.len());
    ///         Ok(Behaviors::same())
    ///     })
    ///     .into()
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("files")?;
    /// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let sizes = system.spawn(
    ///     Behaviors::receive_message(move |n: usize| { let _ = tx.send(n); }),
    ///     "sizes",
    /// )?;
    /// let path = std::env::temp_dir().join("tapio-run-blocking-doc.txt");
    /// std::fs::write(&path, "twelve bytes")?;
    /// let reader = system.spawn(reader(), "reader")?;
    /// reader.tell(Read { path, reply_to: sizes });
    /// assert_eq!(rx.recv().await, Some(12));
    /// system.terminate().await;
    /// # std::fs::remove_file(std::env::temp_dir().join("tapio-run-blocking-doc.txt"))?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`BlockingError::NoRuntime`]: crate::BlockingError::NoRuntime
    /// [`BlockingError::RuntimeShutDown`]: crate::BlockingError::RuntimeShutDown
    pub fn run_blocking<F, T>(&self, call: F) -> Blocking<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        blocking::start(self.self_ref.core().system().runtime(), call)
    }

    /// The message of a tick of timer `id`, if that timer still runs.
    pub(crate) fn fire_timer(&mut self, id: u64) -> Option<P> {
        self.extra.as_ref()?.timers.as_ref()?.fire(id)
    }

    /// Cancel every timer (on restart and on stop).
    pub(crate) fn cancel_timers(&mut self) {
        if let Some(timers) = self.extra.as_ref().and_then(|extra| extra.timers.as_ref()) {
            timers.cancel_all();
        }
    }

    /// Spawn a child named `name`, unique among this actor's live children.
    ///
    /// The name becomes one segment of the child's URI, so it must stand there as it
    /// is: 1 to [`ActorPath::MAX_NAME_LEN`](crate::ActorPath::MAX_NAME_LEN) bytes of
    /// ASCII letters, digits and `-_.*+:@&=,!~;'$`, neither `.` nor `..`, and not
    /// starting with `$` (reserved for generated names; see
    /// [`spawn_anonymous`](Self::spawn_anonymous)).
    ///
    /// # Errors
    ///
    /// [`SpawnError::InvalidName`] or [`SpawnError::NameTaken`] for the name, and
    /// [`SpawnError::ParentStopping`] once this actor has begun to stop. Nothing is
    /// spawned when an error is returned.
    pub fn spawn<Q, B>(&mut self, behavior: B, name: &str) -> Result<ActorRef<Q>, SpawnError>
    where
        Q: Message,
        B: IntoBehavior<Q>,
    {
        self.spawn_with(behavior, name, MailboxConfig::unbounded())
    }

    /// [`spawn`](Self::spawn) a child whose mailbox is built as `mailbox` says:
    /// bounded, with an overflow strategy, for example.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn).
    pub fn spawn_with<Q, B>(
        &mut self,
        behavior: B,
        name: &str,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<Q>, SpawnError>
    where
        Q: Message,
        B: IntoBehavior<Q>,
    {
        self.spawn_child(behavior.into_behavior(), ChildName::Given(name), mailbox)
    }

    /// Spawn a child with a name picked for it: `$` followed by letters, digits, `+`
    /// or `~`, never reused in the system (a `BehaviorTestKit` picks `$a`, `$b`, ...).
    /// Names starting with `$` are reserved: users cannot give them.
    ///
    /// # Errors
    ///
    /// [`SpawnError::ParentStopping`] once this actor has begun to stop.
    pub fn spawn_anonymous<Q, B>(&mut self, behavior: B) -> Result<ActorRef<Q>, SpawnError>
    where
        Q: Message,
        B: IntoBehavior<Q>,
    {
        self.spawn_anonymous_with(behavior, MailboxConfig::unbounded())
    }

    /// [`spawn_anonymous`](Self::spawn_anonymous) a child whose mailbox is built as
    /// `mailbox` says.
    ///
    /// # Errors
    ///
    /// As [`spawn_anonymous`](Self::spawn_anonymous).
    pub fn spawn_anonymous_with<Q, B>(
        &mut self,
        behavior: B,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<Q>, SpawnError>
    where
        Q: Message,
        B: IntoBehavior<Q>,
    {
        self.spawn_child(behavior.into_behavior(), ChildName::Anonymous, mailbox)
    }

    fn spawn_child<Q: Message>(
        &mut self,
        behavior: crate::Behavior<Q>,
        name: ChildName<'_>,
        mailbox: MailboxConfig,
    ) -> Result<ActorRef<Q>, SpawnError> {
        let parent = self.self_ref.erase();
        spawn::spawn_child(&parent, behavior, name, mailbox, self.effects())
    }

    /// Stop a child. It stops its own children first, sees `PostStop`, and then its
    /// name is free again; an `async` handler it awaits is interrupted. Takes a typed
    /// ref, or an untyped one as [`child`](Self::child) and
    /// [`children`](Self::children) return. To stop this actor itself, return
    /// [`Behaviors::stopped`](crate::Behaviors::stopped).
    ///
    /// # Errors
    ///
    /// [`NotAChild`] if `child` is not a live child of this actor.
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// // A parent that stops the child it finds by name.
    /// let parent: Behavior<String> = Behaviors::setup(|ctx| {
    ///     ctx.spawn(Behaviors::ignore::<u64>(), "worker").ok();
    ///     Behaviors::receive(|ctx, name: String| {
    ///         if let Some(child) = ctx.child(&name) {
    ///             ctx.stop(&child)?;
    ///         }
    ///         Ok::<_, tapio::NotAChild>(())
    ///     })
    /// });
    /// # let _ = parent;
    /// ```
    pub fn stop(&mut self, child: impl Into<AnyActorRef>) -> Result<(), NotAChild> {
        let child = child.into().unnarrowed();
        let core = self.self_ref.core();
        let is_child = core
            .children()
            .by_uid(child.uid())
            .is_some_and(|listed| listed.same_cell(&child));
        if !is_child {
            return Err(NotAChild {
                target: child.path().clone(),
                caller: self.path().clone(),
            });
        }
        // A child that has already stopped has nothing left to stop.
        self.effects().stop_child(core, &child);
        Ok(())
    }

    /// Whether a child could be spawned under `name` now: a valid name that no
    /// child holds. For a spawn whose behavior is costly or has effects to build
    /// (a remote spawn's factory), checked before it is built; the spawn checks
    /// again.
    pub(crate) fn check_child_name(&self, name: &str) -> Result<(), SpawnError> {
        crate::ground::path::validate_name(name)?;
        let core = self.self_ref.core();
        if core.children().has_named(name) {
            return Err(SpawnError::NameTaken {
                name: name.to_owned(),
                parent: core.path().clone(),
            });
        }
        Ok(())
    }

    /// The live children of this actor.
    pub fn children(&mut self) -> Vec<AnyActorRef> {
        self.self_ref.core().children().refs()
    }

    /// The live child named `name`, if there is one.
    pub fn child(&mut self, name: &str) -> Option<AnyActorRef> {
        self.self_ref.core().child(name)
    }

    /// Be told, with [`Signal::Terminated`](crate::Signal::Terminated), when `target`
    /// stops: exactly once, and also if it had stopped before this call. Watching
    /// twice is watching once while the watch stands (the second call's form wins:
    /// `watch` after [`watch_with`](Self::watch_with) goes back to `Terminated`);
    /// once its `Terminated` has been delivered the watch is over, and watching again
    /// is a new watch, which hears `Terminated` again at once. Watching is not
    /// parenthood: the target's failures stay with its own supervisor. An actor that
    /// watches itself hears nothing: it is stopped when its own `Terminated` would
    /// come.
    ///
    /// `Terminated` is a signal: it travels on the system lane, ahead of the
    /// messages waiting in this actor's mailbox (S18). So it can overtake what
    /// `target` sent just before it stopped, a last reply included. When those
    /// messages matter (a query that collects replies, say), use
    /// [`watch_with`](Self::watch_with), whose message keeps the mailbox's order.
    ///
    /// A watcher whose signal handler leaves `Terminated` unhandled fails with
    /// [`DeathPact`](crate::DeathPact), as in Akka: by default that stops it, and a
    /// supervision clause `on_failure::<DeathPact>(...)` can decide otherwise.
    ///
    /// A message adapter stops with its owner, so watching an adapter watches its
    /// owner, and `Terminated` names the adapter's ref (S51). One watch stands per
    /// actor that stops: watching an adapter and its owner (or two adapters of
    /// one owner) is one watch, named by the last call.
    pub fn watch<Q: Message>(&mut self, target: &ActorRef<Q>) {
        self.watch_as(target.erase(), None);
    }

    /// Be told, with `message` on the user lane, when `target` stops (S50): the
    /// message arrives after every message `target` sent to this actor before it
    /// stopped, locally and across a link (one link keeps its order), in place of
    /// [`Signal::Terminated`](crate::Signal::Terminated). It is a message like any
    /// other, handled by the handler for its type, and is never refused by a bounded
    /// mailbox.
    ///
    /// Everything [`watch`](Self::watch) says holds: exactly once, also for a target
    /// that had stopped; watching again replaces the message (or, with `watch`,
    /// goes back to `Terminated`); [`unwatch`](Self::unwatch) cancels either. A
    /// restart drops every watch, as for `watch`.
    ///
    /// ```
    /// # #![allow(dead_code)]
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Reading(pub f64);
    ///
    /// #[message]
    /// pub struct Track(pub ActorRef<Reading>);
    ///
    /// #[message]
    /// pub struct DeviceGone(pub String);
    ///
    /// pub struct Group;
    ///
    /// #[actor]
    /// impl Group {
    ///     fn track(&mut self, ctx: &mut Ctx<Self>, Track(device): Track) {
    ///         // Arrives after any `Reading` the device sent here before it stopped.
    ///         ctx.watch_with(&device, DeviceGone(device.path().name().to_owned()));
    ///     }
    ///
    ///     fn reading(&mut self, _: Reading) {}
    ///
    ///     fn gone(&mut self, DeviceGone(name): DeviceGone) {
    ///         let _ = name;
    ///     }
    /// }
    /// ```
    pub fn watch_with<Q: Message, M: Message>(&mut self, target: &ActorRef<Q>, message: M)
    where
        P: Accepts<M>,
    {
        self.watch_as(target.erase(), Some(P::wrap(message)));
    }

    pub(crate) fn watch_any(&mut self, target: AnyActorRef) {
        self.watch_as(target, None);
    }

    /// Watch `named`, delivering `message` (or `Terminated` naming `named`) when it
    /// stops; an adapter is watched through its owner.
    fn watch_as(&mut self, named: AnyActorRef, message: Option<P>) {
        let me = self.self_ref.erase();
        let stops = named.ends_with();
        if stops == me {
            return;
        }
        let watch = Watch { named, message };
        if self.extra().watching.insert(stops.clone(), watch).is_none() {
            self.effects().watch(&me, &stops);
        }
    }

    /// A ref of the foreign protocol `F` whose messages reach this actor translated
    /// by `translate`, inside this actor, on its user lane, in order with its other
    /// messages: hand it to a service that speaks `F` (as the reply ref of a request,
    /// for example) without widening this actor's protocol (S28).
    ///
    /// A panic in `translate` is this actor's failure, under its supervision. The
    /// adapter stops with this actor: a message told to it after that is a dead
    /// letter naming the adapter. Registering another adapter for the same `F`
    /// replaces the translation for every adapter of `F` this actor handed out. A
    /// restart keeps the actor's adapters, as it keeps its ref: refs handed out
    /// before it go on translating with the function they were made with, until a
    /// setup that registers again for `F` replaces it. Watching an adapter watches
    /// this actor ([`watch`](Self::watch)); an adapter cannot be asked
    /// ([`AskError::Adapter`](crate::AskError::Adapter)).
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Token(pub String);
    ///
    /// #[message]
    /// pub enum Session {
    ///     Authenticated(String),
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("adapters")?;
    /// let (seen, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let (adapter_tx, mut adapter_rx) = tokio::sync::mpsc::unbounded_channel();
    /// let _session = system.spawn(
    ///     Behaviors::setup(move |ctx| {
    ///         let tokens: ActorRef<Token> =
    ///             ctx.message_adapter(|Token(value)| Session::Authenticated(value));
    ///         let _ = adapter_tx.send(tokens);
    ///         let seen = seen.clone();
    ///         Behaviors::receive_message(move |Session::Authenticated(token)| {
    ///             let _ = seen.send(token);
    ///         })
    ///     }),
    ///     "session",
    /// )?;
    /// let tokens = adapter_rx.recv().await.ok_or("no adapter")?;
    /// tokens.tell(Token("t-42".into()));
    /// assert_eq!(rx.recv().await.as_deref(), Some("t-42"));
    /// system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn message_adapter<F, M, T>(&mut self, translate: T) -> ActorRef<F>
    where
        F: Message,
        M: Message,
        P: Accepts<M>,
        T: Fn(F) -> M + Send + Sync + 'static,
    {
        self.try_message_adapter(move |foreign| {
            Ok::<_, std::convert::Infallible>(translate(foreign))
        })
    }

    /// [`message_adapter`](Self::message_adapter) with a translation that can fail:
    /// its error is this actor's failure, under its supervision.
    pub fn try_message_adapter<F, M, E, T>(&mut self, translate: T) -> ActorRef<F>
    where
        F: Message,
        M: Message,
        P: Accepts<M>,
        E: std::error::Error + Send + Sync + 'static,
        T: Fn(F) -> Result<M, E> + Send + Sync + 'static,
    {
        let translate: Arc<dyn Fn(F) -> Result<P, Failure> + Send + Sync> =
            Arc::new(move |foreign| translate(foreign).map(P::wrap).map_err(Failure::new));
        self.extra().adapters.register::<F, P>(translate);
        adapter::adapter(self.self_ref.own_cell())
    }

    /// A new, empty [`StashBuffer`] of `capacity` for this actor: what
    /// [`Behaviors::with_stash`](crate::Behaviors::with_stash) gives its factory, for
    /// a setup that needs the context too. What it holds becomes dead letters when
    /// the actor stops or restarts (a restart runs the setup again, which makes a
    /// new buffer).
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// // Holds numbers until a zero comes, then replays them to a child it spawned.
    /// let gate: Behavior<u64> = Behaviors::setup(|ctx: &mut ActorContext<u64>| {
    ///     let log = ctx.spawn(Behaviors::ignore::<u64>(), "log")?;
    ///     let stash = ctx.stash_buffer(100)?;
    ///     Ok::<_, tapio::BoxError>(Behaviors::receive_message(move |n: u64| {
    ///         if n == 0 {
    ///             let log = log.clone();
    ///             return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
    ///                 log.tell(n);
    ///             })));
    ///         }
    ///         stash.stash(n).map(|()| Behaviors::same())
    ///     }))
    /// });
    /// # let _ = gate;
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidStash::ZeroCapacity`](crate::InvalidStash::ZeroCapacity) for a
    /// capacity of 0.
    pub fn stash_buffer(&mut self, capacity: usize) -> Result<StashBuffer<P>, crate::InvalidStash> {
        let capacity =
            std::num::NonZeroUsize::new(capacity).ok_or(crate::InvalidStash::ZeroCapacity)?;
        let stash = StashBuffer::new(capacity, self.self_ref.clone());
        self.track_stash(&stash);
        Ok(stash)
    }

    /// Keep a handle on `stash`, so that what it holds is lettered when this actor
    /// stops, whoever else keeps a clone of it. Handles of buffers gone (replaced by
    /// a restart) are dropped here.
    pub(crate) fn track_stash(&mut self, stash: &StashBuffer<P>) {
        let stashes = &mut self.extra().stashes;
        stashes.retain(StashHandle::is_live);
        stashes.push(stash.handle());
    }

    /// The actor is stopping: letter what its stashes still hold.
    pub(crate) fn letter_stashes(&mut self) {
        if let Some(extra) = self.extra.as_mut() {
            for stash in extra.stashes.drain(..) {
                stash.letter_held();
            }
        }
    }

    /// The translations of this actor's message adapters, if it registered any.
    pub(crate) fn adapters(&self) -> Option<&Adapters> {
        self.extra.as_ref().map(|extra| &extra.adapters)
    }

    /// Stop watching `target`: no `Terminated` for it arrives after this call, even
    /// one already on its way.
    pub fn unwatch<Q: Message>(&mut self, target: &ActorRef<Q>) {
        self.unwatch_any(&target.erase());
    }

    pub(crate) fn unwatch_any(&mut self, target: &AnyActorRef) {
        let stops = target.ends_with();
        if self.take_watch(&stops).is_none() {
            return;
        }
        self.effects().unwatch(&self.self_ref.erase(), &stops);
    }

    /// The watch that `stopped`'s stop ends, if this actor has one; forgotten here,
    /// so that what it delivers is delivered at most once.
    pub(crate) fn take_watch(&mut self, stopped: &AnyActorRef) -> Option<Watch<P>> {
        self.extra.as_mut()?.watching.remove(stopped)
    }

    /// Drop every watch (on restart and on stop), telling each target.
    pub(crate) fn unwatch_all(&mut self) {
        let Some(extra) = self.extra.as_mut() else {
            return;
        };
        let watching = std::mem::take(&mut extra.watching);
        let me = self.self_ref.erase();
        for target in watching.keys() {
            self.effects().unwatch(&me, target);
        }
    }
}

impl<P: Message> fmt::Debug for ActorContext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorContext")
            .field("self", &self.self_ref)
            .finish_non_exhaustive()
    }
}
