//! The floor: no framework. An actor is a tokio task that loops on an unbounded
//! `mpsc` receiver; a ref is the sender; ask is an `mpsc` send carrying a `oneshot`.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{Behaviour, Flow, Framework};

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Raw;

impl Framework for Raw {
    const NAME: &'static str = "raw tokio";
    type Ref<B: Behaviour<Self>> = mpsc::UnboundedSender<B::Msg>;
    type System = ();

    fn system() {}

    async fn shutdown(_: ()) {}

    fn spawn<B: Behaviour<Self>>(
        _: &(),
        mut behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send {
        let (tx, mut rx) = mpsc::unbounded_channel();
        // A task keeps a weak sender to itself: a strong one would keep its
        // channel open, and the task alive, after everyone else dropped theirs.
        let me = tx.downgrade();
        tokio::spawn(async move {
            behaviour.started();
            let me = || me.upgrade().expect("a message comes through a live sender");
            while let Some(msg) = rx.recv().await {
                if behaviour.handle(msg, &me) == Flow::Stop {
                    break;
                }
            }
        });
        std::future::ready(tx)
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        let _ = to.send(msg);
    }

    fn ask(asks: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::ask_raw(asks)
    }

    fn skynet(leaves: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::skynet_raw(leaves)
    }
}
