//! # Protocols as state machines
//!
//! An actor whose protocol has states declares them once, as a transition table on
//! its `#[actor]` block, and gives each state its own type and its own handlers in a
//! `#[state(Actor)]` block. Each row of the table names a state and the states it
//! may switch to, `|` between them: `states(Closed => Open, Open => HalfOpen,
//! HalfOpen => Closed | Open)`; a state that switches nowhere is written alone. The
//! first row is the initial state. `#[state(..)]` names its actor by a single name in
//! scope (`use super::Door;` first, not `#[state(super::Door)]`). The type named by the `#[actor]` block holds what every
//! state shares; a state's own data lives in the state (`Ready { token }`), so no
//! other state can read it.
//!
//! - A handler that stays takes `&mut self` and answers `()`, the reply of its
//!   request, or a `Result` of either; so do `#[otherwise]` methods and hooks. Nothing
//!   else compiles there: a `Behavior`, a `ReplyThen` or a `Machine` would leave the
//!   machine by a side door, and the error on the return type says how to switch or
//!   stop instead.
//! - A handler that may leave takes `self` and answers a [`Next`]: `Next::stay(self)`,
//!   `Next::stop()`, or `Next::to(successor)`; for a request, `(reply, Next<Self>)`.
//!   Answering a request and then switching or stopping is spelled `(reply,
//!   Next::to(successor))` or `(reply, Next::stop())`, and only there.
//!   A switch to a state the table does not list after this one does not compile:
//!   "`Disconnected` cannot switch to `Ready`: its actor's table does not list
//!   `Ready` after `Disconnected`", with the successors it declares in a note.
//! - A message the current state has no handler for is refused by default: a dead
//!   letter whose reason names the state
//!   ([`NotHandledInState`](crate::DeadLetterReason::NotHandledInState)), and an ask
//!   fails at once with [`AskError::NotHandled`](crate::AskError::NotHandled).
//!   `#[state(Actor, unhandled = stash)]` holds such messages until the next switch
//!   replays them; an `#[otherwise]` method takes them whole.
//! - `#[on_entry]` (`&mut self`) runs at start and on every switch into the state
//!   (a restart starts the initial state again, so it runs then too);
//!   `#[on_exit]` (no `self`: the switching handler took it) after a switch out,
//!   and only then: not when the actor stops or restarts in the state (`PostStop`
//!   and `PreRestart` are the signals for those).
//! - The table is checked whole: a successor that is not a state, a state nothing
//!   switches to and a state unreachable from the first row (the initial state) are
//!   compile errors. The graph is on the actor as `STATE_GRAPH_MERMAID` and
//!   `STATE_GRAPH_DOT`.
//! - A state type that implements `Drop` cannot have its fields moved out (E0509)
//!   into the next state: move the whole value, or take a field with
//!   `std::mem::take` first.
//! - Spawn a [`Machine`]: by value when it is `Clone`, otherwise built in
//!   [`Behaviors::setup`](crate::Behaviors::setup). A restart starts again from the
//!   initial state.
//!
//! ```
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Coin;
//! #[message]
//! pub struct Push;
//! #[message(reply = bool)]
//! pub struct IsOpen;
//!
//! /// A turnstile: what both states share is the count of people through.
//! #[derive(Clone)]
//! pub struct Turnstile {
//!     passed: u64,
//! }
//!
//! #[actor(messages(Coin, Push, IsOpen), states(Locked => Unlocked, Unlocked => Locked))]
//! impl Turnstile {}
//!
//! #[derive(Clone)]
//! pub struct Locked;
//!
//! #[state(Turnstile)]
//! impl Locked {
//!     fn coin(self, _: Coin) -> Next<Self> {
//!         Next::to(Unlocked)
//!     }
//!
//!     fn is_open(&mut self, _: IsOpen) -> bool {
//!         false
//!     }
//! }
//!
//! #[derive(Clone)]
//! pub struct Unlocked;
//!
//! #[state(Turnstile)]
//! impl Unlocked {
//!     fn push(self, turnstile: &mut Turnstile, _: Push) -> Next<Self> {
//!         turnstile.passed += 1;
//!         Next::to(Locked)
//!     }
//!
//!     fn is_open(&mut self, _: IsOpen) -> bool {
//!         true
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! assert_eq!(
//!     Turnstile::STATE_GRAPH_MERMAID,
//!     "stateDiagram-v2\n    [*] --> Locked\n    Locked --> Unlocked\n    Unlocked --> Locked\n"
//! );
//! let system = ActorSystem::new("turnstile")?;
//! let gate = system.spawn(Machine::new(Turnstile { passed: 0 }, Locked), "gate")?;
//! assert!(!gate.ask(IsOpen).await?);
//! gate.tell(Push); // refused: `Locked` has no handler for it
//! gate.tell(Coin);
//! assert!(gate.ask(IsOpen).await?);
//! # system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! The `state_machine` example is the seed's connection; its graph:
//!
//! ```text
//! stateDiagram-v2
//!     [*] --> Disconnected
//!     Disconnected --> Authenticating
//!     Authenticating --> Ready
//!     Ready --> Closing
//!     Closing --> [*]
//! ```
//!
//! What is generated, and what it rests on:
//!
//! - the actor type implements [`StateMachine`]: the enum of its states, the initial
//!   one, and which state handles a message;
//! - each state implements [`StateOf`] (its machine, its name, its successors) and
//!   [`Transition<T>`] for every declared successor `T`; its block implements
//!   `StateHandlers`. `Transition` is sealed: nothing but the table implements it
//!   (a hand-written impl does not compile), and a machine written without the
//!   macros declares its table with [`transitions!`], one row a state, which cannot
//!   add to a state the macro declared;
//! - a [`Machine<A>`] holds the data, the current state and the stash, and is the
//!   [`Actor`] the runtime runs.
//!
//! Inside: dispatch is one `match` on the current state, then the state's `handle`,
//! which tries each handled message (a discriminant test each) and ends with its policy
//! (`refuse`, `stash`, or an `#[otherwise]`). Only switching handlers take the state out
//! (`StateOf::take`, leaving it vacant); a panic there leaves it vacant, and the vacant
//! arm (`vacant`, `lost`) fails the actor with [`StateLost`], refusing the message, so a
//! resume cannot go on silently. Refusing a request refuses its promise
//! (`ReplySlot::refuse`), so the ask fails at once. The stash of `unhandled = stash` is
//! made on first use, and every switch replays it. `#[on_entry]` runs at start through
//! `Actor::started`, a hidden hook the incarnation calls once the actor is installed.

mod next;
mod stay;

use std::fmt;
use std::num::NonZeroUsize;

#[doc(hidden)]
pub use self::next::Unreachable as next_unreachable;
pub use self::next::{
    Declared, DeclaredTable, Next, RequestSwitch, SwitchOutput, TellSwitch, Transition,
};
pub use self::stay::{StayNext, StayReply, Staying, stay_next};
#[doc(inline)]
pub use crate::__tapio_transitions as transitions;

use crate::actor::behavior::{Actor, Behavior, Behaviors, Handled};
use crate::actor::context::ActorContext;
use crate::actor::reply::ReplyTo;
use crate::actor::signal::Signal;
use crate::actor::stash::{StashBuffer, StashOverflow};
use crate::ground::events::DeadLetterReason;
use crate::ground::failure::Failure;
use crate::ground::message::{Message, NoReply, Protocol};

/// An actor whose protocol is a state machine: implemented by
/// `#[actor(states(..))]` on the type holding the data every state shares.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a state machine",
    label = "a `#[state]` block names the actor it is a state of",
    note = "declare the states on the actor: `#[actor(messages(..), states(First => Second, Second))] impl {Self} {{}}`"
)]
pub trait StateMachine: Protocol<Msg: StateProtocol> + Sized + Send + 'static {
    /// The type of the state the actor starts in: the first of its table.
    type Initial: Send + 'static;

    /// The enum of its states, with a vacant variant for the moment a switching
    /// handler holds the state.
    #[doc(hidden)]
    type States: Send + 'static;

    /// The name of the actor type, for messages.
    #[doc(hidden)]
    const NAME: &'static str;

    /// How many messages a state that stashes may hold, unless
    /// `#[actor(stash_capacity = N)]` says otherwise.
    #[doc(hidden)]
    const STASH_CAPACITY: usize = 1000;

    /// The initial state, as the enum of states.
    #[doc(hidden)]
    fn initial(state: Self::Initial) -> Self::States;

    /// The name of the current state; `None` when it is vacant (a switching handler
    /// panicked while it held the state).
    #[doc(hidden)]
    fn state_name(states: &Self::States) -> Option<&'static str>;

    /// Hand `message` to the current state.
    #[doc(hidden)]
    fn dispatch<'a>(parts: Parts<'a, Self>, message: Self::Msg) -> Handled<'a, Self::Msg>;

    /// Run the current state's entry hook.
    #[doc(hidden)]
    fn enter(parts: Parts<'_, Self>) -> Result<(), Failure>;

    /// Run the exit hook of the state named `state`, which was just left.
    #[doc(hidden)]
    fn exit(parts: Parts<'_, Self>, state: &'static str) -> Result<(), Failure>;

    /// Handle a signal: the `#[signal]` method of the actor's block, if any.
    #[doc(hidden)]
    fn signal<'a>(
        data: &'a mut Self,
        ctx: &'a mut ActorContext<Self::Msg>,
        signal: &'a Signal,
    ) -> Handled<'a, Self::Msg> {
        let _ = (data, ctx, signal);
        Handled::ready(Behaviors::unhandled())
    }
}

