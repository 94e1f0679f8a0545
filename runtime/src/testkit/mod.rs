#![doc = include_str!("../../../docs/testing.md")]

mod harness;
mod inbox;
mod kit;
mod nodes;
mod probe;
mod recorder;

pub use self::harness::{LeakReport, TestConfig, TestResult};
pub use self::inbox::TestInbox;
pub use self::kit::{BehaviorTestKit, Effect, Outcome, TestKitError};
pub use self::nodes::{LinkDirection, TwoNodes, two_nodes, two_nodes_named};
pub use self::probe::TestProbe;
