//! The closest of some known names to one that is not among them: what an error
//! about a misspelled name suggests.

/// The candidate nearest to `name` by edit distance, when it is near enough to be
/// a misspelling (at most a third of the name's length, and at least one edit).
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        .map(|candidate| (distance(name, candidate), candidate))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, distance};

    #[test]
    fn a_misspelling_finds_its_name_and_a_stranger_finds_none() {
        assert_eq!(distance("Gren", "Green"), 1);
        assert_eq!(distance("Ready", "Redy"), 1);
        assert_eq!(distance("abc", "xyz"), 3);
        let states = ["Red", "Green", "Amber"];
        assert_eq!(closest("Gren", states), Some("Green"));
        assert_eq!(closest("Ambr", states), Some("Amber"));
        assert_eq!(closest("Purple", states), None);
        assert_eq!(closest("Red", states), None);
    }
}
