//! Remote spawn (S46): starting an actor on another system.
//!
//! A behavior is a closure, and a closure does not cross a socket. What crosses is
//! a key naming a factory and the factory's arguments; the peer looks the key up
//! among the factories linked into its own binary. So both systems run the same
//! code, as they do for message types.
//!
//! - `#[remote_behavior("key")]` on `fn name(args: Args) -> Behavior<P>` registers
//!   the factory under `key` and declares a type of the same name (in the type
//!   namespace, beside the function) that names it: `Spawner::offering::<name>()`,
//!   `spawner.spawn_remote::<name>(args, "child")`. A typo is a compile error.
//!   A factory cannot fail (one returning a `Result` is refused): work that can
//!   fail goes in `Behaviors::setup`, whose `Err` fails the actor's start, under
//!   its supervision.
//! - A [`Spawner`] offers an allowlist of factories and starts only those: an
//!   actor that started anything registered would be a capability handed to
//!   whoever can reach the port. The new actor is the spawner's child, supervised
//!   on its node by the supervision its factory declares; the requester holds a
//!   typed ref and watches it.
//! - [`ActorRef::spawn_remote`] asks a spawner for an actor and answers an
//!   `ActorRef` of the factory's protocol, or why the spawner refused.
//!
//! Arguments cannot carry an `ActorRef`: they are decoded on the peer outside the
//! context that resolves refs (a ref in them would have nothing to resolve
//! against). A factory whose arguments type can carry one stops the system from
//! starting, naming the factory (the type is probed when the system is built:
//! see `probe`); a ref the probe cannot see is refused when the arguments are
//! encoded, before anything is sent. Send the new actor its refs in a message.
//!
//! # Inside
//!
//! `#[remote_behavior]` implements `Factory` on a braced struct named like the
//! function, and submits a `FactoryRegistration` to `inventory`; the registrations are
//! checked when a system starts (a key twice, or arguments that can carry a ref, is
//! `SystemError::Factory`). The `Spawner` is an ordinary `#[actor]` inside the runtime,
//! offering function pointers (`spawn_factory::<F>`) by key; `Spawn` and `SpawnReply`
//! are registered under `tapio.spawn.v1` and `tapio.spawn-reply.v1`. `spawn_remote`
//! encodes the arguments with the `ENCODING_ARGS` thread-local set, so an `ActorRef` in
//! them refuses to serialize, asks, and resolves the answered URI;
//! `ActorContext::spawn_remote` does the same from inside an actor and watches what it
//! started.

pub(crate) mod probe;

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::actor::ActorRef;
use crate::actor::behavior::{Behavior, IntoBehavior};
use crate::actor::context::{ActorContext, Ctx};
use crate::features::ask::AskError;
use crate::ground::error::SpawnError;
use crate::ground::message::Message;
use crate::net::wire::{RemoteProtocol, WireLimits, WireProblem};

/// A factory of behaviors that another system can ask for by key. Declared by
/// `#[remote_behavior("key")]` on a function; implement it by hand only for a
/// factory the attribute cannot express.
pub trait Factory: 'static {
    /// The key the factory is asked for by, unique in the binary.
    const KEY: &'static str;
    /// What the behavior is built from: serializable, and without an `ActorRef`.
    type Args: SpawnArgs;
    /// The protocol of the actors it builds.
    type Protocol: RemoteProtocol;
    /// Build the behavior, supervision included.
    fn build(args: Self::Args) -> Behavior<Self::Protocol>;
}

/// What a factory's arguments must be: serializable both ways, and sendable.
/// Derive serde's traits on the type, or declare it `#[message(remote = "..")]`,
/// which derives them through tapio.
///
/// A factory's declaration asks only for what its spawner needs (decoding the
/// arguments), so a type without serde's traits is one error where the factory is
/// declared; the side that asks for a spawn needs `Serialize` too, and says so where
/// it encodes them (`spawn_remote`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a factory's arguments: it does not implement serde's `Serialize` and `Deserialize`",
    label = "a factory's arguments cross the wire",
    note = "derive them (`#[derive(serde::Serialize, serde::Deserialize)]`), or declare the type `#[message(remote = \"a.stable.key\")]`, which derives them through tapio"
)]
#[doc(hidden)]
pub trait SpawnArgs: Send + 'static {
    /// Decode the arguments from a spawn request's payload.
    #[doc(hidden)]
    fn decode_args(key: &str, bytes: &[u8], limits: &WireLimits) -> Result<Self, WireProblem>
    where
        Self: Sized;

    /// Whether the type can carry an `ActorRef` (see `probe`).
    #[doc(hidden)]
    fn can_carry_ref() -> bool;
}

