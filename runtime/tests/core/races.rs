//! Replies are serial on a multi-thread runtime, and a reply-then-stop cannot be
//! overtaken (S4); run in a bounded loop.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use tapio::DeadLetterReason;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

// S4 + S21: eight tasks ask one actor 100 times each, concurrently: its state needs no
// lock, so the answers are exactly 1..=800, each once. Then `Seal` answers with
// `ReplyThen::stop`: once the asker has the answer, the handler that sent it is over
// and its decision (stop) taken, so a `Bump` told right after the answer is never
// handled: it is one `RecipientStopped` dead letter, and the actor is terminated.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s4_replies_are_serial_and_a_reply_then_stop_cannot_be_overtaken() {
    let system = ActorSystem::new("tickets").unwrap();
    repeat("tickets", 30, |i| {
        let system = system.clone();
        async move {
            let mut letters = dead_letters(&system);
            let name = format!("ticket-{i}");
            let ticket = system.spawn(Ticket::default(), &name).unwrap();
            let mut tasks = take_askers(
                &ticket,
                100,
                |t| async move { t.ask(Take).timeout(T).await },
            );
            let mut answers = Vec::new();
            while let Some(done) = tasks.join_next().await {
                for answer in done.unwrap() {
                    answers.push(answer.map_err(|e| format!("an ask failed: {e}"))?);
                }
            }
            answers.sort_unstable();
            if answers != (1..=800).collect::<Vec<u64>>() {
                return Err(format!(
                    "answers are not 1..=800 once each: {} answers, first {:?}",
                    answers.len(),
                    &answers[..answers.len().min(10)]
                ));
            }
            let sealed = ticket
                .ask(Seal)
                .timeout(T)
                .await
                .map_err(|e| format!("seal: {e}"))?;
            ticket.tell(Bump);
            if sealed != 800 {
                return Err(format!("sealed at {sealed}"));
            }
            let mut probe = TestProbe::<u64>::new(&system);
            probe.watch(&ticket);
            probe.expect_terminated(&ticket, T).await;
            let path = format!("/user/{name}");
            let letter = timeout(T, async {
                loop {
                    let l = letters.recv().await.expect("the stream is open");
                    if l.recipient().to_string() == path {
                        return l;
                    }
                }
            })
            .await
            .map_err(|_| "no dead letter for the Bump told after ReplyThen::stop".to_string())?;
            if letter.reason() != &DeadLetterReason::RecipientStopped {
                return Err(format!("the Bump's letter says {:?}", letter.reason()));
            }
            Ok(())
        }
    })
    .await;
    timeout(T, system.terminate()).await.unwrap();
}
