// A factory cannot fail: one returning a `Result` (or an `Option`) of its behavior
// is refused once, on the return type, saying where fallible work goes; before,
// five errors about protocols, messages and the wire. What the advice says to
// write compiles (`with_fallible_setup`).
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

#[remote_behavior("shop.fallible")]
pub fn fallible(_args: ()) -> Result<Behavior<Job>, std::io::Error> {
    Ok(Behaviors::ignore())
}

#[remote_behavior("shop.maybe")]
pub fn maybe(_args: ()) -> Option<Behavior<Job>> {
    None
}

#[remote_behavior("shop.setup")]
pub fn with_fallible_setup(path: String) -> Behavior<Job> {
    Behaviors::setup(move |_ctx| -> Result<Behavior<Job>, std::io::Error> {
        std::fs::metadata(&path)?;
        Ok(Behaviors::ignore())
    })
}

fn main() {}
