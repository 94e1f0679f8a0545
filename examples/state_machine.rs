//! A protocol as a state machine: one type per state, and the switches the compiler
//! allows written down once.
//!
//! Concepts: `#[actor(messages(..), states(..))]` with a transition table,
//! `#[state]` blocks, `Next` for handlers that switch, `#[otherwise]` for what a
//! state does not handle, typed helpers on the ref (`conn.transmit(..)`), and
//! `ctx.message_adapter` for a service that answers in its own protocol.
//!
//! The usual connection has a `state` field and a `match` at the top of every
//! handler deciding whether this message is legal now. Here each state is its own
//! type with its own handlers. A `Transmit` that comes before the connection is open
//! is not an illegal combination to check for: `Disconnected` simply has no handler
//! for it. The token lives only in `Ready`, so no other state can even read it. And
//! the table says that `Disconnected` switches only to `Authenticating`: a handler
//! of `Disconnected` that wrote `Next::to(Ready { .. })` would not compile.
//!
//! The token service is somebody else's actor and answers in its own vocabulary,
//! `Token`. The connection hands it an adapter that turns a `Token` into the
//! `Authenticated` the connection's protocol has, so nobody else can send the
//! connection a `Token`.
//!
//! What to watch in the output: the `Transmit` that arrives while disconnected and
//! the one that arrives while authenticating are refused, each by its own state for
//! its own reason; the same `Transmit` after authentication goes through. `Close`
//! sends the connection a marker and drains what was queued before it: the
//! `Transmit` sent after `Close` is dropped, then the marker comes back and the
//! connection stops.
//!
//! Run it with `cargo run --example state_machine`.

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// What the token service answers: its own protocol, not the connection's.
#[message]
pub struct Token {
    /// The token.
    pub value: String,
}

/// What the token service accepts.
#[message]
pub struct Issue {
    /// Where the `Token` goes.
    pub reply_to: ActorRef<Token>,
}

/// Open the connection, which starts authentication.
#[message]
pub struct Connect;

/// A token has arrived, translated into the connection's protocol.
#[message]
pub struct Authenticated {
    /// The token.
    pub token: String,
}

/// Send a payload: only an open connection can.
#[message]
pub struct Transmit {
    /// What to send.
    pub payload: String,
}

/// Close the connection once what is queued has been handled.
#[message]
pub struct Close;

/// A service that mints tokens, in its own vocabulary.
pub fn tokens() -> Behavior<Issue> {
    Behaviors::receive_message(|issue: Issue| {
        issue.reply_to.tell(Token {
            value: "t-42".into(),
        });
    })
    .into()
}

/// What every state of the connection shares.
pub struct Connection {
    lines: Lines,
    said: Tally,
    service: ActorRef<Issue>,
    /// Handed to the token service in place of the connection's own ref.
    tokens: ActorRef<Token>,
}

impl Connection {
    fn say(&self, line: String) {
        self.lines.push(line);
        self.said.mark();
    }
}

#[actor(
    helpers,
    messages(Connect, Authenticated, Transmit, Close),
    states(
        Disconnected => Authenticating,
        Authenticating => Ready,
        Ready => Closing,
        Closing,
    )
)]
impl Connection {}

/// Nothing is open: only `Connect` means anything.
pub struct Disconnected;

#[state(Connection)]
impl Disconnected {
    fn connect(self, conn: &mut Connection, _: Connect) -> Next<Self> {
        conn.say("conn: connecting, asking for a token".into());
        conn.service.tell(Issue {
            reply_to: conn.tokens.clone(),
        });
        Next::to(Authenticating)
    }

    #[otherwise]
    fn refuse(&mut self, conn: &mut Connection, message: ConnectionMsg) {
        conn.say(format!("conn: refused {}, not open", name(&message)));
    }
}

/// Waiting for a token: still nothing can be sent.
pub struct Authenticating;

#[state(Connection)]
impl Authenticating {
    fn authenticated(self, conn: &mut Connection, message: Authenticated) -> Next<Self> {
        conn.say(format!("conn: authenticated with {}", message.token));
        Next::to(Ready {
            token: message.token,
        })
    }

    #[otherwise]
    fn refuse(&mut self, conn: &mut Connection, message: ConnectionMsg) {
        conn.say(format!(
            "conn: refused {}, still connecting",
            name(&message)
        ));
    }
}

/// Open, with its token: the only state that handles `Transmit`.
pub struct Ready {
    token: String,
}

#[state(Connection)]
impl Ready {
    fn transmit(&mut self, conn: &mut Connection, message: Transmit) {
        conn.say(format!(
            "conn: sent {:?} with {}",
            message.payload, self.token
        ));
    }

    fn close(self, conn: &mut Connection, ctx: &mut Ctx<Connection>, _: Close) -> Next<Self> {
        // A marker: everything already queued is ahead of it, so when it comes back
        // the mailbox is drained.
        conn.say("conn: closing, draining what is queued".into());
        ctx.self_ref().tell(Close);
        Next::to(Closing)
    }

    #[otherwise]
    fn refuse(&mut self, conn: &mut Connection, message: ConnectionMsg) {
        conn.say(format!("conn: refused {}, open", name(&message)));
    }
}

/// Going away: what was queued is dropped, then the marker stops it.
pub struct Closing;

#[state(Connection)]
impl Closing {
    fn closed(self, conn: &mut Connection, _: Close) -> Next<Self> {
        conn.say("conn: closed".into());
        Next::stop()
    }

    #[otherwise]
    fn drop_it(&mut self, conn: &mut Connection, message: ConnectionMsg) {
        conn.say(format!("conn: dropped {}, closing", name(&message)));
    }
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

/// The connection, built with its adapter; it starts disconnected.
pub fn connection(service: ActorRef<Issue>, lines: Lines, said: Tally) -> Behavior<ConnectionMsg> {
    Behaviors::setup(move |ctx| {
        // Runs inside the connection each time the service answers.
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
    let system = ActorSystem::new("state-machine")?;
    let service = system.spawn(tokens(), "tokens")?;
    let conn = system.spawn(connection(service, lines.clone(), said.clone()), "conn")?;
    // The typed helpers of `#[actor(helpers)]`: one per message of the protocol.
    // Too early: `Disconnected` has no handler for it.
    conn.transmit("hello".into());
    conn.connect();
    // Still too early, and refused by another state for its own reason.
    conn.transmit("hello again".into());
    // Those three, then the token through the adapter.
    said.reached(4).await;
    conn.transmit("hello".into());
    conn.close();
    conn.transmit("too late".into());
    said.reached(4).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
