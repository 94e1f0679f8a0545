//! What the test binaries share: bounds on waits, probes and sinks, captured logs,
//! two-node setups, a raw TCP client, and the helpers that tests of several areas
//! use. Each binary compiles all of it and uses some, so what one leaves unused is
//! not a warning.
#![allow(dead_code, unused_imports)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod combinations;
pub mod common;
pub mod doc_claims;
pub mod edge_cases;
pub mod edge_orders;
pub mod first_contact;
pub mod greeter;
pub mod guide_claims;
pub mod later_combinations;
pub mod lifecycle_corners;
pub mod local_corners;
pub mod nodes;
pub mod outside;
pub mod past_happy_paths;
pub mod races;
pub mod raw_link;
pub mod stops_and_restarts;
pub mod under_supervision;
pub mod with_other_features;
