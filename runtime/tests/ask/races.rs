//! Asks racing stops, full mailboxes, terminate and deadlines on a multi-thread
//! runtime, each case run in a bounded loop: each fails at once or is answered or
//! lettered exactly once (S19, S22, S23, S29, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::collections::HashMap;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{AskError, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::task::{JoinSet, yield_now};
use tokio::time::{Instant, sleep, timeout};

/// A channel whose receiving task keeps every ref sent to it (and answers how many).
fn keeper() -> (
    tokio::sync::mpsc::UnboundedSender<ActorRef<u64>>,
    tokio::task::JoinHandle<usize>,
) {
    let (keep, mut kept) = tokio::sync::mpsc::unbounded_channel::<ActorRef<u64>>();
    let keeper = tokio::spawn(async move {
        let mut refs = Vec::new();
        while let Some(r) = kept.recv().await {
            refs.push(r);
        }
        refs.len()
    });
    (keep, keeper)
}

#[message]
pub struct Hoard(pub ActorRef<u64>);

// S23 + ask docs ("An ask still waiting after a millisecond also watches its target,
// so it fails as soon as the target stops even when the reply ref lives on
// elsewhere"): 400 asks, each to its own target that hands the reply ref to a keeper
// outside the system and never answers; the target is stopped (from outside, or by
// itself after hoarding, or before the ask) after a jitter of a few scheduler turns
// or a millisecond or two, so the stop lands before, at and after the moment the ask
// starts watching. Deadline 20 s; each ask must fail with `TargetTerminated` within
// 3 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_an_ask_racing_its_targets_stop_fails_at_once() {
    let system = ActorSystem::new("ask-race").unwrap();
    let (keep, keeper) = keeper();
    let mut bad = Vec::new();
    for batch in 0..8_usize {
        let mut tasks = JoinSet::new();
        for j in 0..50_usize {
            let n = batch * 50 + j;
            let keep = keep.clone();
            let self_stop = n % 3 == 1;
            let target: ActorRef<Hoard> = system
                .spawn(
                    Behaviors::receive_message(move |Hoard(to): Hoard| {
                        let _ = keep.send(to);
                        if self_stop {
                            Behaviors::stopped()
                        } else {
                            Behaviors::same()
                        }
                    }),
                    &format!("t{n}"),
                )
                .unwrap();
            let system = system.clone();
            tasks.spawn(async move {
                let before = n % 10 == 0;
                if before {
                    system.stop(&target).unwrap();
                }
                let started = Instant::now();
                let ask = target.ask_with(Hoard).timeout(Duration::from_secs(20));
                let stop = async {
                    match n % 4 {
                        0 => {}
                        1 => {
                            turns(n % 7).await;
                        }
                        2 => sleep(ms(1)).await,
                        _ => sleep(ms(2)).await,
                    }
                    if !before && !self_stop {
                        system.stop(&target).unwrap();
                    }
                };
                let (answer, ()) = tokio::join!(timeout(Duration::from_secs(3), ask), stop);
                match answer {
                    Ok(Err(AskError::TargetTerminated { .. })) => None,
                    Ok(other) => Some(format!("ask {n}: {other:?} after {:?}", started.elapsed())),
                    Err(_) => Some(format!("ask {n} still waiting after 3 s (deadline 20 s)")),
                }
            });
        }
        bad.extend(failures(&mut tasks).await);
    }
    drop(keep);
    timeout(T, system.terminate()).await.unwrap();
    let _ = timeout(T, keeper).await;
    assert!(
        bad.is_empty(),
        "{} of 400 asks did not fail at once with TargetTerminated:\n{}",
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

#[message]
enum Slow {
    Get(ActorRef<u64>),
}

/// The same request as `Slow::Get`, with its answer declared: asked with `ask`.
#[message(reply = u64)]
struct SlowGet;

/// Answers each request after two turns of the scheduler.
struct SlowActor;

#[actor]
impl SlowActor {
    async fn slow(&mut self, m: Slow) {
        yield_now().await;
        yield_now().await;
        let Slow::Get(to) = m;
        to.tell(1);
    }

    async fn get(&mut self, _: SlowGet) -> u64 {
        yield_now().await;
        yield_now().await;
        1
    }
}

/// How an ask carries its reply ref: in a field of the message (`ask_with`), or in
/// the slot of a request whose answer is declared (`ask`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    AskWith,
    Ask,
}

