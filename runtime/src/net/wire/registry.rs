//! The registry of wire keys: linked in by `#[message(remote)]`, or built by hand.
//!
//! `#[message(remote = "key")]` adds serde's derives (through `__private::serde`),
//! implements `WireMessage` (the key), sets `Message::WIRE_KEY` and
//! `Message::decode_wire`, implements `RemoteProtocol` for the message, and submits a
//! `Registration` to `inventory`. `reply = T` adds a `const _` calling
//! `__private::remote_reply::<T>()`, so an unregistered reply is a compile error on `T`.
//! Each field is (de)serialized through two functions written beside the message,
//! which reach the field type's serde impls through `__private::WireProbe` and ask
//! nothing of it, and the field type is checked once, on the type
//! (`__private::wire_field`, or `wire_ref_field` for a field holding an `ActorRef`,
//! whose error names the unregistered message): a field without serde's traits is
//! one error, and the message still derives serde's traits, so nothing else fails.
//! Fields serde reads otherwise (`with`, `skip`, `flatten`, ..) and containers written
//! otherwise (`transparent`, `from`, `into`, ..) are
//! left to serde. `Registry::linked()` collects the registrations when a system is
//! built; a key of two types is `SystemError::Wire`.
//!
//! Decoding needs no registry of protocols and no `Any`: `Message::decode_wire(key,
//! bytes, ctx)` is a hidden trait method whose default accepts nothing; an `#[actor]`'s
//! protocol enum tries each handled message whose `WIRE_KEY` is the key, and wraps it
//! with the reply slot `ReplySlot::from_wire` builds from the header's reply-to.
//! `RemoteProtocol<Check = ()>` has one impl per type (the message's, or the protocol
//! enum's with one `M: Registered<Check>` bound per handled message; `Check` keeps the
//! bounds from being checked where they are written), so a protocol with an
//! unregistered message fails where a ref of it must cross, naming that message
//! (S35's compile-time clause).

use rustc_hash::FxHashMap;
use std::fmt;

use crate::ground::message::Payload;
use crate::net::wire::{WireLimits, WireMessage, WireProblem};

/// One registered message type: its key, its name, and how to decode its payload
/// into a dead letter's [`Payload`]. `#[message(remote)]` submits one per type.
#[derive(Clone, Copy)]
pub struct Registration {
    key: &'static str,
    type_name: fn() -> &'static str,
    decode: fn(&str, &[u8], &WireLimits) -> Result<Payload, WireProblem>,
}

impl Registration {
    /// The registration of `M`.
    pub const fn of<M: WireMessage>() -> Self {
        Self {
            key: M::KEY,
            type_name: std::any::type_name::<M>,
            decode: decode_payload::<M>,
        }
    }

    /// The wire key.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The Rust type registered.
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }

    /// Decode a payload of this type, for a dead letter.
    pub(crate) fn decode(&self, bytes: &[u8], limits: &WireLimits) -> Result<Payload, WireProblem> {
        (self.decode)(self.key, bytes, limits)
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("type", &self.type_name())
            .finish()
    }
}

fn decode_payload<M: WireMessage>(
    key: &str,
    bytes: &[u8],
    limits: &WireLimits,
) -> Result<Payload, WireProblem> {
    crate::net::wire::decode::<M>(key, bytes, limits).map(Payload::new)
}

inventory::collect!(Registration);

/// A wire key registered twice in one binary, or by a hand-built registry: a
/// startup error naming both types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the wire key {key:?} is registered twice, for `{first}` and for `{second}`: give each message type a key of its own"
)]
pub struct RegistryError {
    /// The key.
    pub key: &'static str,
    /// One type registered under it.
    pub first: &'static str,
    /// The other.
    pub second: &'static str,
}

/// The wire keys a system decodes, each naming one message type.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    /// Looked up once per frame: a fast hash. Only the program inserts keys, so a
    /// peer cannot crowd the table; its keys only probe it.
    by_key: FxHashMap<&'static [u8], RegistryEntry>,
}

/// A registration, linked in or built by hand.
#[derive(Clone)]
enum RegistryEntry {
    Linked(&'static Registration),
    Built(Registration),
}

impl fmt::Debug for RegistryEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.get(), f)
    }
}

impl RegistryEntry {
    fn get(&self) -> &Registration {
        match self {
            Self::Linked(registration) => registration,
            Self::Built(registration) => registration,
        }
    }
}

impl Registry {
    /// Every type `#[message(remote)]` registered in this binary.
    ///
    /// # Errors
    ///
    /// [`RegistryError`] for a key registered twice, naming both types.
    pub fn linked() -> Result<Self, RegistryError> {
        let mut registry = Self::default();
        for registration in inventory::iter::<Registration> {
            registry.insert(RegistryEntry::Linked(registration))?;
        }
        Ok(registry)
    }

    /// A registry of the types a program lists by hand.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            registry: Self::default(),
            error: None,
        }
    }

    fn insert(&mut self, entry: RegistryEntry) -> Result<(), RegistryError> {
        let key = entry.get().key();
        if let Some(first) = self.by_key.get(key.as_bytes()) {
            let (first, second) = (first.get().type_name(), entry.get().type_name());
            if first != second {
                return Err(RegistryError { key, first, second });
            }
            return Ok(());
        }
        self.by_key.insert(key.as_bytes(), entry);
        Ok(())
    }

    /// The registration of `key`.
    pub fn get(&self, key: &str) -> Option<&Registration> {
        self.get_bytes(key.as_bytes())
    }

    /// The registration of the key whose bytes are `key`: a key is found only when
    /// those bytes are its text, so they need no UTF-8 check first.
    pub(crate) fn get_bytes(&self, key: &[u8]) -> Option<&Registration> {
        self.by_key.get(key).map(RegistryEntry::get)
    }

    /// How many keys are registered.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no key is registered.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Builds a [`Registry`] from a list of types: `Registry::builder().register::<Order>()
/// .register::<Shipped>().build()?`.
#[derive(Debug, Clone)]
pub struct RegistryBuilder {
    registry: Registry,
    error: Option<RegistryError>,
}

impl RegistryBuilder {
    /// Register `M` under its key.
    #[must_use]
    pub fn register<M: WireMessage>(mut self) -> Self {
        if self.error.is_none()
            && let Err(error) = self
                .registry
                .insert(RegistryEntry::Built(Registration::of::<M>()))
        {
            self.error = Some(error);
        }
        self
    }

    /// The registry.
    ///
    /// # Errors
    ///
    /// [`RegistryError`] for the first key registered for two types.
    pub fn build(self) -> Result<Registry, RegistryError> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(self.registry),
        }
    }
}
