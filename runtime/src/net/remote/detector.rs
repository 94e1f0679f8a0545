//! The failure detector of an association (S42): a heartbeat to the peer every
//! interval, and a look at whether anything arrived from it. When nothing has for
//! `unreachable_after`, the peer is given up on: its address is quarantined.
//!
//! Any frame counts as a sign of life, not only heartbeats: a busy link costs the
//! detector nothing more than an idle one.

use std::sync::Weak;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use crate::net::remote::association::{Association, control};

/// How often to heartbeat, how long a silence gives a peer up, and how long a link
/// may take to be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timing {
    pub(crate) heartbeat: Duration,
    pub(crate) unreachable_after: Duration,
    /// How long making a link may take (`RemoteSettings::handshake_timeout`).
    pub(crate) handshake: Duration,
}

/// Heartbeat to the association's peer and watch for its silence, until the
/// session ends or the association is dropped.
pub(crate) async fn watch_over(association: Weak<Association>, timing: Timing) {
    let mut ticks = tokio::time::interval(timing.heartbeat);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut last_heard = Instant::now();
    loop {
        ticks.tick().await;
        let Some(association) = association.upgrade() else {
            return;
        };
        if association.session().ended().is_some() {
            return;
        }
        // Also dials a peer that dialled this system: its heartbeats need a way here.
        association.send_control(control::HEARTBEAT, "/", 0);
        let now = Instant::now();
        if association.take_heard() {
            last_heard = now;
        } else if now.duration_since(last_heard) >= timing.unreachable_after {
            tracing::warn!(
                peer = %association.peer(),
                after = ?timing.unreachable_after,
                "nothing arrived from the peer: it is given up on and quarantined"
            );
            if let Some(transport) = association.transport() {
                transport.quarantine(association.peer());
            }
            return;
        }
    }
}
