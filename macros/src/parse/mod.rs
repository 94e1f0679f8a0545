//! From tokens to the model: one module per macro.

pub(crate) mod actor;
pub(crate) mod message;
pub(crate) mod remote_behavior;
pub(crate) mod states;
pub(crate) mod test;
