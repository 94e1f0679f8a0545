//! Akka's chat room, ported: a room that hands out sessions, and clients that talk
//! through them.
//!
//! Concepts: a child per client, `ctx.message_adapter` for a client that speaks its
//! own protocol, narrowed refs that hand out only what the holder may send,
//! `ctx.watch_with`, and watching an adapter (which watches its owner).
//!
//! A client asks the room for a session with `GetSession(screen_name, reply_to)`. The
//! room spawns a session for it, a child, and grants the client a ref through which it
//! can post and do nothing else. A session posts what its client says to the room,
//! and the room tells every session, which tells its client.
//!
//! The room speaks `SessionEvent`; a gabbler, the client here, does not. It has a
//! protocol of its own, and gives the room an adapter: a ref of type
//! `ActorRef<SessionEvent>` whose messages reach the gabbler translated. So the
//! session's client is the adapter, and when the session watches its client it
//! watches the adapter. That is enough: an adapter stops with its owner, so watching
//! it watches the gabbler, and the session closes when the gabbler stops.
//!
//! The session watches with `watch_with`, not `watch`, for a client's last words. A
//! gabbler that posts and stops in one handler sends its post before it stops, and
//! the message `watch_with` queues comes after it. `Terminated` is a signal, taken
//! ahead of the mailbox: with `watch` in its place, the session sees its client gone
//! before it sees the post, closes, and the goodbye is lost.
//!
//! What to watch in the output: linus says goodbye and leaves in the same breath,
//! and the others still hear the goodbye: his session passed it on, then closed.
//! Grace stops without a word; her session only ever held her adapter, and closes
//! all the same. Lines about a broadcast are sorted by who hears it, since the
//! clients hear it at the same time.
//!
//! Run it with `cargo run --example chat_room`.

use std::collections::BTreeMap;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, within};
use tokio::sync::mpsc;

/// Where the actors of this example report to `run`, which prints.
#[derive(Debug, Clone)]
pub struct Report {
    /// What happens in order: joins, sessions closing, the room counting.
    said: mpsc::UnboundedSender<String>,
    /// What each client hears of a broadcast; clients hear one at the same time.
    heard: mpsc::UnboundedSender<String>,
}

impl Report {
    fn say(&self, line: String) {
        let _ = self.said.send(line);
    }

    fn hear(&self, line: String) {
        let _ = self.heard.send(line);
    }
}

// The room's protocol.

/// Ask for a session under `screen_name`; the answer goes to `reply_to`.
#[message]
pub struct GetSession {
    /// The name the client posts under.
    pub screen_name: String,
    /// The client, as the room sees it: whatever takes [`SessionEvent`]s.
    pub reply_to: ActorRef<SessionEvent>,
}

/// A session passing on what its client posted.
#[message]
pub struct PublishSessionMessage {
    /// Who posted it.
    pub screen_name: String,
    /// What was posted.
    pub message: String,
}

/// What `watch_with` delivers to the room when a session stops.
#[message]
pub struct SessionClosed(pub String);

/// What a client hears from the room.
#[message]
pub enum SessionEvent {
    /// A session, as a ref that can only post.
    SessionGranted(ActorRef<PostMessage>),
    /// No session, and why.
    SessionDenied(String),
    /// Somebody posted something.
    MessagePosted {
        /// Who.
        screen_name: String,
        /// What.
        message: String,
    },
}

// The session's protocol.

/// Post a message to the room: all a client can send its session.
#[message]
pub struct PostMessage(pub String);

/// The room passing a post on to the session's client.
#[message]
pub struct NotifyClient {
    /// Who posted it.
    pub screen_name: String,
    /// What was posted.
    pub message: String,
}

/// What `watch_with` delivers to a session when its client stops.
#[message]
pub struct ClientLeft;

/// The room: one session per client, and every post to every session.
#[derive(Debug, Clone)]
pub struct ChatRoom {
    sessions: BTreeMap<String, ActorRef<SessionMsg>>,
    report: Report,
}

impl ChatRoom {
    /// An empty room.
    pub fn new(report: Report) -> Self {
        Self {
            sessions: BTreeMap::new(),
            report,
        }
    }
}

