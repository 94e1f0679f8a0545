//! The `state_machine` example with what `#[actor(states(..))]` and `#[state]`
//! generate written out by hand.
//!
//! Concepts: the protocol enum, the enum of states, `StateMachine` (which state
//! handles a message), `StateOf` and `transitions!` (the declared switches, the whole
//! compile-time check), and `Machine`, the actor the runtime runs.
//!
//! Nothing here is needed in a real program; it is here so the macros hide nothing.
//! Compare it with `state_machine.rs`: the messages, the token service and the
//! script are that example's; the connection is rebuilt by hand.
//!
//! What to watch in the output: the same eight lines as `state_machine`.
//!
//! Run it with `cargo run --example state_machine_without_macros`.

use tapio::state::{
    Machine, Next, NoSuccessors, Parts, StateHandlers, StateMachine, StateOf, StateProtocol,
    transitions,
};
use tapio::{
    Accepts, ActorRef, ActorSystem, Behavior, Behaviors, Failure, Handled, Message, NoReply,
    Payload, Protocol, ReplySlot,
};
use tapio_examples::state_machine::{
    Authenticated, Close, Connect, Issue, Token, Transmit, tokens,
};
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// What every state of the connection shares.
pub struct Connection {
    lines: Lines,
    said: Tally,
    service: ActorRef<Issue>,
    tokens: ActorRef<Token>,
}

impl Connection {
    fn say(&self, line: String) {
        self.lines.push(line);
        self.said.mark();
    }
}

/// The protocol: `messages(Connect, Authenticated, Transmit, Close)`.
pub enum ConnectionMsg {
    /// A `Connect`.
    Connect(Connect, NoReply),
    /// An `Authenticated`.
    Authenticated(Authenticated, NoReply),
    /// A `Transmit`.
    Transmit(Transmit, NoReply),
    /// A `Close`.
    Close(Close, NoReply),
}

impl Message for ConnectionMsg {
    type ReplySlot = NoReply;

    fn into_payload(self) -> Payload {
        match self {
            Self::Connect(m, _) => m.into_payload(),
            Self::Authenticated(m, _) => m.into_payload(),
            Self::Transmit(m, _) => m.into_payload(),
            Self::Close(m, _) => m.into_payload(),
        }
    }
}

impl Accepts<Connect> for ConnectionMsg {
    fn wrap_with(message: Connect, reply: NoReply) -> Self {
        Self::Connect(message, reply)
    }
}

impl Accepts<Authenticated> for ConnectionMsg {
    fn wrap_with(message: Authenticated, reply: NoReply) -> Self {
        Self::Authenticated(message, reply)
    }
}

impl Accepts<Transmit> for ConnectionMsg {
    fn wrap_with(message: Transmit, reply: NoReply) -> Self {
        Self::Transmit(message, reply)
    }
}

impl Accepts<Close> for ConnectionMsg {
    fn wrap_with(message: Close, reply: NoReply) -> Self {
        Self::Close(message, reply)
    }
}

// A refused request's ask fails at once: every variant hands its reply slot the
// state's name. (None of these messages is a request, so nothing waits here.)
impl StateProtocol for ConnectionMsg {
    fn refuse(self, state: &'static str) -> Self {
        match self {
            Self::Connect(m, r) => {
                r.refuse(state);
                Self::Connect(m, NoReply)
            }
            Self::Authenticated(m, r) => {
                r.refuse(state);
                Self::Authenticated(m, NoReply)
            }
            Self::Transmit(m, r) => {
                r.refuse(state);
                Self::Transmit(m, NoReply)
            }
            Self::Close(m, r) => {
                r.refuse(state);
                Self::Close(m, NoReply)
            }
        }
    }
}

impl Protocol for Connection {
    type Msg = ConnectionMsg;
}

/// Nothing is open.
pub struct Disconnected;
/// Waiting for a token.
pub struct Authenticating;
/// Open, with its token.
pub struct Ready {
    token: String,
}
/// Going away.
pub struct Closing;

/// The states, and the moment a switching handler holds the state.
pub enum ConnectionStates {
    /// `Disconnected`.
    Disconnected(Disconnected),
    /// `Authenticating`.
    Authenticating(Authenticating),
    /// `Ready`.
    Ready(Ready),
    /// `Closing`.
    Closing(Closing),
    /// A switching handler holds the state.
    Vacant,
}

