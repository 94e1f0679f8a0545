//! The names the macros read in their arguments and attributes, in one place.

/// `#[message(reply = T)]`
pub(crate) const REPLY: &str = "reply";
/// `#[actor(protocol = Name)]`
pub(crate) const PROTOCOL: &str = "protocol";
/// `#[actor(vis = pub(crate))]`
pub(crate) const VIS: &str = "vis";
/// `#[signal]` on the signal handler inside an `#[actor]` block.
pub(crate) const SIGNAL: &str = "signal";
/// The suffix of the generated protocol enum: `Counter` gets `CounterMsg`.
pub(crate) const PROTOCOL_SUFFIX: &str = "Msg";
