//! Two live nodes, a broken network, and each of them wrong about the other.
//!
//! Concepts: the failure detector (`heartbeat_interval`, `unreachable_after`),
//! `PeerUnreachable` on the event stream, quarantine, and `clear_quarantine` with
//! `reconnect` as the explicit repair.
//!
//! This is the uncomfortable example. Nothing dies: both systems run the whole time,
//! both keep doing their own work, and the only thing that breaks is the network
//! between them. Each then concludes that the other is gone, tells its watchers so,
//! and stops sending. Both conclusions are wrong, and both are the best one node can
//! do: from a single node a partition, a long pause and a dead process look the same.
//!
//! Telling them apart needs a quorum, enough nodes to vote, so that the minority
//! side of a partition can find out it is the minority. That is clustering, and it is
//! not in tapio. What is here instead is a failure that can be recovered from: give
//! the peer up quickly, freeze its address, and let a person or a supervisor decide
//! when to talk again. Once watchers have been told that live actors are gone, a link
//! that quietly came back would leave the two nodes with contradictory beliefs and
//! nothing to notice it, so healing the network repairs nothing by itself.
//!
//! What to watch in the output: both nodes give the other up and are told its actor
//! has stopped, and both go on answering their own callers. After the network heals
//! a poke is still a dead letter; the link is back only because both sides cleared
//! the quarantine and one reconnected, and only through refs resolved again.
//!
//! Run it with `cargo run --example partition`.

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::testkit::two_nodes_named;
use tapio::{DeadLetter, DeadLetterReason, Subscription};
use tapio_examples::partition_messages::{Poke, Poked};
use tapio_examples::support::{self, ExampleError, Lines, within};
use tokio::sync::mpsc;

/// How often each link heartbeats.
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// How long a silence gives a peer up. Short, for an example; in production it is
/// seconds, comfortably longer than an ordinary slow moment.
pub const UNREACHABLE_AFTER: Duration = Duration::from_secs(1);

/// What an actor says, sent to `run`, which writes the lines down in an order of its
/// choosing: the two nodes run at once, and the output must not depend on which of
/// them is quicker.
type Say = mpsc::UnboundedSender<String>;

/// What one node's actors said.
type Heard = mpsc::UnboundedReceiver<String>;

/// An actor that answers every poke, through everything.
fn steady(node: &'static str, say: Say) -> Behavior<Poke> {
    Behaviors::receive_message(move |poke: Poke| {
        let _ = say.send(format!("{node}: poked by {}, still answering", poke.by));
        poke.reply_to.tell(Poked {
            by: node.to_owned(),
        });
    })
    .into()
}

/// An actor that watches the steady actor of the other node, and says what it
/// hears: answers, and the news that the actor has stopped.
fn mourner(node: &'static str, other: ActorRef<Poke>, say: Say) -> Behavior<Poked> {
    Behaviors::setup(move |ctx| {
        ctx.watch(&other);
        let (said, say) = (say.clone(), say.clone());
        Behaviors::receive_message(move |poked: Poked| {
            let _ = said.send(format!("{node}: answered by the actor on {}", poked.by));
        })
        .on_signal(move |_, signal| {
            if let Signal::Terminated(end) = signal {
                // It has not stopped. It is on the other side of a partition,
                // answering somebody else. Nothing in this signal says so, and
                // nothing could.
                let path = end.actor().path();
                let _ = say.send(format!(
                    "{node}: told that {path} on {} has stopped",
                    path.address().system()
                ));
            }
        })
    })
}

/// The next thing a node's actors said.
async fn next(heard: &mut Heard) -> Result<String, ExampleError> {
    within("an actor's report", heard.recv())
        .await?
        .ok_or_else(|| "the actors have stopped".into())
}

/// The next peer `node` gives up on, as a line.
async fn gave_up(
    node: &str,
    events: &mut Subscription<PeerUnreachable>,
) -> Result<String, ExampleError> {
    let event = within("PeerUnreachable", events.recv())
        .await?
        .ok_or("the event stream closed")?;
    let verdict = if event.quarantined {
        "quarantined"
    } else {
        "not quarantined"
    };
    Ok(format!(
        "{node}: nothing from {} for {UNREACHABLE_AFTER:?}, gave it up: {verdict}",
        event.peer.system()
    ))
}

/// The reason of the next dead letter of a `Poke`.
async fn refused(letters: &mut Subscription<DeadLetter>) -> Result<DeadLetterReason, ExampleError> {
    loop {
        let letter = within("a dead letter", letters.recv())
            .await?
            .ok_or("the event stream closed")?;
        if letter.is::<Poke>() {
            return Ok(letter.reason().clone());
        }
    }
}