impl StateMachine for Connection {
    type Initial = Disconnected;
    type States = ConnectionStates;
    const NAME: &'static str = "Connection";

    fn initial(state: Disconnected) -> ConnectionStates {
        ConnectionStates::Disconnected(state)
    }

    fn state_name(states: &ConnectionStates) -> Option<&'static str> {
        match states {
            ConnectionStates::Disconnected(_) => Some("Disconnected"),
            ConnectionStates::Authenticating(_) => Some("Authenticating"),
            ConnectionStates::Ready(_) => Some("Ready"),
            ConnectionStates::Closing(_) => Some("Closing"),
            ConnectionStates::Vacant => None,
        }
    }

    // One `match` on the state: the state's own handlers do the rest.
    fn dispatch<'a>(parts: Parts<'a, Self>, message: ConnectionMsg) -> Handled<'a, ConnectionMsg> {
        match parts.states {
            ConnectionStates::Disconnected(_) => Disconnected::handle(parts, message),
            ConnectionStates::Authenticating(_) => Authenticating::handle(parts, message),
            ConnectionStates::Ready(_) => Ready::handle(parts, message),
            ConnectionStates::Closing(_) => Closing::handle(parts, message),
            ConnectionStates::Vacant => tapio::state::vacant(parts, message),
        }
    }

    // No state here has an entry or an exit hook.
    fn enter(_parts: Parts<'_, Self>) -> Result<(), Failure> {
        Ok(())
    }

    fn exit(_parts: Parts<'_, Self>, _state: &'static str) -> Result<(), Failure> {
        Ok(())
    }
}

/// `StateOf` for one state: its machine, its successors, and how it goes in and
/// out of the enum of states.
macro_rules! state_of {
    ($state:ident, $successors:ty) => {
        impl StateOf for $state {
            type Machine = Connection;
            type Successors = $successors;
            const NAME: &'static str = stringify!($state);

            fn into_states(self) -> ConnectionStates {
                ConnectionStates::$state(self)
            }

            fn get(states: &mut ConnectionStates) -> Option<&mut Self> {
                match states {
                    ConnectionStates::$state(state) => Some(state),
                    _ => None,
                }
            }

            fn take(states: &mut ConnectionStates) -> Option<Self> {
                match std::mem::replace(states, ConnectionStates::Vacant) {
                    ConnectionStates::$state(state) => Some(state),
                    other => {
                        *states = other;
                        None
                    }
                }
            }
        }
    };
}

state_of!(Disconnected, Authenticating);
state_of!(Authenticating, Ready);
state_of!(Ready, Closing);
state_of!(Closing, NoSuccessors);

// The table, one row a state: `Next::to(x)` asks for `Self: Transition<X>`, so a
// switch without a row here does not compile. `Transition` is sealed (a
// hand-written impl does not compile); `transitions!` is the one way to declare it
// without `#[actor(states(..))]`, and it takes each state once, so it cannot widen
// a table the macro declared.
transitions! {
    Disconnected => Authenticating;
    Authenticating => Ready;
    Ready => Closing;
    Closing => ;
}

/// The name of the message inside a protocol value.
fn name(message: &ConnectionMsg) -> &'static str {
    match message {
        ConnectionMsg::Connect(..) => "Connect",
        ConnectionMsg::Authenticated(..) => "Authenticated",
        ConnectionMsg::Transmit(..) => "Transmit",
        ConnectionMsg::Close(..) => "Close",
    }
}

// Each state's block: a handler that switches takes the state out (`take`), runs,
// and hands `switched` what comes next; `#[otherwise]` gets the rest whole.
impl StateHandlers for Disconnected {
    fn handle<'a>(
        parts: Parts<'a, Connection>,
        message: ConnectionMsg,
    ) -> Handled<'a, ConnectionMsg> {
        match message {
            ConnectionMsg::Connect(_, reply) => {
                let Some(_state) = Disconnected::take(&mut *parts.states) else {
                    return tapio::state::lost::<Connection>();
                };
                let conn = &mut *parts.data;
                conn.say("conn: connecting, asking for a token".into());
                conn.service.tell(Issue {
                    reply_to: conn.tokens.clone(),
                });
                let next: Next<Disconnected> = Next::to(Authenticating);
                Handled::ready(tapio::state::switched::<Connection, Disconnected, _, _>(
                    parts, next, reply,
                ))
            }
            other => {
                parts
                    .data
                    .say(format!("conn: refused {}, not open", name(&other)));
                Handled::ready(())
            }
        }
    }
}