/// A state of a [`StateMachine`]: implemented by `#[actor(states(..))]` for every
/// state of its table.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a state of any state machine",
    label = "not a declared state",
    note = "list `{Self}` in the `states(..)` table of its actor's `#[actor]` block"
)]
pub trait StateOf: Sized + Send + 'static {
    /// The actor this is a state of.
    type Machine: StateMachine;

    /// The states it may switch to, for error messages: a tuple of them, or
    /// [`NoSuccessors`].
    type Successors;

    /// Its name, as dead letters and errors give it.
    const NAME: &'static str;

    /// This state, as the enum of its machine's states.
    #[doc(hidden)]
    fn into_states(self) -> <Self::Machine as StateMachine>::States;

    /// This state in `states`, when it is the current one.
    #[doc(hidden)]
    fn get(states: &mut <Self::Machine as StateMachine>::States) -> Option<&mut Self>;

    /// Take this state out of `states`, leaving it vacant, when it is the current one.
    #[doc(hidden)]
    fn take(states: &mut <Self::Machine as StateMachine>::States) -> Option<Self>;
}

/// `S` is a state of the state machine `Self`: what a `#[state(Self)]` block checks,
/// through the machine (`<<A as StateMachine>::Initial as StateOf>::Machine`), so
/// that a block naming an actor that is no state machine is that one error, and
/// not a second about its state.
#[doc(hidden)]
pub trait HasState<S> {}