/// Run the example: both nodes' lines, in the order `run` collected them.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(HEARTBEAT)
        .unreachable_after(UNREACHABLE_AFTER);
    let nodes = two_nodes_named("home", "away", settings)?;
    let (home, away) = (&nodes.a, &nodes.b);
    let (home_says, mut home_heard) = mpsc::unbounded_channel();
    let (away_says, mut away_heard) = mpsc::unbounded_channel();
    let mut home_gives_up = home.events().subscribe::<PeerUnreachable>();
    let mut away_gives_up = away.events().subscribe::<PeerUnreachable>();

    let home_steady = home.spawn(steady("home", home_says.clone()), "steady")?;
    let away_steady = away.spawn(steady("away", away_says.clone()), "steady")?;
    let to_away = home.resolve::<Poke>(&away_steady.path().to_uri())?;
    let to_home = away.resolve::<Poke>(&home_steady.path().to_uri())?;
    let home_mourner = home.spawn(mourner("home", to_away.clone(), home_says), "mourner")?;
    let away_mourner = away.spawn(mourner("away", to_home.clone(), away_says), "mourner")?;

    // The link works, both ways.
    to_away.tell(Poke {
        by: "home".into(),
        reply_to: home_mourner.clone(),
    });
    lines.push(next(&mut away_heard).await?);
    lines.push(next(&mut home_heard).await?);
    to_home.tell(Poke {
        by: "away".into(),
        reply_to: away_mourner.clone(),
    });
    lines.push(next(&mut home_heard).await?);
    lines.push(next(&mut away_heard).await?);

    // Nothing dies. The two nodes simply stop hearing each other, heartbeats
    // included, until each failure detector gives up.
    nodes.partition();
    lines.push("home: the network between home and away is cut");
    lines.push(gave_up("home", &mut home_gives_up).await?);
    lines.push(gave_up("away", &mut away_gives_up).await?);
    lines.push(next(&mut home_heard).await?);
    lines.push(next(&mut away_heard).await?);

    // Both still do their own work, each believing the other is gone.
    home_steady.tell(Poke {
        by: "home".into(),
        reply_to: home_mourner.clone(),
    });
    lines.push(next(&mut home_heard).await?);
    lines.push(next(&mut home_heard).await?);
    away_steady.tell(Poke {
        by: "away".into(),
        reply_to: away_mourner.clone(),
    });
    lines.push(next(&mut away_heard).await?);
    lines.push(next(&mut away_heard).await?);

    // The network is fine again, and nothing reconnects by itself.
    nodes.heal();
    let mut letters = home.events().subscribe::<DeadLetter>();
    to_away.tell(Poke {
        by: "home".into(),
        reply_to: home_mourner.clone(),
    });
    lines.push(match refused(&mut letters).await? {
        DeadLetterReason::Quarantined { peer } => format!(
            "home: the network is back, and a poke to {} is still a dead letter: quarantined",
            peer.system()
        ),
        other => format!("home: the network is back, and a poke is a dead letter: {other}"),
    });

    // The repair is a decision: each side lifts its quarantine, and one dials.
    if home.clear_quarantine(away.address()) {
        lines.push("home: cleared the quarantine of away");
    }
    if away.clear_quarantine(home.address()) {
        lines.push("away: cleared the quarantine of home");
    }
    within("the reconnection", home.reconnect(away.address())).await??;
    lines.push("home: reconnected to away");

    // A ref from before names the session that ended; resolving again gives one
    // bound to the new session.
    to_away.tell(Poke {
        by: "home".into(),
        reply_to: home_mourner.clone(),
    });
    if let DeadLetterReason::SessionEnded { .. } | DeadLetterReason::Quarantined { .. } =
        refused(&mut letters).await?
    {
        lines.push("home: the old ref to away still dead-letters: its session has ended");
    }
    let to_away = home.resolve::<Poke>(&away_steady.path().to_uri())?;
    to_away.tell(Poke {
        by: "home".into(),
        reply_to: home_mourner,
    });
    lines.push(next(&mut away_heard).await?);
    lines.push(next(&mut home_heard).await?);
    let to_home = away.resolve::<Poke>(&home_steady.path().to_uri())?;
    to_home.tell(Poke {
        by: "away".into(),
        reply_to: away_mourner,
    });
    lines.push(next(&mut home_heard).await?);
    lines.push(next(&mut away_heard).await?);

    nodes.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
