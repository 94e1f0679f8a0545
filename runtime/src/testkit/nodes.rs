//! Two systems on loopback with a fault-injecting link between them (S45).
//!
//! `two_nodes` and `two_nodes_named` start two systems on loopback ports the OS picks.
//! `LinkDirection` sets the faults of `remote::link` on one system's transport toward
//! the other.

use std::sync::Arc;
use std::time::Duration;

use crate::actor::ActorSystem;
use crate::actor::Address;
use crate::net::remote::RemoteSettings;
use crate::net::remote::link::LinkFaults;
use crate::system::SystemError;

/// Two systems, `a` and `b`, each listening on a loopback port the OS picked,
/// with faults to inject into the link between them: [`partition`](Self::partition)
/// and [`heal`](Self::heal) both directions, or one direction at a time through
/// [`a_to_b`](Self::a_to_b) and [`b_to_a`](Self::b_to_a).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), tapio::SystemError> {
/// use tapio::remote::RemoteSettings;
/// use tapio::testkit::two_nodes;
///
/// let nodes = two_nodes(RemoteSettings::loopback())?;
/// assert_ne!(nodes.a.address(), nodes.b.address());
/// nodes.a_to_b().drop_next(1); // the next message from a to b is lost
/// nodes.terminate().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TwoNodes {
    /// The system named `a`.
    pub a: ActorSystem,
    /// The system named `b`.
    pub b: ActorSystem,
}

/// Start two systems named `a` and `b` with the remote settings `settings` (each
/// on its own port, whatever port `settings` names), built in the tokio runtime
/// this is called in.
///
/// # Errors
///
/// As [`ActorSystemBuilder::build`](crate::ActorSystemBuilder::build): settings
/// that cannot be used, such as a secret too short.
pub fn two_nodes(settings: RemoteSettings) -> Result<TwoNodes, SystemError> {
    two_nodes_named("a", "b", settings)
}

/// [`two_nodes`], with the systems named `a` and `b` as given (the fields keep
/// their names).
///
/// # Errors
///
/// As [`two_nodes`], and for a name a system cannot have.
pub fn two_nodes_named(
    a: &str,
    b: &str,
    settings: RemoteSettings,
) -> Result<TwoNodes, SystemError> {
    let settings = settings.on_port(0);
    let a = ActorSystem::builder(a).remote(settings.clone()).build()?;
    let b = match ActorSystem::builder(b).remote(settings).build() {
        Ok(b) => b,
        Err(error) => {
            drop(a.terminate());
            return Err(error);
        }
    };
    Ok(TwoNodes { a, b })
}

impl TwoNodes {
    /// The direction from `a` to `b`.
    pub fn a_to_b(&self) -> LinkDirection {
        LinkDirection::between(&self.a, self.b.address())
    }

    /// The direction from `b` to `a`.
    pub fn b_to_a(&self) -> LinkDirection {
        LinkDirection::between(&self.b, self.a.address())
    }

    /// Hold every frame, both ways, until [`heal`](Self::heal): heartbeats stop
    /// arriving, so each failure detector gives up on the other system after its
    /// `unreachable_after`.
    pub fn partition(&self) {
        self.a_to_b().partition();
        self.b_to_a().partition();
    }

    /// Let frames go again, both ways, in order. A peer already given up on stays
    /// quarantined: healing the network does not undo that.
    pub fn heal(&self) {
        self.a_to_b().heal();
        self.b_to_a().heal();
    }

    /// Terminate both systems.
    pub async fn terminate(&self) {
        let (a, b) = (self.a.terminate(), self.b.terminate());
        a.await;
        b.await;
    }
}

/// One direction of the link between two systems, and the faults injected into
/// it. Dropping applies to messages; a partition and a delay apply to every frame
/// (heartbeats too), and a partition holds a new dial in its direction as well, so
/// that a handshake cannot pass for a sign of life. Faults stay until changed,
/// across reconnections.
#[derive(Debug, Clone)]
pub struct LinkDirection {
    faults: Option<Arc<LinkFaults>>,
}

impl LinkDirection {
    /// The direction from `from` toward `to`.
    pub fn between(from: &ActorSystem, to: &Address) -> Self {
        Self {
            faults: from
                .shared()
                .transport()
                .map(|transport| transport.faults(to)),
        }
    }

    fn with(&self, change: impl FnOnce(&LinkFaults)) -> &Self {
        if let Some(faults) = &self.faults {
            change(faults);
        }
        self
    }

    /// Hold every frame until [`heal`](Self::heal).
    pub fn partition(&self) -> &Self {
        self.with(LinkFaults::partition)
    }

    /// Let held frames go, in order.
    pub fn heal(&self) -> &Self {
        self.with(LinkFaults::heal)
    }

    /// Lose the next `n` messages sent this way: tells, offers, ask requests and
    /// answers. The link's own frames (heartbeats, watches, refusals) still go.
    pub fn drop_next(&self, n: u64) -> &Self {
        self.with(|faults| faults.drop_next(n))
    }

    /// Lose each message sent this way with probability `ratio` (0.0 to 1.0),
    /// chosen by a generator seeded with `seed`: the same seed loses the same ones.
    pub fn drop_ratio(&self, ratio: f64, seed: u64) -> &Self {
        self.with(|faults| faults.drop_ratio(ratio, seed))
    }

    /// Deliver each frame no sooner than `delay` after it was sent, in order.
    pub fn delay(&self, delay: Duration) -> &Self {
        self.with(|faults| faults.delay(delay))
    }

    /// No faults any more.
    pub fn clear(&self) -> &Self {
        self.with(LinkFaults::clear)
    }
}
