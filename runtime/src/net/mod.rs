//! The network layer: links with other systems (`remote`: associations, the
//! handshake, TLS, the failure detector, remote spawn, the lane of a remote ref)
//! and what crosses them (`wire`: frames, the registry of wire keys, refs on the
//! wire, delivery of a frame to its actor). The two folders import each other; the
//! rest of the crate below this layer names neither.
//!
//! Layer 4: imports ground, the mailbox, the actor layer and the features, and
//! this folder.

pub mod remote;
pub mod wire;