impl<A, S: StateOf<Machine = A>> HasState<S> for A {}

/// The handlers of a state: implemented by its `#[state(Actor)]` block.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a state without a `#[state]` block",
    label = "no handlers for this state",
    note = "give every state of the table its block: `#[state(Actor)] impl {Self} {{ .. }}` (an empty block for a state that handles nothing and refuses everything)"
)]
#[doc(hidden)]
pub trait StateHandlers: StateOf {
    /// Handle `message` in this state, the current one.
    fn handle<'a>(
        parts: Parts<'a, Self::Machine>,
        message: <Self::Machine as Protocol>::Msg,
    ) -> Handled<'a, <Self::Machine as Protocol>::Msg>;

    /// The entry hook: run when the machine starts in, or switches to, this state.
    fn enter(parts: Parts<'_, Self::Machine>) -> Result<(), Failure> {
        let _ = parts;
        Ok(())
    }

    /// The exit hook: run when a switch has left this state.
    fn exit(parts: Parts<'_, Self::Machine>) -> Result<(), Failure> {
        let _ = parts;
        Ok(())
    }
}

/// The successors of a state that has none: a terminal state, which can only stay
/// or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSuccessors {}

/// A protocol enum of a state machine: implemented by `#[actor(states(..))]`.
#[doc(hidden)]
pub trait StateProtocol: Message {
    /// Refuse the message in state `state`: an ask awaiting its answer fails at once.
    /// What remains (the message, with nobody awaiting an answer) becomes a dead
    /// letter.
    fn refuse(self, state: &'static str) -> Self;
}

/// What a state's handlers reach: the data every state shares, the current state,
/// the context and the stash. Generated code only.
#[doc(hidden)]
pub struct Parts<'a, A: StateMachine> {
    /// The actor's data.
    pub data: &'a mut A,
    /// The current state.
    pub states: &'a mut A::States,
    /// The context.
    pub ctx: &'a mut ActorContext<A::Msg>,
    /// The stash, made on first use.
    pub stash: &'a mut Option<StashBuffer<A::Msg>>,
}

