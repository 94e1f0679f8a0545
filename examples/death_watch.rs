//! Keeping a registry honest when the things in it can stop on their own.
//!
//! Concepts: `ctx.watch`, the `Terminated` signal (handled by the `#[signal]` method of
//! a struct actor), and evicting an entry without leaking it.
//!
//! A registry of live actors comes with the same bug every time: entries for actors
//! that have since stopped. Asking a ref whether it is still alive does not exist in
//! tapio and would not work if it did: the answer would be out of date as soon as it
//! was read. Watching turns this around. Instead of asking, the registry is told,
//! exactly once, on its system lane, and removes the entry where that fact arrives.
//!
//! The sessions are not the registry's children. Watching is not parenthood: it is a
//! one-way subscription to "this actor has stopped", the most one actor can know about
//! another it does not supervise.
//!
//! What to watch in the output: the registry never checks whether a session is alive.
//! It is told, and the census afterwards shows the entry is gone.
//!
//! Run it with `cargo run --example death_watch`.

use std::collections::BTreeMap;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// Ask a session to end itself.
#[message]
pub struct Close;

/// Tell the registry about a session it should keep track of.
#[message]
pub struct Register {
    /// Its name.
    pub who: String,
    /// The session.
    pub session: ActorRef<Close>,
}

/// Ask the registry who it still holds.
#[message]
pub struct Census;

/// A session that ends when asked, and says nothing on the way out.
pub fn session() -> Behavior<Close> {
    Behaviors::receive_message(|_: Close| Behaviors::stopped()).into()
}

/// A registry of live sessions that evicts by being told, not by asking.
///
/// `changed` is marked after each registration, eviction and census, so `main` can
/// wait for each step instead of sleeping.
#[derive(Debug, Clone)]
pub struct Registry {
    live: BTreeMap<String, ActorRef<Close>>,
    lines: Lines,
    changed: Tally,
}

impl Registry {
    /// An empty registry.
    pub fn new(lines: Lines, changed: Tally) -> Self {
        Self {
            live: BTreeMap::new(),
            lines,
            changed,
        }
    }
}

#[actor]
impl Registry {
    fn register(&mut self, ctx: &mut Ctx<Self>, Register { who, session }: Register) {
        // One call, and from here on this registry cannot hold a stale entry for
        // that session.
        ctx.watch(&session);
        self.live.insert(who.clone(), session);
        self.lines.push(format!(
            "registry: registered {who}, holding {}",
            self.live.len()
        ));
        self.changed.mark();
    }

    fn census(&mut self, _: Census) {
        let names: Vec<&str> = self.live.keys().map(String::as_str).collect();
        self.lines
            .push(format!("registry: holding [{}]", names.join(", ")));
        self.changed.mark();
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if let Signal::Terminated(end) = signal {
            // The signal carries the ref, and a ref knows its path, so the entry is
            // found without a second table.
            let who = end.actor().path().name();
            self.live.remove(who);
            self.lines.push(format!(
                "registry: {who} stopped, holding {}",
                self.live.len()
            ));
            self.changed.mark();
        }
    }
}

/// Run the example and return one line per thing the registry did, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let changed = Tally::default();
    let system = ActorSystem::new("death-watch")?;
    let desk = system.spawn(Registry::new(lines.clone(), changed.clone()), "registry")?;
    let ada = system.spawn(session(), "ada")?;
    let grace = system.spawn(session(), "grace")?;
    desk.tell(Register {
        who: "ada".into(),
        session: ada.clone(),
    });
    desk.tell(Register {
        who: "grace".into(),
        session: grace,
    });
    changed.reached(2).await;

    // The session ends for its own reasons. Nobody tells the registry, and it finds
    // out anyway.
    ada.tell(Close);
    changed.reached(1).await;
    desk.tell(Census);
    changed.reached(1).await;

    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
