//! The ground layer: what every other layer names. Actor paths and addresses
//! (`path`), the `Message` trait and its reply slots (`message`), failures
//! (`failure`), the local core's errors (`error`), the event stream and dead
//! letters (`events`), the codec's vocabulary that messages need (`codec`), and the
//! clock (`clock`).
//!
//! Layer 0: imports nothing of the crate outside this folder.

pub(crate) mod clock;
pub(crate) mod codec;
pub(crate) mod error;
pub mod events;
pub(crate) mod failure;
pub(crate) mod message;
pub(crate) mod path;
