// `#[handler(variant = Name)]` names a handler's variant in the protocol enum, for
// message types whose last segments clash (`ActorRef<u64>`, `ActorRef<&str>`).
#![deny(warnings)]

use tapio::prelude::*;

#[derive(Clone)]
pub struct Relay;

#[actor]
impl Relay {
    #[handler(variant = Numbers)]
    fn numbers(&mut self, _: ActorRef<u64>) {}

    #[handler(variant = Words)]
    fn words(&mut self, _: ActorRef<&'static str>) {}
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let system = ActorSystem::new("variants").unwrap();
        let relay = system.spawn(Relay, "relay").unwrap();
        let numbers: ActorRef<u64> = system.spawn(Behaviors::receive_message(|_: u64| {}), "numbers").unwrap();
        assert_eq!(format!("{:?}", RelayMsg::Numbers(numbers.clone(), Default::default())), "RelayMsg::Numbers(..)");
        relay.tell(numbers);
        system.terminate().await;
    });
}
