//! The routees of one router in their rotation order, the round-robin cursor, and
//! rendezvous hashing. Plain data: the router actor owns one and changes it.
//!
//! Routees stay in the order they joined; the round-robin cursor stays in place when a
//! routee leaves. `by_key` is rendezvous hashing over the routees' ids (splitmix64), so
//! a routee that leaves moves only its own keys.

/// Routees in rotation order, oldest first, and the index of the next one
/// round-robin picks.
#[derive(Debug, Clone)]
pub(crate) struct Rotation<T> {
    members: Vec<T>,
    next: usize,
}

impl<T> Default for Rotation<T> {
    fn default() -> Self {
        Self {
            members: Vec::new(),
            next: 0,
        }
    }
}

impl<T> Rotation<T> {
    /// Add a routee at the end of the rotation: it gets its first turn after every
    /// routee already there has had one.
    pub(crate) fn push(&mut self, member: T) {
        self.members.push(member);
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn members(&self) -> &[T] {
        &self.members
    }

    /// The routee whose turn it is, and the cursor moved past it.
    pub(crate) fn next(&mut self) -> Option<&T> {
        let index = self.next;
        let member = self.members.get(index)?;
        self.next = if index + 1 == self.members.len() {
            0
        } else {
            index + 1
        };
        Some(member)
    }

    /// Take out the first routee `is_it` picks, keeping the rotation going where it
    /// was: the routee after the removed one keeps its place in the order, so nobody
    /// gets a second turn and nobody loses one.
    pub(crate) fn remove_where(&mut self, is_it: impl Fn(&T) -> bool) -> Option<T> {
        let index = self.members.iter().position(is_it)?;
        Some(self.remove_at(index))
    }

    /// Take out the routee added last.
    pub(crate) fn pop_newest(&mut self) -> Option<T> {
        let last = self.members.len().checked_sub(1)?;
        Some(self.remove_at(last))
    }

    fn remove_at(&mut self, index: usize) -> T {
        let member = self.members.remove(index);
        // Everyone after `index` moved down one place; so does the cursor if it
        // pointed past the removed routee. If it pointed at it, it now points at its
        // successor, which is right too.
        if index < self.next {
            self.next -= 1;
        }
        if self.next >= self.members.len() {
            self.next = 0;
        }
        member
    }

    /// Keep only the routees `keep` accepts, in their order; the rotation starts
    /// again from the first.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.members.retain(keep);
        self.next = 0;
    }

    /// The routee that rendezvous hashing gives `key`: the one whose `id`, mixed
    /// with the key, scores highest. The same key picks the same routee while the
    /// members do not change; removing a routee moves only the keys it had, and
    /// adding one moves only the keys it now wins.
    pub(crate) fn by_key(&self, key: u64, id: impl Fn(&T) -> u64) -> Option<&T> {
        self.members
            .iter()
            .map(|member| (score(key, id(member)), member))
            .reduce(|best, candidate| {
                if candidate.0 > best.0 {
                    candidate
                } else {
                    best
                }
            })
            .map(|(_, member)| member)
    }
}

/// The rendezvous weight of routee `id` for `key`.
fn score(key: u64, id: u64) -> u64 {
    mix(key ^ mix(id))
}

/// The splitmix64 finalizer: every input bit flips about half the output bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::Rotation;

    fn rotation(members: &[u64]) -> Rotation<u64> {
        let mut rotation = Rotation::default();
        for &member in members {
            rotation.push(member);
        }
        rotation
    }

    fn turns(rotation: &mut Rotation<u64>, n: usize) -> Vec<u64> {
        (0..n).filter_map(|_| rotation.next().copied()).collect()
    }

    #[test]
    fn round_robin_is_strict() {
        let mut rotation = rotation(&[1, 2, 3]);
        assert_eq!(turns(&mut rotation, 7), [1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn removing_one_before_the_cursor_keeps_the_order() {
        let mut rotation = rotation(&[1, 2, 3, 4]);
        assert_eq!(turns(&mut rotation, 2), [1, 2]);
        assert_eq!(rotation.remove_where(|&m| m == 1), Some(1));
        assert_eq!(turns(&mut rotation, 4), [3, 4, 2, 3]);
    }

    #[test]
    fn removing_the_one_whose_turn_it_is_passes_to_its_successor() {
        let mut rotation = rotation(&[1, 2, 3]);
        assert_eq!(turns(&mut rotation, 1), [1]);
        rotation.remove_where(|&m| m == 2);
        assert_eq!(turns(&mut rotation, 3), [3, 1, 3]);
    }

    #[test]
    fn removing_the_last_one_when_its_turn_wraps_around() {
        let mut rotation = rotation(&[1, 2, 3]);
        assert_eq!(turns(&mut rotation, 2), [1, 2]);
        rotation.remove_where(|&m| m == 3);
        assert_eq!(turns(&mut rotation, 3), [1, 2, 1]);
    }

    #[test]
    fn removing_one_after_the_cursor_changes_nothing_before_it() {
        let mut rotation = rotation(&[1, 2, 3, 4]);
        assert_eq!(turns(&mut rotation, 1), [1]);
        rotation.remove_where(|&m| m == 4);
        assert_eq!(turns(&mut rotation, 4), [2, 3, 1, 2]);
    }

    #[test]
    fn pushing_adds_at_the_end_of_the_rotation() {
        let mut rotation = rotation(&[1, 2]);
        assert_eq!(turns(&mut rotation, 1), [1]);
        rotation.push(3);
        assert_eq!(turns(&mut rotation, 4), [2, 3, 1, 2]);
        // The cursor is at 3: taking it out passes the turn to the first.
        assert_eq!(rotation.pop_newest(), Some(3));
        assert_eq!(turns(&mut rotation, 2), [1, 2]);
    }

    #[test]
    fn an_empty_rotation_has_no_turn() {
        let mut rotation = rotation(&[1]);
        rotation.remove_where(|&m| m == 1);
        assert!(rotation.next().is_none());
        assert!(rotation.by_key(7, |&m| m).is_none());
        assert!(rotation.pop_newest().is_none());
    }

    fn owners(rotation: &Rotation<u64>) -> Vec<u64> {
        (0..2_000_u64)
            .map(|key| rotation.by_key(key, |&m| m).copied().unwrap_or(0))
            .collect()
    }

    #[test]
    fn rendezvous_moves_only_the_keys_of_a_removed_routee() {
        let mut rotation = rotation(&[11, 22, 33, 44, 55]);
        let before = owners(&rotation);
        assert_eq!(
            before,
            owners(&rotation),
            "the same key lands on the same routee"
        );
        for member in [11, 22, 33, 44, 55] {
            let share = before.iter().filter(|&&m| m == member).count();
            assert!(
                (250..550).contains(&share),
                "{member} owns {share} of 2000 keys"
            );
        }
        rotation.remove_where(|&m| m == 33);
        let after = owners(&rotation);
        for (key, (old, new)) in before.iter().zip(&after).enumerate() {
            if *old == 33 {
                assert_ne!(*new, 33);
            } else {
                assert_eq!(old, new, "key {key} moved though its routee stayed");
            }
        }
    }

    #[test]
    fn rendezvous_moves_only_the_keys_a_new_routee_wins() {
        let mut rotation = rotation(&[11, 22, 33]);
        let before = owners(&rotation);
        rotation.push(44);
        let after = owners(&rotation);
        let moved = before.iter().zip(&after).filter(|(old, new)| old != new);
        for (_, new) in moved {
            assert_eq!(*new, 44);
        }
        assert!(after.iter().filter(|&&m| m == 44).count() > 300);
    }
}
