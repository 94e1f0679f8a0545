//! Where an actor lives: its address and its path from the root, and the rules for
//! names.
//!
//! A path is a chain of shared-prefix nodes, short names inline. Comparing paths, and
//! dropping one (past 64 levels), run in a loop, so a path as deep as a peer's frame can
//! hold never overflows the stack. `AnonymousName` writes `uid - first_uid` in base 64
//! after a `$`, and parses it back; uids start at a random seed per system. (The
//! testkit's `$a`, `$b` names are counted per behavior and indexed by name instead.)
//!
//! Layer: ground (the bottom of `runtime/src`). It imports nothing of the crate but
//! other ground modules (`error`); everything above may import it. See
//! `.ci/layers.py`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The address of an actor system: its name, and for a remote system its host and
/// port. Printed as `tapio://name` or `tapio://name@host:port`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Address {
    system: Arc<str>,
    host: Option<(Arc<str>, u16)>,
}

impl Address {
    /// The address of a system that is reachable only from inside its own process.
    pub fn local(system: &str) -> Self {
        Self {
            system: Arc::from(system),
            host: None,
        }
    }

    /// The address of the system `system` listening at `host:port`.
    pub(crate) fn remote(system: &str, host: &str, port: u16) -> Self {
        Self {
            system: Arc::from(system),
            host: Some((Arc::from(host), port)),
        }
    }

