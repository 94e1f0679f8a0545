//! Asks that end in an unusual way: `TestConfig` fails a body that leaks an ask, a
//! request told instead of asked letters its answer, and `ReplyThen` answers then
//! switches to a fresh actor value (S21, S31, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::local_corners::*;
use crate::support::outside;
use crate::support::outside::panic_text;
use outside::{T, describe, ms, new_log};
use std::panic::AssertUnwindSafe;
use tapio::prelude::*;
use tapio::testkit::TestConfig;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::time::timeout;

#[message]
pub struct Question {
    pub reply_to: ActorRef<u64>,
}

#[test]
fn s48_test_config_fails_a_body_that_leaks_an_ask_and_names_it() {
    let (keep, kept) = std::sync::mpsc::channel::<ActorRef<u64>>();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(move || {
        TestConfig::new("leaky")
            .start_paused(true)
            .run(move |system: ActorSystem| async move {
                let hoarder = system
                    .spawn(
                        Behaviors::receive_message(move |q: Question| {
                            let _ = keep.send(q.reply_to);
                        }),
                        "hoarder",
                    )
                    .unwrap();
                let asked = hoarder
                    .ask_with(|reply_to| Question { reply_to })
                    .timeout(ms(100))
                    .await;
                assert!(asked.is_err());
            });
    }));
    let payload = outcome.expect_err("a leaked ask fails the test");
    let text = panic_text(payload.as_ref());
    assert!(text.contains("1 ask promise(s) still waiting"), "{text}");
    drop(kept);
}

#[tapio::test]
async fn s31_a_request_told_rather_than_asked_letters_its_answer(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let account = system
        .spawn(
            Account {
                balance: 12,
                log: new_log(),
            },
            "told",
        )
        .unwrap();
    account.tell(Balance);
    let letter = timeout(T, async {
        loop {
            let letter = letters.recv().await.expect("open");
            if letter.reason() == &DeadLetterReason::NoReplyExpected {
                return letter;
            }
        }
    })
    .await
    .expect("a NoReplyExpected letter");
    assert_eq!(
        letter.take_message::<u64>(),
        Some(12),
        "{}",
        describe(&letter)
    );
    assert_eq!(account.ask(Balance).timeout(T).await, Ok(12));
}

#[tapio::test]
async fn s21_s6_reply_then_answers_and_switches_to_a_fresh_actor_value(system: ActorSystem) {
    let account = system
        .spawn(
            Account {
                balance: 40,
                log: new_log(),
            },
            "resettable",
        )
        .unwrap();
    assert_eq!(account.ask(Reset).timeout(T).await, Ok(40));
    assert_eq!(account.ask(Balance).timeout(T).await, Ok(0));
}
