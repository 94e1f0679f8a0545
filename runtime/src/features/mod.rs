//! The features layer: what is built on actors and their mailboxes without the
//! cell knowing of it. Asks (`ask`), state machines (`state`) and routers
//! (`router`).
//!
//! Layer 3: imports ground, the mailbox and the actor layer, and this folder.

pub mod ask;
pub mod router;
pub mod state;