/// `n` times, 256 concurrent asks (deadline 20 s) of a slow actor with a mailbox of
/// 2 under `strategy`, in a system `ask-full-{first + i}`, with a dead-letter
/// subscriber (which reads only afterwards) when `subscribe`. Each ask ends at once
/// (answered, or failed with `refused`); never at its 20 s deadline; and each
/// refusal matches one dead letter with `reason`.
async fn asks_on_a_full_mailbox(
    what: &str,
    n: usize,
    first: usize,
    strategy: OverflowStrategy,
    reason: DeadLetterReason,
    subscribe: bool,
    form: Form,
) {
    let build = |i| ActorSystem::new(&format!("ask-full-{}", first + i)).unwrap();
    in_built_systems(what, n, build, |_, system| {
        let reason = reason.clone();
        async move {
            let mut letters = subscribe.then(|| dead_letters(&system));
            let slow = system
                .spawn_with(
                    Behaviors::setup(|_| SlowActor),
                    "slow",
                    MailboxConfig::bounded(2, strategy).unwrap(),
                )
                .unwrap();
            let mut tasks = staggered(&slow, 256, 8, move |_, slow| async move {
                let ask = match form {
                    Form::AskWith => slow.ask_with(Slow::Get),
                    Form::Ask => slow.ask(SlowGet),
                };
                timeout(Duration::from_secs(3), ask.timeout(Duration::from_secs(20))).await
            });
            let (mut answered, mut refused, mut other) = (0, 0, Vec::new());
            while let Some(done) = tasks.join_next().await {
                {
                    let outcome = done.unwrap();
                    match outcome {
                        Ok(Ok(_)) => answered += 1,
                        Ok(Err(AskError::MailboxFull { .. }))
                            if reason == DeadLetterReason::MailboxFull =>
                        {
                            refused += 1
                        }
                        // S54: an ask's request says it was pushed out; an
                        // `ask_with`'s reply ref is a field the mailbox cannot see.
                        Ok(Err(AskError::PushedOut { .. }))
                            if reason == DeadLetterReason::PushedOut && form == Form::Ask =>
                        {
                            refused += 1
                        }
                        Ok(Err(AskError::Unanswered { .. }))
                            if reason == DeadLetterReason::PushedOut && form == Form::AskWith =>
                        {
                            refused += 1
                        }
                        Ok(Err(e)) => other.push(format!("{e:?}")),
                        Err(_) => other.push("still waiting after 3 s".to_string()),
                    }
                }
            }
            none(&other, "of 256 asks ended otherwise", 5)?;
            if answered == 0 {
                return Err("nothing was answered".into());
            }
            let Some(letters) = letters.as_mut() else {
                return Ok(());
            };
            let mut found = 0;
            let deadline = Instant::now() + SETTLE;
            while found < refused && Instant::now() < deadline {
                if let Ok(Some(letter)) = timeout(ms(10), letters.recv()).await
                    && letter.recipient().to_string() == "/user/slow"
                {
                    {
                        if letter.reason() != &reason {
                            return Err(format!("a letter with {:?}", letter.reason()));
                        }
                        found += 1;
                    }
                }
            }
            while let Ok(Some(letter)) = timeout(ms(30), letters.recv()).await {
                if letter.recipient().to_string() == "/user/slow" {
                    found += 1;
                }
            }
            if found != refused {
                return Err(format!(
                    "{refused} asks refused, {found} letters ({answered} answered)"
                ));
            }
            Ok(())
        }
    })
    .await;
}

// S29 + S22 + ask docs ("`AskError::MailboxFull`: the target's bounded mailbox was
// full and its overflow strategy (drop-new, or fail) refused the request; the ask
// fails at once"): 256 concurrent asks at a slow actor with a drop-new mailbox of 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_asks_on_a_full_drop_new_mailbox_fail_at_once_with_one_letter_each() {
    let (strategy, reason) = (OverflowStrategy::DropNew, DeadLetterReason::MailboxFull);
    let what = "asks vs drop-new";
    asks_on_a_full_mailbox(what, 3, 0, strategy, reason, true, Form::AskWith).await;
}

