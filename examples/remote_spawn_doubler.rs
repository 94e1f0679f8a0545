//! The worker of the `remote_spawn` example: what it is built with, what it is sent,
//! and the factory another node asks for by its key.
//!
//! A module of the library only, for the reason `two_nodes_messages` is: the
//! example file is compiled into the library and into its own binary, and a key
//! registered twice (a message's or a factory's) stops every system from starting.

use tapio::prelude::*;

/// What a doubler is built with. A value, not a closure: a closure does not cross a
/// socket, so what travels is the factory's key and these arguments, encoded. It
/// cannot hold an `ActorRef`; a ref the worker needs is sent to it in a message.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DoublerArgs {
    /// What to multiply by.
    pub factor: u64,
}

/// A number to double, answered with [`Doubled`].
#[message(remote = "example.remote-spawn.double.v1", reply = Doubled)]
pub struct Double(pub u64);

/// The answer, and how many jobs this incarnation of the worker has done.
#[message(remote = "example.remote-spawn.doubled.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doubled {
    /// The doubled number.
    pub n: u64,
    /// Jobs done by the incarnation that answered, this one included.
    pub handled: u64,
}

/// Tells the worker to fail, so that its supervisor has something to decide.
#[message(remote = "example.remote-spawn.crash.v1")]
pub struct Crash;

/// Tells the worker to stop, so that whoever watches it hears about it.
#[message(remote = "example.remote-spawn.retire.v1")]
pub struct Retire;

/// The failure [`Crash`] causes, and the one the factory's supervision restarts on.
#[derive(Debug)]
pub struct FellOver;

impl std::fmt::Display for FellOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the doubler fell over")
    }
}

impl std::error::Error for FellOver {}

/// Multiplies, counts its jobs, fails on request, and retires on request.
#[derive(Debug)]
pub struct Doubler {
    factor: u64,
    handled: u64,
}

#[actor]
impl Doubler {
    fn double(&mut self, Double(n): Double) -> Doubled {
        self.handled += 1;
        Doubled {
            n: n * self.factor,
            handled: self.handled,
        }
    }

    fn crash(&mut self, _: Crash) -> Result<(), FellOver> {
        Err(FellOver)
    }

    fn retire(&mut self, _: Retire) -> Behavior<DoublerMsg> {
        Behaviors::stopped()
    }
}

/// The factory a spawner offers under the key `"doubler"`.
///
/// It declares the worker's supervision, because only the node that runs an actor
/// can restart it: a restart decided across a link could be cut off halfway. The
/// setup runs again on each restart, so the job count starts again from zero.
#[remote_behavior("doubler")]
pub fn doubler(args: DoublerArgs) -> Behavior<DoublerMsg> {
    let factor = args.factor;
    Behaviors::supervise(Behaviors::setup(move |_| Doubler { factor, handled: 0 }))
        .on_failure::<FellOver>(SupervisorStrategy::restart())
        .into()
}
