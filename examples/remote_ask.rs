//! Asking an actor on another node, and the two ways the answer fails to come.
//!
//! Concepts: `ask_with` across a link, the answer finding its way back to a promise
//! on the asking node, and `AskError::Unreachable` told apart from
//! `AskError::Timeout`.
//!
//! The call is the one `ask_timeout` makes locally. What changes is the failures. A
//! local ask fails when nobody answers in time, or when the actor stops. A remote ask
//! can also find the peer *unreachable*: this node stopped hearing from it and gave
//! it up, while the actor over there may be perfectly healthy on the other side of a
//! partition.
//!
//! The two failures are different errors on purpose. `Timeout` says the peer was
//! there and nobody answered in time, so asking again later may help. `Unreachable`
//! says this node has given the peer up, so waiting will not help, and the ask does
//! not wait: it fails as soon as the peer is given up on, and at once after that,
//! whatever deadline it was given.
//!
//! What to watch in the output: both asks under the partition allowed thirty seconds,
//! and neither used them. The last lines are the point: the oracle that "disappeared"
//! answers again as soon as the link is deliberately restored.
//!
//! Run it with `cargo run --example remote_ask`.

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::testkit::two_nodes_named;
use tapio::{AskError, Subscription};
use tapio_examples::remote_ask_messages::{Answer, Question};
use tapio_examples::support::{self, ExampleError, Lines, Tally, within};
use tokio::time::Instant;

/// How often each link heartbeats.
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// How long a silence gives a peer up: short, for an example.
pub const UNREACHABLE_AFTER: Duration = Duration::from_secs(1);

/// How long the asker waits for an answer that is not coming.
pub const PATIENCE: Duration = Duration::from_millis(200);

/// The deadline of the asks under the partition: far longer than they take.
pub const GENEROUS: Duration = Duration::from_secs(30);

/// The question the oracle thinks about forever.
const UNANSWERABLE: &str = "the meaning of life";

/// Answers questions, except one it keeps thinking about: it holds on to that
/// reply ref and never answers it.
#[derive(Debug, Clone)]
pub struct Oracle {
    lines: Lines,
    pondering: Tally,
    unanswered: Vec<ActorRef<Answer>>,
}

impl Oracle {
    /// An oracle that writes what it is asked to `lines`, and marks `pondering`
    /// when it starts thinking about a question it will not answer.
    pub fn new(lines: Lines, pondering: Tally) -> Self {
        Self {
            lines,
            pondering,
            unanswered: Vec::new(),
        }
    }
}

#[actor]
impl Oracle {
    fn question(&mut self, question: Question) {
        if question.text == UNANSWERABLE {
            self.lines.push(format!(
                "away: asked {:?}, still thinking it over",
                question.text
            ));
            self.unanswered.push(question.reply_to);
            self.pondering.mark();
            return;
        }
        self.lines
            .push(format!("away: asked {:?}, answering 42", question.text));
        question.reply_to.tell(Answer {
            question: question.text,
            answer: "42".into(),
        });
    }
}

/// Ask `oracle` `text`, allowing `deadline`.
fn ask(oracle: &ActorRef<Question>, text: &str, deadline: Duration) -> tapio::Ask<Answer> {
    oracle
        .ask_with(|reply_to| Question {
            text: text.to_owned(),
            reply_to,
        })
        .timeout(deadline)
}

/// The next peer given up on.
async fn given_up(
    events: &mut Subscription<PeerUnreachable>,
) -> Result<PeerUnreachable, ExampleError> {
    Ok(within("PeerUnreachable", events.recv())
        .await?
        .ok_or("the event stream closed")?)
}

/// Run the example: the lines both nodes wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let pondering = Tally::default();
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(HEARTBEAT)
        .unreachable_after(UNREACHABLE_AFTER);
    let nodes = two_nodes_named("home", "away", settings)?;
    let (home, away) = (&nodes.a, &nodes.b);
    let oracle = away.spawn(Oracle::new(lines.clone(), pondering.clone()), "oracle")?;
    let uri = oracle.path().to_uri();
    let remote = home.resolve::<Question>(&uri)?;

    // An answer, across the link and back to the promise.
    let answer = within("an answer", ask(&remote, "six times seven", PATIENCE)).await??;
    lines.push(format!(
        "home: {} is {}, says away",
        answer.question, answer.answer
    ));

    // The peer is there, and nobody answers: the deadline ends the wait.
    let outcome = within("a timeout", ask(&remote, UNANSWERABLE, PATIENCE)).await?;
    within("the oracle to start thinking", pondering.reached(1)).await?;
    if let Err(AskError::Timeout { after, .. }) = outcome {
        lines.push(format!(
            "home: no answer about {UNANSWERABLE} within {after:?}, and away is still there: a timeout"
        ));
    }

    // Now the network is the problem, not the oracle, which keeps running on its own
    // node throughout. The ask allows thirty seconds, and fails when the failure
    // detector gives away up, a second after the link went quiet.
    // Away gives home up too, on its own: both sides must have done so before the
    // repair, or away would quarantine home after it had been told not to.
    let mut home_gives_up = home.events().subscribe::<PeerUnreachable>();
    let mut away_gives_up = away.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    lines.push("home: the network between home and away is cut");
    let asked = Instant::now();
    let (outcome, home_gave_up, away_gave_up) = within("the ask in flight to fail", async {
        tokio::join!(
            ask(&remote, "six times seven", GENEROUS),
            given_up(&mut home_gives_up),
            given_up(&mut away_gives_up)
        )
    })
    .await?;
    for (node, event) in [("home", home_gave_up?), ("away", away_gave_up?)] {
        lines.push(format!(
            "{node}: nothing from {} for {UNREACHABLE_AFTER:?}, gave it up",
            event.peer.system()
        ));
    }
    if let Err(AskError::Unreachable { .. }) = outcome
        && asked.elapsed() < GENEROUS / 3
    {
        lines.push(format!(
            "home: the ask in flight failed then: away is unreachable, long before its {GENEROUS:?} deadline"
        ));
    }

    // Asked again now that away is quarantined: it fails at once.
    let asked = Instant::now();
    let outcome = within("an ask to fail", ask(&remote, "six times seven", GENEROUS)).await?;
    if let Err(AskError::Unreachable { .. }) = outcome
        && asked.elapsed() < Duration::from_secs(1)
    {
        lines.push(format!(
            "home: asked again allowing {GENEROUS:?}: unreachable in under a second, away is quarantined"
        ));
    }

    // The repair is explicit: both sides lift the quarantine, and home dials. Refs
    // from before name the session that ended, so the oracle is resolved again.
    nodes.heal();
    home.clear_quarantine(away.address());
    away.clear_quarantine(home.address());
    within("the reconnection", home.reconnect(away.address())).await??;
    lines.push("home: cleared the quarantine on both sides and reconnected");
    let again = home.resolve::<Question>(&uri)?;
    let answer = within("an answer", ask(&again, "six times seven", PATIENCE)).await??;
    lines.push(format!(
        "home: {} is still {}, says away",
        answer.question, answer.answer
    ));

    nodes.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
