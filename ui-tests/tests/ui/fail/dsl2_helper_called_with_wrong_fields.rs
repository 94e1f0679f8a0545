// A typed helper called with the wrong field types: `deposit` takes the `u64` of
// `Deposit { amount }`.
use tapio::prelude::*;

#[message]
pub struct Deposit {
    pub amount: u64,
}

#[derive(Clone)]
pub struct Account;

#[actor(helpers)]
impl Account {
    fn deposit(&mut self, _: Deposit) {}
}

fn use_it(account: ActorRef<AccountMsg>) {
    account.deposit("5");
}

fn main() {}
