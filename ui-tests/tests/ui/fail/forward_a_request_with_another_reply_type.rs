// S52: a forward's reply type is the request's: a handler of a request answered with
// `u64` cannot hand on a request answered with `String`.
use tapio::prelude::*;
use tapio::Forward;

#[message(reply = u64)]
pub struct Count;

#[message(reply = String)]
pub struct Name;

#[derive(Clone, Default)]
pub struct Registry;

#[actor]
impl Registry {
    fn name(&mut self, _: Name) -> String {
        "registry".to_owned()
    }
}

#[derive(Clone)]
pub struct Front {
    registry: ActorRef<RegistryMsg>,
}

#[actor]
impl Front {
    fn count(&mut self, _: Count) -> Forward<u64> {
        Forward::to(&self.registry, Name)
    }
}

fn main() {}