impl<T: DeserializeOwned + Send + 'static> SpawnArgs for T {
    fn decode_args(key: &str, bytes: &[u8], limits: &WireLimits) -> Result<Self, WireProblem> {
        crate::net::wire::decode(key, bytes, limits)
    }

    fn can_carry_ref() -> bool {
        probe::can_carry_ref::<T>()
    }
}

/// A factory linked into the binary: `#[remote_behavior]` submits one.
#[derive(Clone, Copy)]
pub struct FactoryRegistration {
    key: &'static str,
    name: &'static str,
    /// Whether the arguments type can carry an `ActorRef` (see `probe`).
    carries_ref: fn() -> bool,
}

/// Decode the arguments and spawn the factory's actor as a child of the spawner;
/// answers its URI.
type SpawnFn = fn(&mut ActorContext<SpawnerMsg>, &[u8], &str) -> Result<String, SpawnFailure>;

impl FactoryRegistration {
    /// The registration of `F`, named `name` (its path) in error messages.
    pub const fn of<F: Factory>(name: &'static str) -> Self {
        Self {
            key: F::KEY,
            name,
            carries_ref: <F::Args as SpawnArgs>::can_carry_ref,
        }
    }

    /// The key.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The factory's path, as the attribute saw it.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Debug for FactoryRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactoryRegistration")
            .field("key", &self.key)
            .field("name", &self.name)
            .finish()
    }
}

inventory::collect!(FactoryRegistration);

/// The factories linked into this binary, by key.
///
/// # Errors
///
/// [`SpawnerError::DuplicateKey`] when two factories share a key,
/// [`SpawnerError::ArgumentsCarryRef`] when a factory's arguments can carry a ref.
fn linked() -> Result<HashMap<&'static str, &'static FactoryRegistration>, SpawnerError> {
    let mut by_key: HashMap<&'static str, &'static FactoryRegistration> = HashMap::new();
    for registration in inventory::iter::<FactoryRegistration> {
        if (registration.carries_ref)() {
            return Err(SpawnerError::ArgumentsCarryRef {
                key: registration.key,
                factory: registration.name,
            });
        }
        if let Some(first) = by_key.insert(registration.key, registration) {
            return Err(SpawnerError::DuplicateKey {
                key: registration.key,
                first: first.name,
                second: registration.name,
            });
        }
    }
    Ok(by_key)
}

/// Check the factories linked into this binary when a system starts: two with one
/// key are an error naming both, and arguments that can carry a ref one naming the
/// factory.
pub(crate) fn check_linked() -> Result<(), SpawnerError> {
    linked().map(|_| ())
}

fn spawn_factory<F: Factory>(
    ctx: &mut ActorContext<SpawnerMsg>,
    args: &[u8],
    name: &str,
) -> Result<String, SpawnFailure> {
    // Outside any decode context: an `ActorRef` in the arguments does not decode.
    // Decoded as a frame's payload is: within the system's depth limit (a peer's
    // deeply nested arguments would otherwise overflow the stack), and with no
    // bytes left over.
    // The name first: a request refused for its name runs no factory, and one
    // accepted runs it once (the spawner handles one request at a time, so the
    // name cannot be taken between the check and the spawn).
    ctx.check_child_name(name)
        .map_err(|error| refused_name(error, name))?;
    let limits = ctx.system().shared().wire_limits();
    let args: F::Args =
        <F::Args as SpawnArgs>::decode_args(F::KEY, args, &limits).map_err(|problem| {
            SpawnFailure::BadArguments {
                factory: F::KEY.to_owned(),
                error: problem.to_string(),
            }
        })?;
    let child = ctx
        .spawn(F::build(args), name)
        .map_err(|error| refused_name(error, name))?;
    Ok(child.wire_uri())
}

/// What a spawn refused for `name` tells the requester.
fn refused_name(error: SpawnError, name: &str) -> SpawnFailure {
    match error {
        SpawnError::NameTaken { name, .. } => SpawnFailure::NameTaken { name },
        SpawnError::InvalidName(error) => SpawnFailure::InvalidName {
            name: name.to_owned(),
            error: error.to_string(),
        },
        other => SpawnFailure::Stopping {
            error: other.to_string(),
        },
    }
}