#[actor]
impl ChatRoom {
    fn get_session(&mut self, ctx: &mut Ctx<Self>, request: GetSession) {
        let GetSession {
            screen_name,
            reply_to,
        } = request;
        if self.sessions.contains_key(&screen_name) {
            reply_to.tell(SessionEvent::SessionDenied(format!(
                "{screen_name} is taken"
            )));
            return;
        }
        // A session may publish to the room, and nothing else.
        let room = ctx.self_ref().narrow();
        let behavior = session(
            room,
            screen_name.clone(),
            reply_to.clone(),
            self.report.clone(),
        );
        match ctx.spawn(behavior, &format!("session-{screen_name}")) {
            Ok(session) => {
                ctx.watch_with(&session, SessionClosed(screen_name.clone()));
                reply_to.tell(SessionEvent::SessionGranted(session.narrow()));
                self.sessions.insert(screen_name, session);
            }
            // A name that cannot name an actor.
            Err(error) => reply_to.tell(SessionEvent::SessionDenied(error.to_string())),
        }
    }

    fn publish(&mut self, post: PublishSessionMessage) {
        for session in self.sessions.values() {
            session.tell(NotifyClient {
                screen_name: post.screen_name.clone(),
                message: post.message.clone(),
            });
        }
    }

    fn session_closed(&mut self, SessionClosed(screen_name): SessionClosed) {
        self.sessions.remove(&screen_name);
        self.report.say(format!(
            "room: {screen_name} left, {} in the room",
            self.sessions.len()
        ));
    }
}

/// One client's session: posts for it, tells it what was posted, and closes when it
/// stops.
#[derive(Debug)]
pub struct Session {
    screen_name: String,
    room: ActorRef<PublishSessionMessage>,
    client: ActorRef<SessionEvent>,
    report: Report,
}

/// The session of `client`, who posts to `room` as `screen_name`.
pub fn session(
    room: ActorRef<PublishSessionMessage>,
    screen_name: String,
    client: ActorRef<SessionEvent>,
    report: Report,
) -> Behavior<SessionMsg> {
    Behaviors::setup(move |ctx| {
        // `client` may be an adapter; watching it watches the actor that owns it.
        ctx.watch_with(&client, ClientLeft);
        Session {
            screen_name: screen_name.clone(),
            room: room.clone(),
            client: client.clone(),
            report: report.clone(),
        }
    })
}

#[actor]
impl Session {
    fn post(&mut self, PostMessage(message): PostMessage) {
        self.room.tell(PublishSessionMessage {
            screen_name: self.screen_name.clone(),
            message,
        });
    }

    fn notify(
        &mut self,
        NotifyClient {
            screen_name,
            message,
        }: NotifyClient,
    ) {
        self.client.tell(SessionEvent::MessagePosted {
            screen_name,
            message,
        });
    }

    fn client_left(&mut self, _: ClientLeft) -> Behavior<SessionMsg> {
        self.report.say(format!(
            "session {}: its client stopped, closing",
            self.screen_name
        ));
        Behaviors::stopped()
    }
}

/// A gabbler's own protocol: what it is told to do, and what it hears from the room,
/// in its own words.
#[message]
pub enum Gabbler {
    /// Post this.
    Say(String),
    /// Post these last words, and stop.
    Leave(String),
    /// The room granted a session.
    Joined(ActorRef<PostMessage>),
    /// The room refused a session.
    Denied(String),
    /// Somebody posted something.
    Heard {
        /// Who.
        from: String,
        /// What.
        text: String,
    },
}

/// A client that joins the room as `screen_name`, says what it is told to, and
/// reports what it hears.
pub fn gabbler(
    screen_name: String,
    room: ActorRef<GetSession>,
    report: Report,
) -> Behavior<Gabbler> {
    Behaviors::setup(move |ctx| {
        // The room's events, translated into the gabbler's protocol, inside the
        // gabbler.
        let events = ctx.message_adapter(|event: SessionEvent| match event {
            SessionEvent::SessionGranted(session) => Gabbler::Joined(session),
            SessionEvent::SessionDenied(reason) => Gabbler::Denied(reason),
            SessionEvent::MessagePosted {
                screen_name,
                message,
            } => Gabbler::Heard {
                from: screen_name,
                text: message,
            },
        });
        room.tell(GetSession {
            screen_name: screen_name.clone(),
            reply_to: events,
        });
        joining(screen_name.clone(), report.clone())
    })
}

