//! The `counter` example with what `#[message]` and `#[actor]` generate written out
//! by hand.
//!
//! Concepts: the `Message` trait, the protocol enum with one variant per message type
//! (each next to its reply slot), `Accepts<M>` (what makes `tell` type-check), and the
//! `Actor` impl whose `handle` dispatches a variant to its method.
//!
//! Nothing here is needed in a real program; it is here so the macros hide nothing.
//! Compare it with `counter.rs` line by line.
//!
//! What to watch in the output: the same `counter: 3` as `counter`.
//!
//! Run it with `cargo run --example counter_without_macros`.

use tapio::{
    Accepts, Actor, ActorContext, ActorRef, ActorSystem, Behaviors, Handled, Message, NoReply,
    Payload, Protocol,
};
use tapio_examples::support::{self, ExampleError};

/// The answer to a `GetCount`.
pub struct Count {
    /// The count when the query was handled.
    pub value: u64,
}

// `#[message]` writes this: a plain message, so no answer is expected for it.
impl Message for Count {
    type ReplySlot = NoReply;
}

/// Add to the count.
pub struct Increment {
    /// How much to add.
    pub by: u64,
}

impl Message for Increment {
    type ReplySlot = NoReply;
}

/// Ask for the count, and say where to send it.
pub struct GetCount {
    /// Where the count goes.
    pub reply_to: ActorRef<Count>,
}

impl Message for GetCount {
    type ReplySlot = NoReply;
}

/// Counts, and reports the count when asked.
#[derive(Debug, Default)]
pub struct Counter {
    count: u64,
}

// What the `#[actor]` block of `counter.rs` contains, as an ordinary impl block.
impl Counter {
    fn increment(&mut self, message: Increment) {
        self.count += message.by;
    }

    fn get_count(&mut self, message: GetCount) {
        message.reply_to.tell(Count { value: self.count });
    }
}

/// The protocol of `Counter`: one variant per message type, each carrying the
/// message and where its answer goes (`NoReply` for a plain message).
pub enum CounterMsg {
    /// An `Increment`.
    Increment(Increment, NoReply),
    /// A `GetCount`.
    GetCount(GetCount, NoReply),
}

impl Message for CounterMsg {
    type ReplySlot = NoReply;

    // A dead letter names the message inside the variant, not the enum.
    fn into_payload(self) -> Payload {
        match self {
            Self::Increment(message, _) => message.into_payload(),
            Self::GetCount(message, _) => message.into_payload(),
        }
    }
}

// `tell` asks for `P: Accepts<M>`: these two impls are the whole protocol check.
impl Accepts<Increment> for CounterMsg {
    fn wrap_with(message: Increment, reply: NoReply) -> Self {
        Self::Increment(message, reply)
    }
}

impl Accepts<GetCount> for CounterMsg {
    fn wrap_with(message: GetCount, reply: NoReply) -> Self {
        Self::GetCount(message, reply)
    }
}

// Lets a handler write `&mut Ctx<Self>` for `&mut ActorContext<CounterMsg>`.
impl Protocol for Counter {
    type Msg = CounterMsg;
}

impl Actor for Counter {
    fn handle<'a>(
        &'a mut self,
        _ctx: &'a mut ActorContext<CounterMsg>,
        message: CounterMsg,
    ) -> Handled<'a, CounterMsg> {
        // A synchronous handler answers at once; an `async` one would be
        // `Handled::pending(async move { .. })`.
        match message {
            CounterMsg::Increment(message, NoReply) => self.increment(message),
            CounterMsg::GetCount(message, NoReply) => self.get_count(message),
        }
        Handled::ready(())
    }
}

/// Run the example and return the line it prints.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let system = ActorSystem::new("counter-by-hand")?;
    let (answer, mut answered) = tokio::sync::mpsc::unbounded_channel();
    let readout = system.spawn(
        Behaviors::receive_message(move |message: Count| {
            let _ = answer.send(message.value);
        }),
        "readout",
    )?;
    let counter: ActorRef<CounterMsg> =
        system.spawn(Behaviors::setup(|_ctx| Counter::default()), "counter")?;
    counter.tell(Increment { by: 1 });
    counter.tell(Increment { by: 2 });
    counter.tell(GetCount { reply_to: readout });
    let value = answered.recv().await.ok_or("the readout stopped")?;
    system.terminate().await;
    Ok(vec![format!("counter: {value}")])
}

/// Print the line.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
