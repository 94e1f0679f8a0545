//! A grading of the compile errors themselves: each compile-fail case shows one
//! error, and no headline or label names what the macros generate or keep private.
//!
//! A case may show more only when it is listed in `tests/ui/graded.txt` with the
//! number of errors it shows and why: several independent mistakes in one file, or a
//! cascade still to be removed. The number must match exactly, so a case that grows a
//! second error fails here, and one that loses it must leave the list.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Names that belong to the expansions, not to the user's program.
const INTERNAL: &[&str] = &[
    "__private",
    "__tapio",
    "__Tapio",
    "NoSuccessors",
    "SwitchOutput",
    "Extract",
    "StateHandlers",
    "TypedHelper",
    "WireField",
];

/// What one `.stderr` shows.
struct Graded {
    errors: usize,
    internal: Vec<String>,
}

fn grade(text: &str) -> Graded {
    let mut errors = 0;
    let mut internal = Vec::new();
    for line in text.lines() {
        let headline = line.starts_with("error");
        if headline {
            errors += 1;
        }
        // A label: `  |     ^^^^ text` or `  |     ---- text`.
        let label = line.trim_start().starts_with('|')
            && (line.contains("^ ") || line.contains("- "))
            && !line.contains("= note");
        if headline || label {
            for name in INTERNAL {
                if line.contains(name) {
                    internal.push(format!("{name}: {}", line.trim()));
                }
            }
        }
    }
    Graded { errors, internal }
}

/// `case errors internal? reason`, one a line; `#` starts a comment.
fn allowed() -> BTreeMap<String, (usize, bool, String)> {
    let text = fs::read_to_string("tests/ui/graded.txt").unwrap_or_default();
    let mut cases = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.splitn(3, ' ');
        let case = words.next().unwrap_or_default().to_string();
        let count = words.next().unwrap_or_default();
        let reason = words.next().unwrap_or_default().trim().to_string();
        let (count, internal) = match count.strip_suffix("+internal") {
            Some(count) => (count, true),
            None => (count, false),
        };
        let count: usize = count
            .parse()
            .unwrap_or_else(|_| panic!("graded.txt line {}: no count: {line}", number + 1));
        assert!(
            !reason.is_empty(),
            "graded.txt line {}: {case} has no reason",
            number + 1
        );
        cases.insert(case, (count, internal, reason));
    }
    cases
}

#[test]
fn each_case_shows_one_error_and_no_internal_name() {
    let allowed = allowed();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(Path::new("tests/ui/fail"))
        .expect("the ui cases")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "stderr"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "no .stderr under tests/ui/fail");
    for path in entries {
        let case = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .expect("a case name")
            .to_string();
        let graded = grade(&fs::read_to_string(&path).expect("a .stderr"));
        let listed = allowed.get(&case);
        let allowed_count = listed.map_or(1, |(count, _, _)| *count);
        let allowed_internal = listed.is_some_and(|(_, internal, _)| *internal);
        if graded.errors == 0 {
            problems.push(format!("{case}: shows no error"));
        } else if graded.errors != allowed_count {
            problems.push(format!(
                "{case}: shows {} errors, graded.txt allows {allowed_count}",
                graded.errors
            ));
        }
        if !graded.internal.is_empty() && !allowed_internal {
            problems.push(format!(
                "{case}: names what the user never wrote: {}",
                graded.internal.join("; ")
            ));
        }
        if graded.internal.is_empty() && allowed_internal {
            problems.push(format!(
                "{case}: no longer names an internal item: drop +internal in graded.txt"
            ));
        }
        seen.push(case);
    }
    for case in allowed.keys() {
        if !seen.contains(case) {
            problems.push(format!("graded.txt lists {case}, which is no case"));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_grading_reads_headlines_and_labels() {
    let text = "error[E0277]: `A` is not a message\n --> src/a.rs:1:1\n  |\n1 | x\n  | ^ required by `__private::Extract`\n  = note: in `__tapio_x`\n\nerror: second\n";
    let graded = grade(text);
    assert_eq!(graded.errors, 2);
    assert_eq!(graded.internal.len(), 2, "{:?}", graded.internal);
}
