//! The names the macros read in their arguments and attributes, in one place.

/// `#[message(reply = T)]`
pub(crate) const REPLY: &str = "reply";
/// `#[message(remote = "key")]`
pub(crate) const REMOTE: &str = "remote";
/// `#[actor(protocol = Name)]`
pub(crate) const PROTOCOL: &str = "protocol";
/// `#[actor(vis = pub(crate))]`
pub(crate) const VIS: &str = "vis";
/// `#[actor(helpers = CounterApi)]`
pub(crate) const HELPERS: &str = "helpers";
/// The suffix of the generated helper trait: `Counter` gets `CounterRef`.
pub(crate) const HELPERS_SUFFIX: &str = "Ref";
/// `#[handler(..)]` on a handler inside an `#[actor]` block.
pub(crate) const HANDLER: &str = "handler";
/// `#[handler(helper = name)]`: the name of the handler's typed helper.
pub(crate) const HELPER: &str = "helper";
/// `#[handler(no_helper)]`: no typed helper for this handler.
pub(crate) const NO_HELPER: &str = "no_helper";
/// `#[handler(variant = Name)]`: the name of the handler's variant in the protocol
/// enum, when the message type's last segment will not do.
pub(crate) const VARIANT: &str = "variant";
/// `#[signal]` on the signal handler inside an `#[actor]` block.
pub(crate) const SIGNAL: &str = "signal";
/// The suffix of the generated protocol enum: `Counter` gets `CounterMsg`.
pub(crate) const PROTOCOL_SUFFIX: &str = "Msg";
/// `#[tapio::test(start_paused = true)]`
pub(crate) const START_PAUSED: &str = "start_paused";
/// `#[tapio::test(worker_threads = 2)]`
pub(crate) const WORKER_THREADS: &str = "worker_threads";
/// `#[tapio::test(shutdown_timeout_ms = 500)]`
pub(crate) const SHUTDOWN_TIMEOUT_MS: &str = "shutdown_timeout_ms";
/// `#[actor(messages(A, B))]`: a state machine's protocol.
pub(crate) const MESSAGES: &str = "messages";
/// `#[actor(states(A => B, B))]`: a state machine's transition table.
pub(crate) const STATES: &str = "states";
/// `#[actor(sub_protocols(Customer(Deposit, Balance)))]`: enums of some of the
/// actor's messages, to narrow its ref to.
pub(crate) const SUB_PROTOCOLS: &str = "sub_protocols";
/// `#[actor(stash_capacity = 100)]`: how much a stashing state holds.
pub(crate) const STASH_CAPACITY: &str = "stash_capacity";
/// `#[state(Actor, unhandled = stash)]`
pub(crate) const UNHANDLED: &str = "unhandled";
/// `unhandled = stash`
pub(crate) const STASH: &str = "stash";
/// `unhandled = refuse`
pub(crate) const REFUSE: &str = "refuse";
/// `#[on_entry]` on a state's entry hook.
pub(crate) const ON_ENTRY: &str = "on_entry";
/// `#[on_exit]` on a state's exit hook.
pub(crate) const ON_EXIT: &str = "on_exit";
/// `#[otherwise]` on a state's handler for every message it has no handler for.
pub(crate) const OTHERWISE: &str = "otherwise";
/// The hooks a `#[state]` block takes, and an `#[actor]` block refuses.
pub(crate) const STATE_HOOKS: [&str; 3] = [ON_ENTRY, ON_EXIT, OTHERWISE];
