// S21 (C): answering and then stopping keeps the declared reply type: a `ReplyThen`
// carries the reply the request declares, not another.
use tapio::ReplyThen;
use tapio::prelude::*;

#[message(reply = u64)]
pub struct Close;

#[derive(Clone)]
pub struct Account;

#[actor]
impl Account {
    fn close(&mut self, _: Close) -> ReplyThen<String, AccountMsg> {
        ReplyThen::stop(String::from("closed"))
    }
}

fn main() {}
