//! S35: a wire key registered for two types in one binary is a startup error that
//! names both. This test binary links two such types on purpose.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tapio::SystemError;
use tapio::prelude::*;
use tapio::wire::Registry;

#[message(remote = "test.order.v1")]
pub struct Order;

mod legacy {
    use tapio::prelude::*;

    /// Another type, under the same key by mistake.
    #[message(remote = "test.order.v1")]
    pub struct Order;
}

#[message(remote = "test.shipped.v1")]
pub struct Shipped;

// S35: the system refuses to start, naming the key and both types.
#[tokio::test]
async fn s35_a_key_linked_twice_stops_the_system_from_starting() {
    let error = ActorSystem::new("twice").unwrap_err();
    let SystemError::Wire(error) = &error else {
        panic!("expected a wire registry error, got {error:?}");
    };
    assert_eq!(error.key, "test.order.v1");
    let mut types = [error.first, error.second];
    types.sort_unstable();
    assert_eq!(
        types,
        [
            "wire_duplicate_keys::Order",
            "wire_duplicate_keys::legacy::Order"
        ]
    );
    let message = SystemError::Wire(error.clone()).to_string();
    assert!(
        message.contains("\"test.order.v1\" is registered twice"),
        "{message}"
    );
}

// S35: a registry listed by hand is checked the same way, and a system built with a
// clean one starts.
#[tokio::test]
async fn s35_a_registry_built_by_hand_is_checked_too() {
    let error = Registry::builder()
        .register::<Order>()
        .register::<Shipped>()
        .register::<legacy::Order>()
        .build()
        .unwrap_err();
    assert_eq!(
        (error.key, error.first, error.second),
        (
            "test.order.v1",
            "wire_duplicate_keys::Order",
            "wire_duplicate_keys::legacy::Order"
        )
    );
    // The same type twice is no conflict.
    let registry = Registry::builder()
        .register::<Order>()
        .register::<Order>()
        .register::<Shipped>()
        .build()
        .unwrap();
    assert_eq!(registry.len(), 2);
    let system = ActorSystem::builder("by-hand")
        .wire_registry(registry)
        .build()
        .unwrap();
    system.terminate().await;
}