    /// The address `text` writes: `tapio://system` or `tapio://system@host:port`, as
    /// `Display` prints it; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::parse_authority(text.strip_prefix("tapio://")?)
    }

    /// `system` or `system@host:port`.
    pub(crate) fn parse_authority(authority: &str) -> Option<Self> {
        let address = match authority.split_once('@') {
            None => Self::local(authority),
            Some((system, host_port)) => {
                let (host, port) = host_port.rsplit_once(':')?;
                let port = port.parse::<u16>().ok()?;
                if host.is_empty() || host.contains('/') {
                    return None;
                }
                Self::remote(system, host, port)
            }
        };
        let system_ok = !address.system().is_empty()
            && address
                .system()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        system_ok.then_some(address)
    }

    /// The name of the system.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The host and port, for a system that listens on the network.
    pub fn host_port(&self) -> Option<(&str, u16)> {
        self.host.as_ref().map(|(host, port)| (&**host, *port))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tapio://{}", self.system)?;
        if let Some((host, port)) = &self.host {
            write!(f, "@{host}:{port}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The path of an actor: an address and the names from the root down, such as
/// `/user/pipeline/worker`.
///
/// Paths are cheap to clone (one reference count) and share their parent's prefix.
/// `Display` prints the path alone; [`ActorPath::to_uri`] adds the address.
#[derive(Clone)]
pub struct ActorPath(Arc<Node>);

struct Node {
    link: Link,
    name: Name,
    depth: usize,
}

/// A path element. Short names (most are) live inside the node, which saves an
/// allocation per actor.
enum Name {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

const INLINE: usize = 22;

impl Name {
    fn new(name: &str) -> Self {
        match u8::try_from(name.len()) {
            Ok(len) if name.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..name.len()].copy_from_slice(name.as_bytes());
                Self::Inline { len, bytes }
            }
            _ => Self::Heap(Box::from(name)),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // The bytes were copied from a `&str`, so they are UTF-8.
            Self::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Self::Heap(name) => name,
        }
    }
}

/// Only the root holds the address; every other node points at its parent.
enum Link {
    Root(Box<Address>),
    Child(ActorPath),
}

/// Paths up to this deep are dropped as the compiler drops them, one nested call a
/// level; a deeper one, as a peer's URI can be (a frame of 1 MiB holds a path
/// 500,000 levels deep), is let go of in a loop.
const DROPPED_IN_A_LOOP_PAST: usize = 64;

impl Drop for Node {
    /// A node holds its parent, so the compiler's drop of a path no one else holds
    /// nests one call per level, and a deep one overflowed the thread's stack (an
    /// abort, not a panic). Past `DROPPED_IN_A_LOOP_PAST` levels, each ancestor only
    /// this path held is taken out in turn, its own parent swapped for the root
    /// (which outlives them all), and dropped with nothing left to recurse into.
    fn drop(&mut self) {
        if self.depth <= DROPPED_IN_A_LOOP_PAST {
            return;
        }
        let Link::Child(parent) = &mut self.link else {
            return;
        };
        let root = parent.top().clone();
        let mut next = std::mem::replace(parent, root.clone());
        while next.0.depth > DROPPED_IN_A_LOOP_PAST {
            // Another path still holds this ancestor, and so everything above it.
            let Some(mut node) = Arc::into_inner(next.0) else {
                return;
            };
            let Link::Child(parent) = &mut node.link else {
                return;
            };
            next = std::mem::replace(parent, root.clone());
        }
    }
}

impl ActorPath {
    /// The longest name an actor can have, in bytes. Names are ASCII, so this is also
    /// the longest in characters.
    pub const MAX_NAME_LEN: usize = 255;

    /// The root path `/` of a system.
    pub(crate) fn root(address: Address) -> Self {
        Self(Arc::new(Node {
            link: Link::Root(Box::new(address)),
            name: Name::new(""),
            depth: 0,
        }))
    }

    /// The path of a child with the given (already validated) name.
    pub(crate) fn child(&self, name: &str) -> Self {
        Self(Arc::new(Node {
            link: Link::Child(self.clone()),
            name: Name::new(name),
            depth: self.0.depth + 1,
        }))
    }

    /// The last element, such as `worker` in `/user/pipeline/worker`; empty for the root.
    pub fn name(&self) -> &str {
        self.0.name.as_str()
    }

    /// The path one level up; `None` for the root.
    pub fn parent(&self) -> Option<&ActorPath> {
        match &self.0.link {
            Link::Root(_) => None,
            Link::Child(parent) => Some(parent),
        }
    }

    /// The root `/` this path hangs from.
    fn top(&self) -> &ActorPath {
        let mut at = self;
        while let Link::Child(parent) = &at.0.link {
            at = parent;
        }
        at
    }

    /// The address of the system the actor lives in.
    pub fn address(&self) -> &Address {
        let mut at = self;
        loop {
            match &at.0.link {
                Link::Root(address) => return address,
                Link::Child(parent) => at = parent,
            }
        }
    }

    /// How many elements below the root: `/user` is 1, `/user/a` is 2.
    pub fn depth(&self) -> usize {
        self.0.depth
    }

    /// The names from the root down, such as `["user", "pipeline", "worker"]`.
    pub fn elements(&self) -> Vec<&str> {
        let mut names = Vec::with_capacity(self.0.depth);
        let mut at = Some(self);
        while let Some(path) = at {
            if path.parent().is_some() {
                names.push(path.name());
            }
            at = path.parent();
        }
        names.reverse();
        names
    }

    /// Whether `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &ActorPath) -> bool {
        let mut at = Some(self);
        while let Some(path) = at {
            if path.0.depth < other.0.depth {
                return false;
            }
            if path == other {
                return true;
            }
            at = path.parent();
        }
        false
    }

    /// The full URI of the path: `tapio://system/user/worker`.
    pub fn to_uri(&self) -> String {
        format!("{}{}", self.address(), self)
    }
}

impl PartialEq for ActorPath {
    /// Level by level from the leaves up, in a loop: a path may be as deep as a
    /// peer's URI, too deep to compare by recursion.
    fn eq(&self, other: &Self) -> bool {
        let (mut a, mut b) = (self, other);
        loop {
            if Arc::ptr_eq(&a.0, &b.0) {
                return true;
            }
            if a.0.depth != b.0.depth || a.0.name.as_str() != b.0.name.as_str() {
                return false;
            }
            match (&a.0.link, &b.0.link) {
                (Link::Root(x), Link::Root(y)) => return x == y,
                (Link::Child(x), Link::Child(y)) => (a, b) = (x, y),
                _ => return false,
            }
        }
    }
}

impl Eq for ActorPath {}

impl Hash for ActorPath {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.address().hash(state);
        for name in self.elements() {
            name.hash(state);
        }
    }
}

impl fmt::Display for ActorPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.parent().is_none() {
            return f.write_str("/");
        }
        for name in self.elements() {
            write!(f, "/{name}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ActorPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorPath({})", self.to_uri())
    }
}

/// Characters an actor name may hold besides ASCII letters and digits: RFC 3986's
/// characters for a path segment, less `%` (no escapes) and `(` `)`.
const NAME_PUNCTUATION: &str = "-_.*+:@&=,!~;'$";

