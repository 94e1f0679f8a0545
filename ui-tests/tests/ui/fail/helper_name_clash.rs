// A handler named like a method `ActorRef` already has: its typed helper would be
// hidden by `ActorRef::tell`, so the macro asks for another name.
use tapio::prelude::*;

#[message]
pub struct Note(pub String);

#[derive(Clone)]
pub struct Journal;

#[actor(helpers)]
impl Journal {
    fn tell(&mut self, _: Note) {}
}

fn main() {}
