// S53: a ref narrows only to a protocol whose every message the actor accepts.
use tapio::prelude::*;

#[message]
pub struct Deposit(pub u64);

#[message]
pub struct Withdraw(pub u64);

#[derive(Clone, Default)]
pub struct Account(u64);

#[actor]
impl Account {
    fn deposit(&mut self, Deposit(n): Deposit) {
        self.0 += n;
    }
}

fn hand_out(account: &ActorRef<AccountMsg>) -> ActorRef<Withdraw> {
    account.narrow()
}

fn main() {
    let _ = hand_out;
}
