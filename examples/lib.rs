//! The examples of the tapio guide, one module per example.
//!
//! Each `NAME.rs` here is both an example target (`cargo run --example NAME`) and a
//! module of this library, so that `tour` can run every example in turn and the
//! tests can assert the lines each one produces. An example's `run` returns those
//! lines; its `main` prints them.

// Lets the example files name shared helpers as `tapio_examples::support` whether
// they are compiled as examples or as modules of this library.
extern crate self as tapio_examples;

pub mod support;

#[path = "hello_world.rs"]
pub mod hello_world;

#[path = "ping_pong.rs"]
pub mod ping_pong;

#[path = "counter.rs"]
pub mod counter;

#[path = "counter_without_macros.rs"]
pub mod counter_without_macros;

#[path = "supervision_backoff.rs"]
pub mod supervision_backoff;

#[path = "death_watch.rs"]
pub mod death_watch;

#[path = "escalation.rs"]
pub mod escalation;

#[path = "graceful_shutdown.rs"]
pub mod graceful_shutdown;

#[path = "ask_timeout.rs"]
pub mod ask_timeout;

#[path = "rate_limiter.rs"]
pub mod rate_limiter;

#[path = "stash_on_startup.rs"]
pub mod stash_on_startup;

#[path = "worker_pool.rs"]
pub mod worker_pool;

#[path = "adapters.rs"]
pub mod adapters;

#[path = "blocking_calls.rs"]
pub mod blocking_calls;

#[path = "state_machine.rs"]
pub mod state_machine;

#[path = "state_machine_without_macros.rs"]
pub mod state_machine_without_macros;

#[path = "iot.rs"]
pub mod iot;

#[path = "chat_room.rs"]
pub mod chat_room;

#[path = "two_nodes.rs"]
pub mod two_nodes;

#[path = "two_nodes_messages.rs"]
pub mod two_nodes_messages;

#[path = "remote_spawn.rs"]
pub mod remote_spawn;

#[path = "remote_spawn_doubler.rs"]
pub mod remote_spawn_doubler;

#[path = "worker_pool_remote.rs"]
pub mod worker_pool_remote;

#[path = "worker_pool_remote_sink.rs"]
pub mod worker_pool_remote_sink;

#[path = "node_failure.rs"]
pub mod node_failure;

#[path = "node_failure_messages.rs"]
pub mod node_failure_messages;

#[path = "partition.rs"]
pub mod partition;

#[path = "partition_messages.rs"]
pub mod partition_messages;

#[path = "remote_ask.rs"]
pub mod remote_ask;

#[path = "remote_ask_messages.rs"]
pub mod remote_ask_messages;

#[path = "node.rs"]
pub mod node;

/// How an example is run: it returns the lines it printed.
pub type Run = fn() -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Vec<String>, support::ExampleError>> + Send>,
>;

/// Every example, in the order of the guide, as `tour` runs them.
pub const EXAMPLES: &[(&str, Run)] = &[
    ("hello_world", || Box::pin(hello_world::run())),
    ("ping_pong", || Box::pin(ping_pong::run())),
    ("counter", || Box::pin(counter::run())),
    ("counter_without_macros", || {
        Box::pin(counter_without_macros::run())
    }),
    ("supervision_backoff", || {
        Box::pin(supervision_backoff::run())
    }),
    ("death_watch", || Box::pin(death_watch::run())),
    ("escalation", || Box::pin(escalation::run())),
    ("graceful_shutdown", || Box::pin(graceful_shutdown::run())),
    ("ask_timeout", || Box::pin(ask_timeout::run())),
    ("rate_limiter", || Box::pin(rate_limiter::run())),
    ("stash_on_startup", || Box::pin(stash_on_startup::run())),
    ("worker_pool", || Box::pin(worker_pool::run())),
    ("adapters", || Box::pin(adapters::run())),
    ("blocking_calls", || Box::pin(blocking_calls::run())),
    ("state_machine", || Box::pin(state_machine::run())),
    ("state_machine_without_macros", || {
        Box::pin(state_machine_without_macros::run())
    }),
    ("iot", || Box::pin(iot::run())),
    ("chat_room", || Box::pin(chat_room::run())),
    ("two_nodes", || Box::pin(two_nodes::run())),
    ("node_failure", || Box::pin(node_failure::run())),
    ("partition", || Box::pin(partition::run())),
    ("remote_ask", || Box::pin(remote_ask::run())),
    ("node", || Box::pin(node::run())),
    ("remote_spawn", || Box::pin(remote_spawn::run())),
    ("worker_pool_remote", || Box::pin(worker_pool_remote::run())),
];
