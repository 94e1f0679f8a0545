//! Mailbox: offers racing a stop each resolve, and every message is accounted for (S30, S31).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use tapio::DeadLetterReason;

// S30 + S31: producers `offer` into a full mailbox of capacity 2 while the actor is
// stopped. Every offer resolves promptly ("`false` once the actor has stopped (the
// message is then a dead letter), at once if it had stopped already"); a `true` is
// handled or a `RecipientStopped` letter, a `false` is a letter; exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s31_offers_racing_a_stop_resolve_and_account_every_message() {
    in_systems("offers vs stop", 60, "offer-stop", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 2);
        let k = (i * 29) % 400;
        let (mut tasks, refused, hung) = offerers(&sink, 4, 200, T);
        wait_for("k handled", || len(&handled) >= k).await?;
        system.stop(&sink).unwrap();
        join_all(&mut tasks).await;
        none_hung(&hung, &format!("did not resolve within {T:?}"))?;
        let expected = all(4, 200);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        let unlettered: Vec<String> = refused_are_letters(&refused, &found)
            .into_iter()
            .map(show)
            .collect();
        if !unlettered.is_empty() {
            return Err(format!(
                "refused offers that are not dead letters: {unlettered:?}"
            ));
        }
        Ok(())
    })
    .await;
}