// S29 + S31 + ask docs ("`AskError::Unanswered`: the request was dropped without an
// answer"; "Under drop-oldest a request is taken, and one pushed out later fails its
// ask as `Unanswered`: at once for `ask`"): the same under drop-oldest, with a dead-letter subscriber (S31 invites
// one); each pushed-out request fails its ask at once (not at its 20 s deadline) and
// is one `PushedOut` letter. The letter carries the request without its reply slot,
// so the subscriber that holds it does not keep the ask waiting (an `ask_with`
// request, whose reply ref is a field, would: the ask docs say so).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_asks_on_a_full_drop_oldest_mailbox_fail_at_once_with_one_letter_each() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    let what = "asks vs drop-oldest";
    asks_on_a_full_mailbox(what, 3, 100, strategy, reason, true, Form::Ask).await;
}

// The same as the test above with no dead-letter subscriber: a control, which shows
// what the ask docs describe when nobody keeps the pushed-out request.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_asks_on_a_full_drop_oldest_mailbox_without_a_subscriber_fail_at_once() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    let what = "asks vs drop-oldest, no subscriber";
    asks_on_a_full_mailbox(what, 3, 200, strategy, reason, false, Form::AskWith).await;
}

// S23 + S19: 100 asks (deadline 20 s) at 100 actors that hand their reply refs to a
// keeper outside the system, made around the moment the system terminates (every
// other iteration with a dead-letter subscriber that keeps what it gets): every ask
// fails with `TargetTerminated` within 3 s, none waits for its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s23_asks_racing_terminate_fail_at_once() {
    repeat("asks vs terminate", 10, |i| async move {
        let system = ActorSystem::new(&format!("ask-term-{i}")).unwrap();
        let _letters = (i % 2 == 1).then(|| dead_letters(&system));
        let (keep, keeper) = keeper();
        let outcome: Result<(), String> = async {
            let targets: Vec<ActorRef<Hoard>> = (0..100)
                .map(|j| {
                    let keep = keep.clone();
                    system
                        .spawn(
                            Behaviors::receive_message(move |Hoard(to): Hoard| {
                                let _ = keep.send(to);
                            }),
                            &format!("t{j}"),
                        )
                        .unwrap()
                })
                .collect();
            let mut tasks = JoinSet::new();
            for (j, t) in targets.into_iter().enumerate() {
                tasks.spawn(async move {
                    turns(j % 10).await;
                    let ask = t.ask_with(Hoard).timeout(Duration::from_secs(20));
                    match timeout(Duration::from_secs(3), ask).await {
                        Ok(Err(AskError::TargetTerminated { .. })) => None,
                        Ok(other) => Some(format!("t{j}: {other:?}")),
                        Err(_) => Some(format!("t{j}: still waiting after 3 s")),
                    }
                });
            }
            turns(i * 3).await;
            let term = system.terminate();
            let bad = failures(&mut tasks).await;
            timeout(T, term)
                .await
                .map_err(|_| "terminate hung".to_string())?;
            none(&bad, "of 100 asks", 5)
        }
        .await;
        drop(keep);
        let out = finish(&system, outcome).await;
        let _ = timeout(T, keeper).await;
        out
    })
    .await;
}