/// Check a name given to `spawn`: it becomes one segment of the actor's URI, so it must
/// stand there as it is (the rule is stated on [`InvalidName`]). Checks run cheapest
/// first, and a name breaking several rules is refused for the first.
pub(crate) fn validate_name(name: &str) -> Result<(), InvalidName> {
    let problem = if name.is_empty() {
        Some(InvalidNameReason::Empty)
    } else if name == "." || name == ".." {
        Some(InvalidNameReason::DotSegment)
    } else if name.starts_with('$') {
        Some(InvalidNameReason::Reserved)
    } else if name.len() > ActorPath::MAX_NAME_LEN {
        Some(InvalidNameReason::TooLong { len: name.len() })
    } else {
        name.chars().find_map(refused_char)
    };
    match problem {
        Some(reason) => Err(InvalidName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A segment of a path that came from elsewhere (another system's URI): a name as
/// [`validate_name`] takes it, or a name tapio generated (`$` before one).
pub(crate) fn validate_segment(segment: &str) -> Result<(), InvalidName> {
    match segment.strip_prefix('$') {
        Some(generated) => validate_name(generated).map_err(|refused| InvalidName {
            name: segment.to_owned(),
            reason: refused.reason,
        }),
        None => validate_name(segment),
    }
}

/// Why `c` cannot be part of a name, or `None` if it can. Whitespace is checked before
/// control characters, so a tab reads as whitespace.
fn refused_char(c: char) -> Option<InvalidNameReason> {
    if c.is_ascii_alphanumeric() || NAME_PUNCTUATION.contains(c) {
        None
    } else if matches!(c, '/' | '#' | '?') {
        Some(InvalidNameReason::Delimiter(c))
    } else if c.is_whitespace() {
        Some(InvalidNameReason::Whitespace(c))
    } else if c.is_control() {
        Some(InvalidNameReason::Control(c))
    } else {
        Some(InvalidNameReason::Character(c))
    }
}

/// An anonymous name: `$` and the number `n` in base 64 (`$a`, `$b`, ..., the lowest
/// digit first, so `n = 64` is `$ab`), written into a buffer on the stack (no
/// allocation on the spawn path). A system numbers its actors' uids from its first
/// one; a `BehaviorTestKit` counts its own children.
pub(crate) struct AnonymousName {
    bytes: [u8; 12],
    len: usize,
}

const ANONYMOUS_DIGITS: &[u8; 64] =
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+~";

impl AnonymousName {
    pub(crate) fn new(mut n: u64) -> Self {
        let mut bytes = [b'$'; 12];
        let mut len = 1;
        loop {
            bytes[len] = ANONYMOUS_DIGITS[(n % 64) as usize];
            len += 1;
            n /= 64;
            if n == 0 {
                break;
            }
        }
        Self { bytes, len }
    }

    /// Whether `name` was generated: a given name never starts with `$`.
    pub(crate) fn is_one(name: &str) -> bool {
        name.starts_with('$')
    }

    /// The `n` that `name` was made from, if it is an anonymous name exactly as
    /// [`AnonymousName::new`] writes it.
    pub(crate) fn parse(name: &str) -> Option<u64> {
        let digits = name.strip_prefix('$')?;
        if digits.is_empty() || digits.len() > 11 {
            return None;
        }
        let mut n: u64 = 0;
        for byte in digits.bytes().rev() {
            let digit = ANONYMOUS_DIGITS.iter().position(|&d| d == byte)?;
            n = n.checked_mul(64)?.checked_add(digit as u64)?;
        }
        // `$ba` and `$b` would read as the same number: only the form `new` writes counts.
        (Self::new(n).as_str() == name).then_some(n)
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits from `ANONYMOUS_DIGITS` and `$` were written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("$")
    }
}

/// A name that cannot be used for an actor.
///
/// A name becomes one segment of the actor's URI (`tapio://system/user/{name}`), so it
/// must stand there as it is: 1 to [`ActorPath::MAX_NAME_LEN`] bytes of ASCII letters,
/// digits and `-_.*+:@&=,!~;'$`, neither `.` nor `..`, and not starting with `$`
/// (reserved for the names tapio generates). The message states this rule after the
/// reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid actor name {name:?}: {reason}. An actor name is one segment of its URI: \
     1 to {max} bytes of ASCII letters, digits and `-_.*+:@&=,!~;'$`, neither `.` nor \
     `..`, and not starting with `$`",
    max = ActorPath::MAX_NAME_LEN
)]
pub struct InvalidName {
    /// The name that was refused.
    pub name: String,
    /// Which rule it breaks.
    pub reason: InvalidNameReason,
}

/// Which naming rule an [`InvalidName`] breaks. Its message says what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidNameReason {
    /// The name is empty.
    #[error("a name cannot be empty; use `spawn_anonymous` to have one picked for you")]
    Empty,
    /// The name is `.` or `..`, which mean "here" and "one level up" in a path.
    #[error(
        "`.` and `..` mean \"here\" and \"one level up\" in a path, so they cannot name \
         an actor; pick a name with a letter or digit in it"
    )]
    DotSegment,
    /// The name starts with `$`, which is reserved for generated names.
    #[error(
        "names starting with `$` are reserved for the names tapio generates; drop the \
         `$`, or use `spawn_anonymous` to have a name picked for you"
    )]
    Reserved,
    /// The name is longer than [`ActorPath::MAX_NAME_LEN`] bytes.
    #[error(
        "it is {len} bytes long, over the limit of {max} bytes; use a shorter name and \
         keep long data in the actor's state",
        max = ActorPath::MAX_NAME_LEN
    )]
    TooLong {
        /// The length of the name, in bytes.
        len: usize,
    },
    /// The name holds `/`, `#` or `?`, which delimit the parts of a URI.
    #[error(
        "{0:?} delimits the parts of a URI (`/` path elements, `#` the incarnation uid, \
         `?` a query), so it cannot be part of a name; use `-` or `_` instead"
    )]
    Delimiter(char),
    /// The name holds whitespace.
    #[error("a name cannot contain whitespace such as {0:?}; use `-` or `_` between words")]
    Whitespace(char),
    /// The name holds a control character.
    #[error("a name cannot contain control characters such as {0:?}")]
    Control(char),
    /// The name holds a character outside the allowed set.
    #[error("{0:?} cannot be part of a name")]
    Character(char),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(names: &[&str]) -> ActorPath {
        names
            .iter()
            .fold(ActorPath::root(Address::local("sys")), |p, n| p.child(n))
    }

    #[test]
    fn a_path_prints_its_elements_and_its_uri() {
        let worker = path(&["user", "pipeline", "worker"]);
        assert_eq!(worker.to_string(), "/user/pipeline/worker");
        assert_eq!(worker.to_uri(), "tapio://sys/user/pipeline/worker");
        assert_eq!(worker.name(), "worker");
        assert_eq!(worker.depth(), 3);
        assert_eq!(path(&[]).to_string(), "/");
    }

    #[test]
    fn paths_built_apart_are_equal_when_their_elements_are() {
        assert_eq!(path(&["user", "a"]), path(&["user", "a"]));
        assert_ne!(path(&["user", "a"]), path(&["user", "b"]));
        assert!(path(&["user", "a", "b"]).starts_with(&path(&["user"])));
        assert!(!path(&["user"]).starts_with(&path(&["user", "a"])));
    }

    #[test]
    fn names_that_would_break_a_uri_are_refused_with_the_reason() {
        let long = "a".repeat(ActorPath::MAX_NAME_LEN + 1);
        for bad in [
            "", ".", "..", "$x", "a/b", "a#1", "a?", "a b", "tab\t", "nul\0", "é", &long,
        ] {
            let error = validate_name(bad).err();
            assert!(error.is_some(), "{bad:?} should be refused");
        }
        for good in ["a", "worker-1", "conn_2", "x.y", "a$b", "...", "probe-7"] {
            assert!(validate_name(good).is_ok(), "{good:?} should be accepted");
        }
    }

    #[test]
    fn long_and_short_names_read_back_as_given() {
        let long = "a".repeat(100);
        for name in ["a", "exactly-twenty-two-ch", long.as_str()] {
            assert_eq!(path(&["user", name]).name(), name);
        }
    }

    #[test]
    fn anonymous_names_are_distinct_and_reserved() {
        let names: std::collections::HashSet<_> = [0, 1, 63, 64, u64::MAX]
            .into_iter()
            .chain(0..10_000)
            .map(|n| AnonymousName::new(n).as_str().to_owned())
            .collect();
        assert_eq!(names.len(), 10_001);
        assert!(names.iter().all(|n| n.starts_with('$')));
    }

    #[test]
    fn anonymous_names_read_back_as_their_number_and_nothing_else_does() {
        for n in [0, 1, 63, 64, 4095, 4096, 123_456_789, u64::MAX] {
            assert_eq!(
                AnonymousName::parse(AnonymousName::new(n).as_str()),
                Some(n)
            );
        }
        for name in [
            "",
            "$",
            "a",
            "$ba",
            "$a!",
            "$~~~~~~~~~~~~",
            "$aaaaaaaaaaaa",
            "worker",
        ] {
            assert_eq!(AnonymousName::parse(name), None, "{name:?}");
        }
    }
}
