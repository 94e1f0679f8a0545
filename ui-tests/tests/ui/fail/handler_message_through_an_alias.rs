// A type alias names the same type as the message it stands for: two handlers of
// one message, one through its alias, are refused.
use tapio::prelude::*;

#[message]
pub struct Reading(pub f64);

pub type Celsius = Reading;

pub struct Thermometer;

#[actor]
impl Thermometer {
    fn reading(&mut self, _: Reading) {}

    fn celsius(&mut self, _: Celsius) {}
}

fn main() {}