// S23 + S4 + S31: eight tasks ask `Take` 50 times each while a ninth asks `Seal`
// (answered with `ReplyThen::stop`), with a dead-letter subscriber that keeps every
// letter. Asks answered before the seal get their numbers; asks queued behind it
// fail with `TargetTerminated` within 3 s (deadline 20 s), never with a timeout; the
// number of answered `Take`s equals the sealed count.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_s4_asks_queued_behind_a_reply_then_stop_fail_at_once() {
    let what = "asks behind a seal";
    in_systems(what, 20, "seal-race", |i, system| async move {
        let _letters = dead_letters(&system);
        let ticket = system.spawn(Ticket::default(), "ticket").unwrap();
        let mut tasks = take_askers(&ticket, 50, |t| async move {
            let ask = t.ask(Take).timeout(Duration::from_secs(20));
            timeout(Duration::from_secs(3), ask).await
        });
        turns((i % 5) * 20).await;
        let sealed = timeout(
            Duration::from_secs(3),
            ticket.ask(Seal).timeout(Duration::from_secs(20)),
        )
        .await
        .map_err(|_| "the seal hung".to_string())?
        .map_err(|e| format!("seal: {e}"))?;
        let (mut answered, mut bad) = (0, Vec::new());
        while let Some(done) = tasks.join_next().await {
            for outcome in done.unwrap() {
                match outcome {
                    Ok(Ok(_)) => answered += 1,
                    Ok(Err(AskError::TargetTerminated { .. })) => {}
                    Ok(Err(e)) => bad.push(format!("{e:?}")),
                    Err(_) => bad.push("still waiting after 3 s".to_string()),
                }
            }
        }
        none(&bad, "of 400 asks", 3)?;
        if answered != sealed {
            return Err(format!("{answered} Takes answered, sealed at {sealed}"));
        }
        Ok(())
    })
    .await;
}

#[message]
pub struct Echo {
    pub id: u64,
    pub reply_to: ActorRef<u64>,
}

// S22 + S31: 400 asks with deadlines from 0 to 2 ms at a responder that always
// answers (it records each answer it sends), a little later than that: each answer
// either reaches its ask or, when the ask has timed out, is one `AskEnded` dead letter
// ("A reply that arrives after that becomes a dead letter with a reason"; "A message
// that went nowhere is never silently lost"). Never both, never neither. The race is
// rare: up to 250 iterations (100 000 asks).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s22_s31_an_answer_racing_the_deadline_is_delivered_or_lettered_exactly_once() {
    in_systems("late answers", 250, "late", |i, system| async move {
        let mut letters = dead_letters(&system);
        let replied = shared();
        let rp = replied.clone();
        let responder: ActorRef<Echo> = system
            .spawn(
                Behaviors::receive_message_async(async move |e: Echo| {
                    turns((e.id % 5) as usize).await;
                    e.reply_to.tell(e.id);
                    rp.lock().unwrap().push(e.id);
                }),
                "responder",
            )
            .unwrap();
        let answered = shared();
        let timed_out = shared();
        let mut tasks = JoinSet::new();
        for id in 0..400_u64 {
            let (r, a, t) = (responder.clone(), answered.clone(), timed_out.clone());
            tasks.spawn(async move {
                let within = Duration::from_micros((id * 53 + i as u64 * 7) % 2000);
                match r
                    .ask_with(|reply_to| Echo { id, reply_to })
                    .timeout(within)
                    .await
                {
                    Ok(v) if v == id => a.lock().unwrap().push(v),
                    Ok(v) => return Err(format!("ask {id} got {v}")),
                    Err(AskError::Timeout { .. }) => t.lock().unwrap().push(id),
                    Err(e) => return Err(format!("ask {id}: {e:?}")),
                }
                Ok(())
            });
        }
        while let Some(done) = timeout(T, tasks.join_next())
            .await
            .map_err(|_| "asks hung".to_string())?
        {
            done.unwrap()?;
        }
        let expected: Vec<u64> = (0..400).collect();
        let found = settle(&mut letters, &answered, expected.len(), |l| {
            l.take_message::<u64>()
        })
        .await;
        account(&expected, &snapshot(&answered), &values(&found)).map_err(|e| {
            let mut by: HashMap<String, usize> = HashMap::new();
            for (_, r) in &found {
                *by.entry(format!("{r:?}")).or_default() += 1;
            }
            format!(
                "{e}; {} asks timed out; letters by reason: {by:?}; the responder replied {} times; the subscription lost {}",
                len(&timed_out),
                len(&replied),
                letters.lost()
            )
        })?;
        reasons(&found, &DeadLetterReason::AskEnded)?;
        one_letter_each(&found, &timed_out, "asks timed out", "AskEnded letters")
    })
    .await;
}