/// Waiting for the room's answer.
fn joining(screen_name: String, report: Report) -> Behavior<Gabbler> {
    Behaviors::receive_message(move |message: Gabbler| match message {
        Gabbler::Joined(session) => {
            report.say(format!("{screen_name}: joined the room"));
            chatting(screen_name.clone(), session, report.clone())
        }
        Gabbler::Denied(reason) => {
            report.say(format!("{screen_name}: denied, {reason}"));
            Behaviors::stopped()
        }
        // Nothing to say anything through yet.
        Gabbler::Say(_) | Gabbler::Leave(_) | Gabbler::Heard { .. } => Behaviors::unhandled(),
    })
    .into()
}

/// In the room, through `session`.
fn chatting(
    screen_name: String,
    session: ActorRef<PostMessage>,
    report: Report,
) -> Behavior<Gabbler> {
    Behaviors::receive_message(move |message: Gabbler| match message {
        Gabbler::Say(text) => {
            session.tell(PostMessage(text));
            Behaviors::same()
        }
        Gabbler::Leave(last_words) => {
            session.tell(PostMessage(last_words));
            Behaviors::stopped()
        }
        Gabbler::Heard { from, text } => {
            report.hear(format!("{screen_name} hears {from}: {text}"));
            Behaviors::same()
        }
        Gabbler::Joined(_) | Gabbler::Denied(_) => Behaviors::unhandled(),
    })
    .into()
}

/// The next `n` lines from `lines`, each waited for at most [`support::WAIT`].
async fn next(
    lines: &mut mpsc::UnboundedReceiver<String>,
    n: usize,
    what: &str,
) -> Result<Vec<String>, ExampleError> {
    let mut got = Vec::with_capacity(n);
    for _ in 0..n {
        let line = within(what, lines.recv()).await?;
        got.push(line.ok_or("every actor reporting has stopped")?);
    }
    Ok(got)
}

/// What `n` clients heard of one broadcast, sorted by who heard it.
async fn broadcast(
    heard: &mut mpsc::UnboundedReceiver<String>,
    n: usize,
    what: &str,
) -> Result<Vec<String>, ExampleError> {
    let mut got = next(heard, n, what).await?;
    got.sort();
    Ok(got)
}

/// Run the example and return what happened in the room, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let (said_tx, mut said) = mpsc::unbounded_channel();
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    let report = Report {
        said: said_tx,
        heard: heard_tx,
    };
    let mut lines = Vec::new();
    let system = ActorSystem::new("chat-room")?;
    let room = system.spawn(ChatRoom::new(report.clone()), "room")?;

    let mut join = async |name: &str| -> Result<ActorRef<Gabbler>, ExampleError> {
        let client = system.spawn(gabbler(name.into(), room.narrow(), report.clone()), name)?;
        lines.extend(next(&mut said, 1, "a client to join").await?);
        Ok(client)
    };
    let ada = join("ada").await?;
    let grace = join("grace").await?;
    let linus = join("linus").await?;

    ada.tell(Gabbler::Say("hello, everyone".into()));
    lines.extend(broadcast(&mut heard, 3, "three clients to hear ada").await?);

    // The goodbye is posted before linus stops, and his session closes after
    // passing it on.
    linus.tell(Gabbler::Leave("bye for now".into()));
    lines.extend(broadcast(&mut heard, 2, "two clients to hear linus").await?);
    lines.extend(next(&mut said, 2, "linus's session to close").await?);

    // Grace stops without a word. Her session holds only her adapter.
    system.stop(&grace)?;
    lines.extend(next(&mut said, 2, "grace's session to close").await?);

    ada.tell(Gabbler::Say("anyone here?".into()));
    lines.extend(broadcast(&mut heard, 1, "ada to hear herself").await?);

    system.terminate().await;
    Ok(lines)
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