impl<A: StateMachine> fmt::Debug for Parts<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = A::state_name(self.states).unwrap_or(VACANT);
        f.debug_struct("Parts")
            .field("actor", &A::NAME)
            .field("state", &state)
            .finish_non_exhaustive()
    }
}

/// The running state machine: the data every state shares, the current state, and
/// the stash of the states that stash. This is the [`Actor`] the runtime runs.
///
/// Build it with [`Machine::new`] from the data and the initial state. A restart
/// starts again from the value spawned (or from what a setup builds), so from the
/// initial state.
pub struct Machine<A: StateMachine> {
    data: A,
    states: A::States,
    stash: Option<StashBuffer<A::Msg>>,
}

impl<A: StateMachine> Machine<A> {
    /// The actor `data`, starting in `initial`.
    pub fn new(data: A, initial: A::Initial) -> Self {
        Self {
            data,
            states: A::initial(initial),
            stash: None,
        }
    }

    /// The name of the current state (`"vacant"` after a switching handler
    /// panicked while it held the state).
    pub fn state_name(&self) -> &'static str {
        A::state_name(&self.states).unwrap_or(VACANT)
    }

    fn parts<'a>(&'a mut self, ctx: &'a mut ActorContext<A::Msg>) -> Parts<'a, A> {
        Parts {
            data: &mut self.data,
            states: &mut self.states,
            ctx,
            stash: &mut self.stash,
        }
    }
}

/// What a vacant state is called.
const VACANT: &str = "vacant";

impl<A> Clone for Machine<A>
where
    A: StateMachine + Clone,
    A::States: Clone,
{
    /// A clone of the data and the state; a clone has a stash of its own, empty.
    fn clone(&self) -> Self {
        Self {
            data: self.data.clone(),
            states: self.states.clone(),
            stash: None,
        }
    }
}

impl<A: StateMachine + fmt::Debug> fmt::Debug for Machine<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Machine")
            .field("data", &self.data)
            .field("state", &self.state_name())
            .finish_non_exhaustive()
    }
}

impl<A: StateMachine> Protocol for Machine<A> {
    type Msg = A::Msg;
}

impl<A: StateMachine> Actor for Machine<A> {
    #[inline]
    fn handle<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<A::Msg>,
        message: A::Msg,
    ) -> Handled<'a, A::Msg> {
        A::dispatch(self.parts(ctx), message)
    }

    fn started(&mut self, ctx: &mut ActorContext<A::Msg>) -> Result<(), Failure> {
        A::enter(self.parts(ctx))
    }

    fn signal<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<A::Msg>,
        signal: &'a Signal,
    ) -> Handled<'a, A::Msg> {
        A::signal(&mut self.data, ctx, signal)
    }
}

/// The failure of a state machine whose state was lost: a handler that could switch
/// panicked (or failed) while it held the state, and the actor was resumed. It
/// fails on the next message, so its supervision restarts it (from the initial
/// state) or stops it; resuming again cannot bring the state back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{actor}` has no state: a handler that could switch states failed while it held the state, and the actor was resumed; supervise it with `restart` (to start again from the initial state) or `stop`"
)]
pub struct StateLost {
    /// The actor type.
    pub actor: &'static str,
}

/// A message came while the state was vacant: fail (see [`StateLost`]). The message
/// is refused as in a state that does not handle it.
#[doc(hidden)]
pub fn vacant<A: StateMachine>(parts: Parts<'_, A>, message: A::Msg) -> Handled<'_, A::Msg> {
    dead_letter(parts.ctx, message.refuse(VACANT), VACANT);
    Handled::ready(Err::<(), _>(Failure::new(StateLost { actor: A::NAME })))
}

/// The current state does not handle `message`: refuse it (an ask fails at once),
/// and publish it as a dead letter naming the state.
#[doc(hidden)]
pub fn refuse<A: StateMachine, S: StateOf<Machine = A>>(
    parts: Parts<'_, A>,
    message: A::Msg,
) -> Handled<'_, A::Msg> {
    dead_letter(parts.ctx, message.refuse(S::NAME), S::NAME);
    Handled::ready(())
}

fn dead_letter<P: Message>(ctx: &ActorContext<P>, message: P, state: &'static str) {
    ctx.system().shared().dead_letter(
        message,
        ctx.path(),
        DeadLetterReason::NotHandledInState(state),
    );
}

