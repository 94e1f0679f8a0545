//! What the compiler must refuse, and what it must accept, with the messages it gives.
//! One misuse per file under `ui/fail`, each with the `.stderr` it must produce.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