/// Start an actor on the spawner's system: factory `factory` with the encoded
/// arguments `args`, named `name`. Answered with [`SpawnReply`].
/// [`ActorRef::spawn_remote`] builds it for you, typed.
#[crate::message(remote = "tapio.spawn.v1", reply = SpawnReply)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawn {
    /// The factory's key.
    pub factory: String,
    /// The arguments, encoded with postcard.
    pub args: Vec<u8>,
    /// The name of the new actor, under the spawner.
    pub name: String,
}

/// A spawner's answer to [`Spawn`].
#[crate::message(remote = "tapio.spawn-reply.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnReply {
    /// Started: its full URI, and its name.
    Spawned {
        /// The new actor's URI.
        actor: String,
        /// Its name.
        name: String,
    },
    /// Refused, and why; no factory ran.
    SpawnFailed {
        /// Why.
        reason: SpawnFailure,
    },
}

/// Why a spawner refused a [`Spawn`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(crate = "crate::__private::serde")]
#[non_exhaustive]
pub enum SpawnFailure {
    /// No factory has this key in the spawner's binary: the two systems run
    /// different code.
    #[error(
        "unknown factory {factory:?}: the spawner's binary has no factory with this key (do both systems run the same code?)"
    )]
    UnknownFactory {
        /// The key asked for.
        factory: String,
    },
    /// The factory exists there, but this spawner does not offer it.
    #[error(
        "the spawner does not offer {factory:?}: add it to the spawner's allowlist with `Spawner::offering::<..>()`"
    )]
    NotOffered {
        /// The key asked for.
        factory: String,
    },
    /// A child of the spawner already has the name.
    #[error("an actor named {name:?} is already running under the spawner: pick another name")]
    NameTaken {
        /// The name asked for.
        name: String,
    },
    /// The name breaks the naming rules.
    #[error("{name:?} is not a valid actor name: {error}")]
    InvalidName {
        /// The name asked for.
        name: String,
        /// What is wrong with it.
        error: String,
    },
    /// The arguments do not decode as the factory's arguments type.
    #[error("the arguments for {factory:?} do not decode: {error}")]
    BadArguments {
        /// The key asked for.
        factory: String,
        /// What the decoder said.
        error: String,
    },
    /// The spawner is stopping, or its system terminating.
    #[error("the spawner cannot start actors any more: {error}")]
    Stopping {
        /// Why.
        error: String,
    },
}

/// The actor that starts the factories it offers, when asked by [`Spawn`]. Build it
/// with [`Spawner::offering`], then spawn it like any actor.
#[derive(Clone)]
pub struct Spawner {
    offers: HashMap<&'static str, SpawnFn>,
    linked: HashMap<&'static str, &'static FactoryRegistration>,
}

impl fmt::Debug for Spawner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut offers: Vec<_> = self.offers.keys().collect();
        offers.sort();
        f.debug_struct("Spawner").field("offers", &offers).finish()
    }
}

/// A spawner's allowlist, being built: [`Spawner::offering`].
#[derive(Debug)]
pub struct SpawnerBuilder {
    offers: Vec<(&'static str, SpawnFn)>,
}

/// Why a spawner could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnerError {
    /// Two factories linked into the binary share a key.
    #[error(
        "the factory key {key:?} is registered twice, by `{first}` and by `{second}`: give one of them another key"
    )]
    DuplicateKey {
        /// The key.
        key: &'static str,
        /// One factory.
        first: &'static str,
        /// The other.
        second: &'static str,
    },
    /// A factory's arguments type can carry an `ActorRef`, which the other system
    /// could not resolve.
    #[error(
        "the arguments of the factory `{factory}` (key {key:?}) can carry an ActorRef: arguments are decoded where no ref resolves; take the ref out of the arguments and send it to the new actor in a message once it has started"
    )]
    ArgumentsCarryRef {
        /// The key.
        key: &'static str,
        /// The factory.
        factory: &'static str,
    },
}

impl Spawner {
    /// A spawner offering the factory `F` (a type `#[remote_behavior]` declared):
    /// add more with [`SpawnerBuilder::and`], then [`SpawnerBuilder::build`].
    pub fn offering<F: Factory>() -> SpawnerBuilder {
        SpawnerBuilder {
            offers: vec![(F::KEY, spawn_factory::<F> as SpawnFn)],
        }
    }
}

