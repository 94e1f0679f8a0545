//! What the system keeps for links with other systems: the wire's limits and
//! registry, the transport, the promises exported for answers from peers, and the
//! cache of the actors frames were delivered to.
//!
//! The exported promises and the route cache hold refs, and every cell holds its
//! system, so both are emptied at termination (`release_links`).

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

    /// Export `cell` (an ask's promise or a message adapter, neither reachable by
    /// walking the tree) under its uid `uid`: its ref is being serialized.
    pub(crate) fn export_ref(&self, uid: u64, cell: Arc<dyn AnyCell>) {
        if self.is_terminating() {
            // No answer can come back any more; holding it would keep the system.
            return;
        }
        self.exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(uid, cell);
    }

    /// The live actor cached for a frame's `path`.
    pub(crate) fn cached_route(&self, path: &[u8]) -> Option<AnyActorRef> {
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

    /// Whether a frame answered this system's promise `uid` lately.
    pub(crate) fn promise_was_answered(&self, uid: u64) -> bool {
        self.exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .was_answered(uid)
    }

    /// The promise (while its asker waits) or adapter (while its owner lives)
    /// exported under `uid`.
    pub(crate) fn exported_ref(&self, uid: u64) -> Option<AnyActorRef> {
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
