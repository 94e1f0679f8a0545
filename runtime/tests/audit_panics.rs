//! The audit of the standard "no panic a caller or a peer can trigger": each test
//! here calls the public API the way that once panicked inside the library, and
//! holds it to an answer instead (a typed error, a dead letter, or the documented
//! no-op). Each is named after the promise it protects.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::remote::RemoteSettings;
use tapio::testkit::two_nodes;
use tokio::time::timeout;

/// The bound on every wait.
const T: Duration = Duration::from_secs(5);

// A handshake timeout of `Duration::MAX` is a valid setting (a link may take
// forever); `reconnect` under it answers rather than panicking on the clock.
#[tokio::test(flavor = "current_thread")]
async fn reconnect_under_a_handshake_timeout_of_duration_max_answers() {
    let nodes = two_nodes(RemoteSettings::loopback().handshake_timeout(Duration::MAX)).unwrap();
    let peer = nodes.b.address().clone();
    let linked = timeout(T, nodes.a.reconnect(&peer)).await;
    assert_eq!(linked, Ok(Ok(())));
    timeout(T, nodes.terminate()).await.unwrap();
}