impl SpawnerBuilder {
    /// Offer the factory `F` too.
    #[must_use]
    pub fn and<F: Factory>(mut self) -> Self {
        self.offers.push((F::KEY, spawn_factory::<F> as SpawnFn));
        self
    }

    /// The spawner, checked: the factories linked into the binary have distinct
    /// keys.
    ///
    /// # Errors
    ///
    /// [`SpawnerError::DuplicateKey`] naming both factories of a key used twice,
    /// [`SpawnerError::ArgumentsCarryRef`] naming a factory whose arguments can
    /// carry an `ActorRef`.
    pub fn build(self) -> Result<Spawner, SpawnerError> {
        Ok(Spawner {
            offers: self.offers.into_iter().collect(),
            linked: linked()?,
        })
    }
}

#[crate::actor]
impl Spawner {
    /// Start the factory asked for, if this spawner offers it.
    fn spawn(&mut self, ctx: &mut Ctx<Self>, request: Spawn) -> SpawnReply {
        let Some(spawn) = self.offers.get(request.factory.as_str()) else {
            let reason = if self.linked.contains_key(request.factory.as_str()) {
                SpawnFailure::NotOffered {
                    factory: request.factory,
                }
            } else {
                SpawnFailure::UnknownFactory {
                    factory: request.factory,
                }
            };
            tracing::info!(%reason, "spawn refused");
            return SpawnReply::SpawnFailed { reason };
        };
        match spawn(ctx, &request.args, &request.name) {
            Ok(actor) => SpawnReply::Spawned {
                actor,
                name: request.name,
            },
            Err(reason) => {
                tracing::info!(%reason, "spawn refused");
                SpawnReply::SpawnFailed { reason }
            }
        }
    }
}

/// A started actor of another system: a typed ref to it, and its name.
#[derive(Debug, Clone)]
pub struct Spawned<P: Message> {
    /// The new actor.
    pub actor: ActorRef<P>,
    /// Its name.
    pub name: String,
}

impl<P: Message> PartialEq for Spawned<P> {
    fn eq(&self, other: &Self) -> bool {
        self.actor == other.actor && self.name == other.name
    }
}

impl<P: Message> Eq for Spawned<P> {}

/// Why [`ActorRef::spawn_remote`] gave no actor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteSpawnError {
    /// The spawner refused.
    #[error("the spawner refused: {0}")]
    Refused(SpawnFailure),
    /// The request got no answer.
    #[error("the spawn request got no answer: {0}")]
    Ask(AskError),
    /// The arguments could not be encoded (an `ActorRef` inside them, for one).
    #[error("the arguments cannot be sent: {0}")]
    Arguments(String),
    /// The answer named an actor that does not resolve here.
    #[error("the spawned actor's URI does not resolve: {0}")]
    Unresolvable(String),
}

/// Off: refs encode as they always do.
const OFF: u8 = 0;
/// Spawn arguments are being encoded: a ref refuses to be.
const ENCODING: u8 = 1;
/// ... and one did.
const REFUSED: u8 = 2;

std::thread_local! {
    /// Whether spawn arguments are being encoded on this thread, and whether a
    /// ref inside them refused.
    static ENCODING_ARGS: Cell<u8> = const { Cell::new(OFF) };
}

/// Whether spawn arguments are being encoded on this thread; if so, the ref that
/// asks is refused, and the refusal remembered for the error.
pub(crate) fn refuse_ref_in_args() -> bool {
    ENCODING_ARGS.with(|state| {
        if state.get() == OFF {
            return false;
        }
        state.set(REFUSED);
        true
    })
}

/// Encode spawn arguments, refusing an `ActorRef` inside them.
fn encode_args<A: Serialize>(args: &A) -> Result<Vec<u8>, String> {
    let before = ENCODING_ARGS.with(|state| state.replace(ENCODING));
    let encoded = postcard::to_allocvec(args);
    let refused = ENCODING_ARGS.with(|state| state.replace(before)) == REFUSED;
    if refused {
        return Err(
            "an ActorRef cannot be in spawn arguments: the peer decodes them where no ref resolves; send the ref to the new actor in a message once it has started"
                .into(),
        );
    }
    encoded.map_err(|error| error.to_string())
}

