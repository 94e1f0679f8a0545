//! The ui tests live in `tests/`.