impl StateHandlers for Authenticating {
    fn handle<'a>(
        parts: Parts<'a, Connection>,
        message: ConnectionMsg,
    ) -> Handled<'a, ConnectionMsg> {
        match message {
            ConnectionMsg::Authenticated(message, reply) => {
                let Some(_state) = Authenticating::take(&mut *parts.states) else {
                    return tapio::state::lost::<Connection>();
                };
                parts
                    .data
                    .say(format!("conn: authenticated with {}", message.token));
                let next: Next<Authenticating> = Next::to(Ready {
                    token: message.token,
                });
                Handled::ready(tapio::state::switched::<Connection, Authenticating, _, _>(
                    parts, next, reply,
                ))
            }
            other => {
                parts
                    .data
                    .say(format!("conn: refused {}, still connecting", name(&other)));
                Handled::ready(())
            }
        }
    }
}

impl StateHandlers for Ready {
    fn handle<'a>(
        parts: Parts<'a, Connection>,
        message: ConnectionMsg,
    ) -> Handled<'a, ConnectionMsg> {
        match message {
            ConnectionMsg::Transmit(message, _) => {
                let Some(ready) = Ready::get(&mut *parts.states) else {
                    return tapio::state::lost::<Connection>();
                };
                parts.data.say(format!(
                    "conn: sent {:?} with {}",
                    message.payload, ready.token
                ));
                Handled::ready(())
            }
            ConnectionMsg::Close(_, reply) => {
                let Some(_ready) = Ready::take(&mut *parts.states) else {
                    return tapio::state::lost::<Connection>();
                };
                parts
                    .data
                    .say("conn: closing, draining what is queued".into());
                parts.ctx.self_ref().tell(Close);
                let next: Next<Ready> = Next::to(Closing);
                Handled::ready(tapio::state::switched::<Connection, Ready, _, _>(
                    parts, next, reply,
                ))
            }
            other => {
                parts
                    .data
                    .say(format!("conn: refused {}, open", name(&other)));
                Handled::ready(())
            }
        }
    }
}

impl StateHandlers for Closing {
    fn handle<'a>(
        parts: Parts<'a, Connection>,
        message: ConnectionMsg,
    ) -> Handled<'a, ConnectionMsg> {
        match message {
            ConnectionMsg::Close(_, reply) => {
                let Some(_closing) = Closing::take(&mut *parts.states) else {
                    return tapio::state::lost::<Connection>();
                };
                parts.data.say("conn: closed".into());
                let next: Next<Closing> = Next::stop();
                Handled::ready(tapio::state::switched::<Connection, Closing, _, _>(
                    parts, next, reply,
                ))
            }
            other => {
                parts
                    .data
                    .say(format!("conn: dropped {}, closing", name(&other)));
                Handled::ready(())
            }
        }
    }
}

/// The connection, built with its adapter; it starts disconnected.
pub fn connection(service: ActorRef<Issue>, lines: Lines, said: Tally) -> Behavior<ConnectionMsg> {
    Behaviors::setup(move |ctx| {
        let tokens = ctx.message_adapter(|token: Token| Authenticated { token: token.value });
        let data = Connection {
            lines: lines.clone(),
            said: said.clone(),
            service: service.clone(),
            tokens,
        };
        Machine::new(data, Disconnected)
    })
}

/// Run the example: the lines the connection wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let said = Tally::default();
    let system = ActorSystem::new("state-machine-by-hand")?;
    let service = system.spawn(tokens(), "tokens")?;
    let conn = system.spawn(connection(service, lines.clone(), said.clone()), "conn")?;
    let transmit = |payload: &str| Transmit {
        payload: payload.into(),
    };
    conn.tell(transmit("hello"));
    conn.tell(Connect);
    conn.tell(transmit("hello again"));
    said.reached(4).await;
    conn.tell(transmit("hello"));
    conn.tell(Close);
    conn.tell(transmit("too late"));
    said.reached(4).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
