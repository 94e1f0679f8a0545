//! What a system keeps for links with other systems: the wire's registry, the
//! transport, the promises exported for answers from peers, and the cache of the
//! actors frames were delivered to. [`Links`] owns it; `SystemShared` holds it as
//! its opaque `remote` field, which only `net/` reads back, through
//! `SystemShared::links`.
//!
//! The exported promises and the route cache hold refs, and every cell holds its
//! system, so both are emptied at termination (`release_links`).
//!
//! Layer: network.

use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use crate::actor::SystemShared;
use crate::actor::{AnyActorRef, AnyCell};
use crate::net::remote::transport::Transport;
use crate::net::wire::{Exported, Registry, Routes};

/// The remote state of a system: empty but for its registry until the builder
/// starts a transport.
#[derive(Default)]
pub(crate) struct Links {
    /// The wire keys this system decodes.
    registry: Registry,
    /// The links to other systems, with remote settings; stopped when the system
    /// terminates.
    transport: OnceLock<Arc<Transport>>,
    /// The promises whose refs were serialized, by uid: what a reply from a peer
    /// finds under `/system/promises`.
    exported: Mutex<Exported>,
    /// The actors frames were delivered to lately, by path.
    routes: Mutex<Routes>,
}

impl Links {
    /// The links of a system that decodes the keys of `registry`.
    pub(crate) fn new(registry: Registry) -> Self {
        Self {
            registry,
            ..Self::default()
        }
    }

    /// Start linking through `transport`; only once (a second is dropped).
    pub(crate) fn set_transport(&self, transport: Arc<Transport>) {
        let _ = self.transport.set(transport);
    }
}

/// The links of a system whose remote state is not `Links`, which no system is
/// built with: they link nothing and decode no key.
static UNLINKED: LazyLock<Links> = LazyLock::new(Links::default);

impl SystemShared {
    /// The system's links, from the remote state its builder gave it.
    pub(crate) fn links(&self) -> &Links {
        self.remote.downcast_ref().unwrap_or(&UNLINKED)
    }

    /// The links to other systems, when the system has remote settings.
    pub(crate) fn transport(&self) -> Option<&Arc<Transport>> {
        self.links().transport.get()
    }

    /// Export `cell` (an ask's promise or a message adapter, neither reachable by
    /// walking the tree) under its uid `uid`: its ref is being serialized.
    pub(crate) fn export_ref(&self, uid: u64, cell: Arc<dyn AnyCell>) {
        if self.is_terminating() {
            // No answer can come back any more; holding it would keep the system.
            return;
        }
        self.links()
            .exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(uid, cell);
    }

    /// The live actor cached for a frame's `path`.
    pub(crate) fn cached_route(&self, path: &[u8]) -> Option<AnyActorRef> {
        self.links()
            .routes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(path)
    }

    /// Cache the actor a frame's `path` led to.
    pub(crate) fn cache_route(&self, path: &str, actor: &AnyActorRef) {
        if self.is_terminating() {
            return;
        }
        self.links()
            .routes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .insert(path, actor);
    }

    /// Let go of the links, the exported promises and the cached routes: the
    /// system has terminated, and each holds the system (or its port).
    pub(crate) fn release_links(&self) {
        // The port is free again once the system has terminated.
        if let Some(transport) = self.links().transport.get() {
            transport.stop();
        }
        let routes = std::mem::take(
            &mut *self
                .links()
                .routes
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        drop(routes);
        let exported = std::mem::take(
            &mut *self
                .links()
                .exported
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        drop(exported);
    }

    /// Whether a frame answered this system's promise `uid` lately.
    pub(crate) fn promise_was_answered(&self, uid: u64) -> bool {
        self.links()
            .exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .was_answered(uid)
    }

    /// The promise (while its asker waits) or adapter (while its owner lives)
    /// exported under `uid`.
    pub(crate) fn exported_ref(&self, uid: u64) -> Option<AnyActorRef> {
        self.links()
            .exported
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(uid)
    }

    /// The wire keys this system decodes.
    pub(crate) fn wire_registry(&self) -> &Registry {
        &self.links().registry
    }
}