impl ActorRef<SpawnerMsg> {
    /// Ask this spawner (usually on another system) to start the factory `F` with
    /// `args`, named `name`; answers a typed ref to the new actor. The actor is the
    /// spawner's child, supervised over there: watch it to hear when it ends.
    ///
    /// The answer comes within the ask's default deadline (5 s).
    pub fn spawn_remote<F: Factory>(
        &self,
        args: F::Args,
        name: &str,
    ) -> impl Future<Output = Result<Spawned<F::Protocol>, RemoteSpawnError>> + Send + 'static
    where
        F::Args: Serialize,
    {
        let encoded = encode_args(&args);
        let spawner = self.clone();
        let name = name.to_owned();
        async move {
            let args = encoded.map_err(RemoteSpawnError::Arguments)?;
            let request = Spawn {
                factory: F::KEY.to_owned(),
                args,
                name,
            };
            match spawner.ask(request).await {
                Ok(SpawnReply::Spawned { actor, name }) => {
                    let system = spawner.core().system().clone();
                    let actor = system
                        .resolve_uri::<F::Protocol>(&actor)
                        .map_err(RemoteSpawnError::Unresolvable)?;
                    Ok(Spawned { actor, name })
                }
                Ok(SpawnReply::SpawnFailed { reason }) => Err(RemoteSpawnError::Refused(reason)),
                Err(error) => Err(RemoteSpawnError::Ask(error)),
            }
        }
    }
}

impl<P: Message> ActorContext<P> {
    /// [`spawn_remote`](ActorRef::spawn_remote) from inside an actor, which then
    /// watches what it started (S46): it hears
    /// [`Signal::Terminated`](crate::Signal::Terminated) when the new actor stops,
    /// when its system stops, or when that system is given up on. From an `async`
    /// handler:
    ///
    /// ```no_run
    /// use tapio::prelude::*;
    /// use tapio::remote::spawn::{RemoteSpawnError, SpawnerMsg};
    ///
    /// /// What a doubler is built with (serde 1's derives: it crosses as bytes).
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// pub struct DoublerArgs {
    ///     pub factor: u64,
    /// }
    ///
    /// #[message(remote = "doc.double.v1")]
    /// pub struct Double(pub u64);
    ///
    /// #[remote_behavior("doc.doubler")]
    /// pub fn doubler(args: DoublerArgs) -> Behavior<Double> {
    ///     Behaviors::receive_message(move |Double(n): Double| {
    ///         let _doubled = n * args.factor;
    ///     })
    ///     .into()
    /// }
    ///
    /// /// Start a doubler through this spawner (on another system).
    /// #[message]
    /// pub struct StartOne(pub ActorRef<SpawnerMsg>);
    ///
    /// pub struct Requester;
    ///
    /// #[actor]
    /// impl Requester {
    ///     async fn start_one(
    ///         &mut self,
    ///         ctx: &mut Ctx<Self>,
    ///         StartOne(spawner): StartOne,
    ///     ) -> Result<(), RemoteSpawnError> {
    ///         let worker = ctx
    ///             .spawn_remote::<doubler>(&spawner, DoublerArgs { factor: 2 }, "w1")
    ///             .await?;
    ///         worker.actor.tell(Double(21));
    ///         Ok(())
    ///     }
    /// }
    ///
    /// #[tokio::main]
    /// async fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let system = ActorSystem::builder("requesting")
    ///         .remote(tapio::remote::RemoteSettings::bind("127.0.0.1", 0))
    ///         .build()?;
    ///     let spawner =
    ///         system.resolve::<SpawnerMsg>("tapio://workers@127.0.0.1:7000/user/spawner")?;
    ///     let requester = system.spawn(Behaviors::setup(|_| Requester), "requester")?;
    ///     requester.tell(StartOne(spawner));
    ///     system.terminate().await;
    ///     Ok(())
    /// }
    /// ```
    pub async fn spawn_remote<F: Factory>(
        &mut self,
        spawner: &ActorRef<SpawnerMsg>,
        args: F::Args,
        name: &str,
    ) -> Result<Spawned<F::Protocol>, RemoteSpawnError>
    where
        F::Args: Serialize,
    {
        let spawned = spawner.spawn_remote::<F>(args, name).await?;
        self.watch(&spawned.actor);
        Ok(spawned)
    }
}

/// What a factory function returns, as a behavior: for `#[remote_behavior]`'s
/// expansion.
#[doc(hidden)]
pub fn into_behavior<P: Message, B: IntoBehavior<P>>(behavior: B) -> Behavior<P> {
    behavior.into_behavior()
}
