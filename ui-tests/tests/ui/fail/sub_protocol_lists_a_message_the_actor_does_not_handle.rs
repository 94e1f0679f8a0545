// S53: a sub-protocol lists only messages the actor handles.
use tapio::prelude::*;

#[message]
pub struct Deposit(pub u64);

#[message]
pub struct Withdraw(pub u64);

#[derive(Clone, Default)]
pub struct Account(u64);

#[actor(sub_protocols(Customer(Deposit, Withdraw)))]
impl Account {
    fn deposit(&mut self, Deposit(n): Deposit) {
        self.0 += n;
    }
}

fn main() {
    let _: Option<ActorRef<Customer>> = None;
}
