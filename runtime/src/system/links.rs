//! What the system keeps for links with other systems: the wire's limits and
//! registry, the transport, the promises exported for answers from peers, and the
//! cache of the actors frames were delivered to.

use std::sync::Arc;

use super::SystemShared;
use crate::actor::{ActorPath, Address, AnyActorRef, AnyCell};
use crate::wire::{Registry, WireLimits};

impl SystemShared {
    /// `/system/promises`.
    /// What frames from a peer are held to.
    pub(crate) fn wire_limits(&self) -> WireLimits {
        *self.settings.wire_limits()
    }

    /// The links to other systems, when the system has remote settings.
    pub(crate) fn transport(&self) -> Option<&Arc<crate::remote::transport::Transport>> {
        self.transport.get()
    }

    /// The system's address.
    pub(crate) fn address(&self) -> &Address {
        &self.address
    }

    /// Export the promise `uid`, whose ref is being serialized.
    pub(crate) fn export_promise(&self, uid: u64, promise: Arc<dyn AnyCell>) {
        if self.is_terminating() {
            // No answer can come back any more; holding it would keep the system.
            return;
        }
        self.exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(uid, promise);
    }

    /// The live actor cached for a frame's `path`.
    pub(crate) fn cached_route(&self, path: &str) -> Option<AnyActorRef> {
        self.routes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(path)
    }

    /// Cache the actor a frame's `path` led to.
    pub(crate) fn cache_route(&self, path: &str, actor: &AnyActorRef) {
        if self.is_terminating() {
            return;
        }
        self.routes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(path, actor);
    }

    /// Let go of the links, the exported promises and the cached routes: the
    /// system has terminated, and each holds the system (or its port).
    pub(crate) fn release_links(&self) {
        // The port is free again once the system has terminated.
        if let Some(transport) = self.transport.get() {
            transport.stop();
        }
        let routes = std::mem::take(
            &mut *self
                .routes
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        drop(routes);
        let exported = std::mem::take(
            &mut *self
                .exported
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        drop(exported);
    }

    /// The promise exported under `uid`, while it waits.
    pub(crate) fn exported_promise(&self, uid: u64) -> Option<AnyActorRef> {
        self.exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(uid)
    }

    /// The wire keys this system decodes.
    pub(crate) fn wire_registry(&self) -> &Registry {
        &self.registry
    }

    /// The path `/` of this system.
    pub(crate) fn root_path(&self) -> ActorPath {
        ActorPath::root(self.address.clone())
    }

    /// The guardian `user` or `system`, while the system runs.
    pub(crate) fn guardian_named(&self, name: &str) -> Option<AnyActorRef> {
        self.guardian(|guardians| match name {
            "user" => guardians.user.clone(),
            _ => guardians.system.clone(),
        })
    }
}