/// The current state does not handle `message` and stashes what it does not
/// handle: hold it until the next switch replays it. A full stash fails the actor
/// with [`StashOverflow`], and the message is a dead letter.
#[doc(hidden)]
pub fn stash<A: StateMachine>(parts: Parts<'_, A>, message: A::Msg) -> Handled<'_, A::Msg> {
    let capacity = NonZeroUsize::new(A::STASH_CAPACITY).unwrap_or(NonZeroUsize::MIN);
    let owner = parts.ctx.self_ref();
    let stash = parts
        .stash
        .get_or_insert_with(|| StashBuffer::new(capacity, owner.clone()));
    let stashed: Result<(), StashOverflow> = stash.stash(message);
    Handled::ready(stashed)
}

/// Apply what a switching handler of state `S` answered: put the next state in
/// place (or stop), run the exit and entry hooks of a switch, replay the stash after
/// a switch, and answer a request. Generated code only.
#[doc(hidden)]
pub fn switched<A, S, O, Slot>(
    parts: Parts<'_, A>,
    output: O,
    reply: Slot,
) -> Result<Behavior<A::Msg>, Failure>
where
    A: StateMachine,
    S: StateOf<Machine = A>,
    O: SwitchOutput<S, Slot>,
{
    let next = output.into_step(reply, parts.ctx)?;
    carry_out::<A, S>(parts, next)
}

impl NoReply {
    /// What generated code calls for a switching handler of a message that is not
    /// a request: `output` must be a [`TellSwitch`], whose error says so.
    ///
    /// # Errors
    ///
    /// The failure `output` carries, or one of the exit and entry hooks.
    #[doc(hidden)]
    pub fn switched<A, S, O>(
        self,
        parts: Parts<'_, A>,
        output: O,
    ) -> Result<Behavior<A::Msg>, Failure>
    where
        A: StateMachine,
        S: StateOf<Machine = A>,
        O: TellSwitch<S>,
    {
        let next = output.into_tell_step()?;
        carry_out::<A, S>(parts, next)
    }
}

impl<R: Message> ReplyTo<R> {
    /// What generated code calls for a switching handler of a request: `output`
    /// must be a [`RequestSwitch`], whose error says so.
    ///
    /// # Errors
    ///
    /// The failure `output` carries, or one of the exit and entry hooks.
    #[doc(hidden)]
    pub fn switched<A, S, O>(
        self,
        parts: Parts<'_, A>,
        output: O,
    ) -> Result<Behavior<A::Msg>, Failure>
    where
        A: StateMachine,
        S: StateOf<Machine = A>,
        O: RequestSwitch<S, R>,
    {
        let next = output.into_request_step(self, parts.ctx)?;
        carry_out::<A, S>(parts, next)
    }
}

/// Carry out a switching handler's step: stay, stop, or switch (the exit hook, the
/// entry hook, and the stash replayed).
fn carry_out<A, S>(
    parts: Parts<'_, A>,
    next: next::Step<A::States>,
) -> Result<Behavior<A::Msg>, Failure>
where
    A: StateMachine,
    S: StateOf<Machine = A>,
{
    match next {
        next::Step::Stay(state) => {
            *parts.states = state;
            Ok(Behaviors::same())
        }
        next::Step::Stop => Ok(Behaviors::stopped()),
        next::Step::Switch(state) => {
            *parts.states = state;
            A::exit(
                Parts {
                    data: &mut *parts.data,
                    states: &mut *parts.states,
                    ctx: &mut *parts.ctx,
                    stash: &mut *parts.stash,
                },
                S::NAME,
            )?;
            A::enter(Parts {
                data: &mut *parts.data,
                states: &mut *parts.states,
                ctx: &mut *parts.ctx,
                stash: &mut *parts.stash,
            })?;
            Ok(match parts.stash {
                Some(stash) if !stash.is_empty() => stash.unstash_all(Behaviors::same()),
                _ => Behaviors::same(),
            })
        }
    }
}

/// The state a handler belongs to was not the current one: cannot happen, since the
/// machine hands a message to its current state; answered as a lost state rather
/// than a panic.
#[doc(hidden)]
pub fn lost<'a, A: StateMachine>() -> Handled<'a, A::Msg> {
    Handled::ready(Err::<(), _>(Failure::new(StateLost { actor: A::NAME })))
}
