// Arguments that once were silently ignored are refused on their token: a helper
// named where no helpers are generated, arguments to `#[signal]`, a method marked as
// two hooks, and a `#[tapio::test]` argument given twice.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    #[handler(helper = send_ping)]
    fn ping(&mut self, _: Ping) {}

    #[signal(anything)]
    fn on_signal(&mut self, _: &Signal) {}
}

pub struct Conn;
pub struct Idle;

#[actor(messages(Ping), states(Idle))]
impl Conn {}

#[state(Conn)]
impl Idle {
    #[on_entry]
    #[on_exit]
    fn both(&mut self) {}

    fn ping(&mut self, _: Ping) {}
}

#[tapio::test(start_paused = true, start_paused = false)]
async fn twice() {}

fn main() {}
