//! The settings of a system and the builder that checks them.
//!
//! `ActorSystemBuilder::build` checks the settings, collects the wire registry from
//! `inventory` (unless `wire_registry` gave one) and checks the linked factories of
//! remote spawn (`remote::spawn::check_linked`), binds the remote port (a std
//! `TcpListener`, bound while the system is built, so its `Address` carries the host
//! and the port from the start), and starts the transport.

use std::time::Duration;

use tokio::runtime::Handle;

use crate::actor::system::{Outer, SystemShared};
use crate::actor::{ActorSystem, Address, Settings};
use crate::net::wire::{Registry, WireLimits};
use crate::system::SystemError;

/// Builds an [`ActorSystem`] with settings other than the defaults.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), tapio::SystemError> {
/// use std::time::Duration;
/// let system = tapio::ActorSystem::builder("orders")
///     .shutdown_timeout(Duration::from_secs(2))
///     .build()?;
/// assert_eq!(system.settings().shutdown_timeout(), Duration::from_secs(2));
/// # system.terminate().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ActorSystemBuilder {
    settings: Settings,
    registry: Option<Registry>,
    remote: Option<crate::net::remote::RemoteSettings>,
}

impl ActorSystemBuilder {
    /// A builder of a system named `name`, with the default settings.
    pub(crate) fn new(name: &str) -> Self {
        Self {
            settings: Settings::new(name),
            registry: None,
            remote: None,
        }
    }

    /// The deadline for the whole tree when the system terminates (default 5 s). A
    /// timeout too large to add to the clock (`Duration::MAX`) is no deadline:
    /// `terminate` waits for every actor, however long it takes.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.settings.shutdown_timeout = timeout;
        self
    }

    /// Count the asks still waiting for an answer and the timers still running, so
    /// that a [`LeakReport`](crate::testkit::LeakReport) can name them after
    /// termination. Default: [`Settings::DEFAULT_TRACK_LEAKS`], on in debug builds
    /// and off in release builds, where the count would cost every ask and every
    /// timer writes to a counter all threads share. `#[tapio::test]` and
    /// [`TestConfig`](crate::testkit::TestConfig) always turn it on. A system that
    /// does not track says so in its report rather than report zero. Live actors
    /// are counted either way ([`ActorSystem::live_actors`]). Only with the
    /// `testkit` feature: a build without it carries no counters.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tapio::SystemError> {
    /// let system = tapio::ActorSystem::builder("counted").track_leaks(true).build()?;
    /// assert!(system.settings().tracks_leaks());
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "testkit")]
    pub fn track_leaks(mut self, track: bool) -> Self {
        self.settings.track_leaks = track;
        self
    }

    /// What frames from a peer are held to (default [`WireLimits::DEFAULT`]).
    pub fn wire_limits(mut self, limits: WireLimits) -> Self {
        self.settings.wire_limits = limits;
        self
    }

    /// The wire keys this system decodes, listed by hand. Without it, the system
    /// decodes every type `#[message(remote)]` registered in the binary.
    pub fn wire_registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Listen for links from other systems (S38): the port is bound while the
    /// system is built, so [`ActorSystem::address`] carries the host and the port
    /// bound (the OS's pick for port 0) before any ref is handed out.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tapio::SystemError> {
    /// use tapio::remote::RemoteSettings;
    ///
    /// let system = tapio::ActorSystem::builder("node")
    ///     .remote(RemoteSettings::loopback())
    ///     .build()?;
    /// let (host, port) = system.address().host_port().expect("listening");
    /// assert_eq!(host, "127.0.0.1");
    /// assert_ne!(port, 0);
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn remote(mut self, settings: crate::net::remote::RemoteSettings) -> Self {
        self.remote = Some(settings);
        self
    }

    /// Build the system, on the tokio runtime this is called in.
    ///
    /// # Errors
    ///
    /// [`SystemError::NoRuntime`] outside a tokio runtime,
    /// [`SystemError::InvalidName`] for a name that is not letters, digits, `-` or
    /// `_`, and [`SystemError::InvalidSetting`] for a zero shutdown timeout and for
    /// wire limits of zero.
    pub fn build(self) -> Result<ActorSystem, SystemError> {
        let settings = self.settings;
        let name_ok = !settings.name.is_empty()
            && settings
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(SystemError::InvalidName {
                name: settings.name,
            });
        }
        if settings.shutdown_timeout.is_zero() {
            return Err(SystemError::InvalidSetting {
                setting: "shutdown_timeout",
                reason: "it is zero, so no actor would get to stop: give it a duration".into(),
            });
        }
        if settings.wire_limits.max_frame == 0 {
            return Err(SystemError::InvalidSetting {
                setting: "wire_limits.max_frame",
                reason: "it is zero, so every frame from a peer would be refused: give the \
                         largest frame to take, in bytes (WireLimits::DEFAULT takes 1 MiB)"
                    .into(),
            });
        }
        if settings.wire_limits.max_depth == 0 {
            return Err(SystemError::InvalidSetting {
                setting: "wire_limits.max_depth",
                reason: "it is zero, so no payload would decode: give the deepest nesting \
                         to take (WireLimits::DEFAULT takes 128 levels)"
                    .into(),
            });
        }
        let registry = match self.registry {
            Some(registry) => registry,
            None => Registry::linked()?,
        };
        crate::net::remote::spawn::check_linked()?;
        let runtime = Handle::try_current().map_err(|_| SystemError::NoRuntime)?;
        let (address, listening) = match &self.remote {
            Some(remote) => {
                let listening = remote.listen()?;
                let (host, port) = remote
                    .advertised()
                    .unwrap_or((remote.host(), listening.port));
                (Address::remote(&settings.name, host, port), Some(listening))
            }
            None => (Address::local(&settings.name), None),
        };
        let system = ActorSystem::start(
            settings,
            address,
            Outer {
                remote: Box::new(crate::net::remote::links::Links::new(registry)),
                terminate: SystemShared::begin_termination,
            },
            runtime.clone(),
        );
        if let Some(listening) = listening {
            let transport = crate::net::remote::transport::Transport::start(
                &system.shared,
                runtime,
                listening.listener,
                listening.secret,
                listening.tls,
                listening.timing,
            )
            .map_err(|error| crate::net::remote::RemoteError::Bind {
                address: system.address().to_string(),
                reason: error.to_string(),
            })?;
            system.shared.links().set_transport(transport);
        }
        Ok(system)
    }
}
