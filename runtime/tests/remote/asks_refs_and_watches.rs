//! Remote asks, refs and watches combined with the later features: lost and delayed
//! requests, pipelined asks, stashes discarding remote requests, routers, timers
//! through a partition, offers, and reply refs passed on (S14, S18, S21-S23, S25, S32,
//! S36, S37, S39-S42, S44, S45, S47).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::nodes::uri;
use crate::support::outside;
use outside::{Boom, T, describe, letters, letters_for, ms, next};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{AskError, BoxError, DeadLetterReason, StashBuffer, StashOverflow};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// An actor that forwards what it is told to a channel.
fn sink<M: Message>(tx: mpsc::UnboundedSender<M>) -> Behavior<M> {
    Behaviors::receive_message(move |m: M| {
        let _ = tx.send(m);
    })
    .into()
}

// =================================================================================
// 5. Remoting on loopback
// =================================================================================

#[message(remote = "sw11.n.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct N(pub u64);

#[message(remote = "sw11.echo.v1", reply = N)]
pub struct Echo(pub u64);

#[derive(Clone, Default)]
pub struct Echoer {
    seen: Arc<AtomicU64>,
}

#[actor]
impl Echoer {
    fn echo(&mut self, message: Echo) -> N {
        self.seen.fetch_add(1, SeqCst);
        N(message.0)
    }
}

#[message(remote = "sw11.watcher.v1")]
pub enum WatchProto {
    WatchMe(ActorRef<Cmd>),
    Poke(u64),
}

#[message(remote = "sw11.desk.v1")]
pub enum Desk {
    Ask { n: u64, reply_to: ActorRef<N> },
    Open,
    Crash,
}

#[message(remote = "sw11.mixed.v1")]
pub enum Mixed {
    Tell(u64),
    Ask { n: u64, reply_to: ActorRef<N> },
}

fn settings() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(Duration::from_secs(3))
}

fn pair() -> TwoNodes {
    two_nodes(settings()).expect("two nodes")
}

/// S44, S45, S40: a request lost on the way (`drop_next` toward B) and a reply lost
/// on the way back (`drop_next` toward A) each end the ask as `Timeout` at its
/// deadline, not as a failure of the target; nothing is retried, and the next ask
/// is answered.
#[tokio::test]
async fn s44_s45_a_lost_request_or_reply_is_a_timeout_and_the_next_ask_answers() {
    let nodes = pair();
    let seen = Arc::new(AtomicU64::new(0));
    nodes
        .b
        .spawn(Echoer { seen: seen.clone() }, "echo")
        .unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));

    nodes.a_to_b().drop_next(1);
    let started = Instant::now();
    let lost = echo.ask(Echo(1)).timeout(ms(600)).await;
    assert!(matches!(lost, Err(AskError::Timeout { .. })), "{lost:?}");
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    assert_eq!(seen.load(SeqCst), 1, "the request never arrived");
    assert_eq!(echo.ask(Echo(2)).timeout(T).await.unwrap(), N(2));
    assert_eq!(seen.load(SeqCst), 2);

    nodes.b_to_a().drop_next(1);
    let started = Instant::now();
    let lost = echo.ask(Echo(3)).timeout(ms(600)).await;
    assert!(matches!(lost, Err(AskError::Timeout { .. })), "{lost:?}");
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    assert_eq!(
        seen.load(SeqCst),
        3,
        "the request arrived, its answer did not"
    );
    assert_eq!(echo.ask(Echo(4)).timeout(T).await.unwrap(), N(4));
    nodes.terminate().await;
}

/// S22, S44, S45: a reply held back by a delay past the deadline ends the ask as
/// `Timeout`; when it arrives it is a dead letter on the asking system (`AskEnded`)
/// with its value; after the delay is cleared an ask is answered.
#[tokio::test]
async fn s22_s44_s45_a_reply_delayed_past_the_deadline_is_lettered_on_the_asker() {
    let nodes = pair();
    let mut sub = letters(&nodes.a);
    nodes.b.spawn(Echoer::default(), "echo").unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));
    nodes.b_to_a().delay(ms(700));
    let late = echo.ask(Echo(5)).timeout(ms(200)).await;
    assert!(matches!(late, Err(AskError::Timeout { .. })), "{late:?}");
    let letter = letter_where(&mut sub, T, |l| l.is::<N>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<N>(), Some(N(5)));
    nodes.b_to_a().clear();
    assert_eq!(echo.ask(Echo(6)).timeout(T).await.unwrap(), N(6));
    nodes.terminate().await;
}

/// S40, S44, S45: twenty asks in flight at once over a link delayed both ways are each
/// answered with their own value, no sooner than the two delays.
#[tokio::test]
async fn s40_s44_pipelined_asks_over_a_delayed_link_each_get_their_own_answer() {
    let nodes = pair();
    nodes.b.spawn(Echoer::default(), "echo").unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));
    nodes.a_to_b().delay(ms(60));
    nodes.b_to_a().delay(ms(60));
    let started = Instant::now();
    let asks: Vec<_> = (1..=20_u64)
        .map(|n| {
            let ask = echo.ask(Echo(n)).timeout(T);
            tokio::spawn(async move { (n, ask.await) })
        })
        .collect();
    for task in asks {
        let (n, answer) = timeout(T, task).await.unwrap().unwrap();
        assert_eq!(answer.unwrap(), N(n));
    }
    assert!(started.elapsed() >= ms(120), "{:?}", started.elapsed());
    nodes.terminate().await;
}

/// S36, S18, S41, S14: A sends B a ref to its own actor inside a message; B watches it
/// and uses it. A restart of the actor is not a stop (B hears nothing, and the ref
/// still reaches the new incarnation); its stop is heard on B exactly once.
#[tokio::test]
async fn s36_s41_s14_a_ref_sent_inside_a_message_is_watched_across_a_restart_then_a_stop() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<String>();
    let generations = Arc::new(AtomicU64::new(0));
    let target = nodes
        .a
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx| {
                let g = generations.fetch_add(1, SeqCst) + 1;
                let said = said_tx.clone();
                let _ = said.send(format!("start g{g}"));
                Behaviors::receive_message(move |c: Cmd| -> Result<(), Boom> {
                    match c {
                        Cmd::Crash => Err(Boom),
                        Cmd::Say(n) => {
                            let _ = said.send(format!("g{g} says {n}"));
                            Ok(())
                        }
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "target",
        )
        .unwrap();
    assert_eq!(next(&mut said).await, "start g1");

    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let kept: Arc<std::sync::Mutex<Option<ActorRef<Cmd>>>> = Arc::default();
    let on_signal = heard_tx.clone();
    nodes
        .b
        .spawn(
            Behaviors::receive(move |ctx, m: WatchProto| match m {
                WatchProto::WatchMe(r) => {
                    ctx.watch(&r);
                    r.tell(Cmd::Say(1));
                    *kept.lock().unwrap() = Some(r);
                }
                WatchProto::Poke(n) => {
                    if let Some(r) = kept.lock().unwrap().as_ref() {
                        r.tell(Cmd::Say(n));
                    }
                }
            })
            .on_signal(move |_ctx, signal| {
                if let Signal::Terminated(t) = signal {
                    let _ = on_signal.send(format!("terminated {}", t.actor().path().name()));
                }
            }),
            "watcher",
        )
        .unwrap();
    let watcher = nodes
        .a
        .resolve::<WatchProto>(&uri(&nodes.b, "/user/watcher"))
        .unwrap();
    watcher.tell(WatchProto::WatchMe(target.clone()));
    assert_eq!(next(&mut said).await, "g1 says 1");
    target.tell(Cmd::Crash);
    assert_eq!(next(&mut said).await, "start g2");
    watcher.tell(WatchProto::Poke(2));
    assert_eq!(next(&mut said).await, "g2 says 2");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "a restart is not a stop"
    );
    nodes.a.stop(&target).unwrap();
    assert_eq!(next(&mut heard).await, "terminated target");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "Terminated comes once"
    );
    nodes.terminate().await;
}

/// S14, S23, S44, S31: a remote ask held in a stash on B when B's actor restarts:
/// B letters the request (`StashDiscarded`), A's ask ends without an answer (it is
/// not left hanging past its deadline), and the next incarnation answers a new ask.
#[tokio::test]
async fn s14_s44_a_remote_ask_held_in_a_stash_discarded_by_a_restart_ends() {
    let nodes = pair();
    let mut b_letters = letters(&nodes.b);
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |d: Desk| -> Result<Behavior<Desk>, BoxError> {
            match d {
                Desk::Ask { n, reply_to } => {
                    stash.stash(Desk::Ask { n, reply_to })?;
                    let _ = stashed_tx.send(n);
                    Ok(Behaviors::same())
                }
                Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|d: Desk| {
                    if let Desk::Ask { n, reply_to } = d {
                        reply_to.tell(N(n * 10));
                    }
                }))),
                Desk::Crash => Err(Boom.into()),
            }
        })
    })
    .unwrap();
    let on_b = nodes
        .b
        .spawn(
            Behaviors::supervise(desk).on_failure::<Boom>(SupervisorStrategy::restart()),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    let ask = remote
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(ms(2_500));
    let started = Instant::now();
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(&mut stashed).await, 1);
    remote.tell(Desk::Crash);
    let letter = letters_for(&mut b_letters, on_b.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::StashDiscarded);
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    assert!(
        matches!(
            outcome,
            Err(AskError::Unanswered { .. } | AskError::Timeout { .. })
        ),
        "{outcome:?}"
    );
    // Locally this ask fails at once as `Unanswered`; across the link it waits
    // for its deadline. Either way it ends.
    assert!(started.elapsed() < T, "{:?}", started.elapsed());
    let again = remote
        .ask_with(|reply_to| Desk::Ask { n: 2, reply_to })
        .timeout(T);
    let again = tokio::spawn(async move { again.await });
    assert_eq!(next(&mut stashed).await, 2);
    remote.tell(Desk::Open);
    assert_eq!(timeout(T, again).await.unwrap().unwrap().unwrap(), N(20));
    nodes.terminate().await;
}

/// S40, S47, S44: a tell, an offer, an ask and a tell from one system to one actor go
/// on one association and arrive in the order sent, whatever way each was sent.
#[tokio::test]
async fn s40_s47_tell_offer_ask_and_tell_keep_their_order_on_one_association() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |m: Mixed| match m {
                Mixed::Tell(n) => {
                    let _ = tx.send(n);
                }
                Mixed::Ask { n, reply_to } => {
                    let _ = tx.send(n);
                    reply_to.tell(N(n));
                }
            }),
            "mixed",
        )
        .unwrap();
    let remote = nodes
        .a
        .resolve::<Mixed>(&uri(&nodes.b, "/user/mixed"))
        .unwrap();
    for round in 0..5_u64 {
        let base = round * 10;
        remote.tell(Mixed::Tell(base + 1));
        assert!(remote.offer(Mixed::Tell(base + 2)).await);
        let ask = remote
            .ask_with(|reply_to| Mixed::Ask {
                n: base + 3,
                reply_to,
            })
            .timeout(T);
        remote.tell(Mixed::Tell(base + 4));
        assert!(remote.offer(Mixed::Tell(base + 5)).await);
        assert_eq!(ask.await.unwrap(), N(base + 3));
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(next(&mut rx).await);
        }
        assert_eq!(got, [base + 1, base + 2, base + 3, base + 4, base + 5]);
    }
    nodes.terminate().await;
}

#[message]
#[derive(Clone)]
pub struct Beat;

/// S25, S42, S40: a fixed-rate timer on A telling an actor on B keeps going through a
/// partition shorter than `unreachable_after`: when it heals every tick's message
/// arrives, in order, none twice, and nobody was given up on.
#[tokio::test]
async fn s25_s42_a_timers_tells_through_a_short_partition_all_arrive_in_order() {
    let nodes = pair();
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    nodes.b.spawn(sink(tx), "beats").unwrap();
    let to_b = nodes.a.resolve::<N>(&uri(&nodes.b, "/user/beats")).unwrap();
    nodes
        .a
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.timers().start_fixed_rate("beat", Beat, ms(20)).unwrap();
                let sent = AtomicU64::new(0);
                let to_b = to_b.clone();
                Behaviors::receive(move |ctx, _: Beat| {
                    let n = sent.fetch_add(1, SeqCst) + 1;
                    to_b.tell(N(n));
                    if n == 40 {
                        ctx.timers().cancel("beat");
                    }
                })
            }),
            "drummer",
        )
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 5 {
        got.push(next(&mut rx).await.0);
    }
    nodes.partition();
    // The fault lasts this long; nothing waits on it for an outcome.
    tokio::time::sleep(ms(400)).await;
    nodes.heal();
    while got.len() < 40 {
        got.push(next(&mut rx).await.0);
    }
    assert_eq!(got, (1..=40).collect::<Vec<u64>>());
    assert!(
        timeout(ms(200), rx.recv()).await.is_err(),
        "nothing twice, nothing after the cancel"
    );
    assert!(gave_up.try_recv().is_none(), "nobody was given up on");
    nodes.terminate().await;
}

/// S39, S44: an ask to a port nobody listens on fails fast with `Unreachable` (not at
/// its deadline), and its request is a dead letter naming that peer.
#[tokio::test]
async fn s39_s44_an_ask_to_a_port_nobody_listens_on_is_unreachable_at_once() {
    let system = ActorSystem::builder("lonely")
        .remote(settings())
        .build()
        .unwrap();
    let mut sub = letters(&system);
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let ghost = system
        .resolve::<EchoerMsg>(&format!("tapio://ghost@127.0.0.1:{port}/user/echo"))
        .unwrap();
    let started = Instant::now();
    let outcome = ghost.ask(Echo(1)).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(outcome, Err(AskError::Unreachable { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let letter = letter_where(&mut sub, T, |l| l.is::<Echo>() || l.is::<EchoerMsg>()).await;
    match letter.reason() {
        DeadLetterReason::Unreachable { peer } => assert_eq!(peer, ghost.path().address()),
        other => panic!("expected Unreachable, got {other:?}"),
    }
    system.terminate().await;
}

/// S47, S40: `offer` toward a peer resolves as soon as this system's outbound buffer
/// takes the message, not when the far actor gets it: over a link delayed by 600 ms
/// the offer is done long before the message arrives, and it does arrive.
#[tokio::test]
async fn s47_an_offer_to_a_peer_resolves_on_local_room_not_on_delivery() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    nodes.b.spawn(sink(tx), "slowly").unwrap();
    let to_b = nodes
        .a
        .resolve::<N>(&uri(&nodes.b, "/user/slowly"))
        .unwrap();
    assert!(to_b.offer(N(0)).await);
    assert_eq!(next(&mut rx).await, N(0));
    nodes.a_to_b().delay(ms(600));
    let started = Instant::now();
    assert!(timeout(T, to_b.offer(N(1))).await.unwrap());
    let offered = started.elapsed();
    assert!(
        offered < ms(300),
        "the offer waited for delivery: {offered:?}"
    );
    assert_eq!(next(&mut rx).await, N(1));
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    nodes.terminate().await;
}

/// S45, S41: `drop_next` loses messages, never the link's own frames: a watch made
/// just before a dropped message still holds (the stop is heard), while the message
/// after the watch is the one lost, and the next one arrives.
#[tokio::test]
async fn s45_s41_drop_next_loses_the_message_not_the_watch_made_before_it() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    let target = nodes.b.spawn(sink(tx), "target").unwrap();
    let on_b = nodes
        .a
        .resolve::<N>(&uri(&nodes.b, "/user/target"))
        .unwrap();
    on_b.tell(N(0));
    assert_eq!(next(&mut rx).await, N(0));
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let (go_tx, mut go) = mpsc::unbounded_channel::<()>();
    nodes.a_to_b().drop_next(1);
    let watched = on_b.clone();
    nodes
        .a
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.watch(&watched);
                watched.tell(N(1));
                watched.tell(N(2));
                let _ = go_tx.send(());
                Behaviors::receive_message(|_: u64| ()).on_signal({
                    let heard = heard_tx.clone();
                    move |_ctx, signal| {
                        if let Signal::Terminated(t) = signal {
                            let _ = heard.send(t.actor().path().name().to_string());
                        }
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    next(&mut go).await;
    assert_eq!(next(&mut rx).await, N(2), "N(1) is the message lost");
    nodes.b.stop(&target).unwrap();
    assert_eq!(next(&mut heard).await, "target");
    nodes.terminate().await;
}

/// S23, S44, S27: a remote ask held in a stash on B when B's actor stops: A's ask
/// fails with `TargetTerminated` long before its deadline.
#[tokio::test]
async fn s23_s44_a_remote_ask_held_in_a_stash_fails_fast_when_its_holder_stops() {
    let nodes = pair();
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |d: Desk| -> Result<Behavior<Desk>, StashOverflow> {
            match d {
                Desk::Ask { n, reply_to } => {
                    stash.stash(Desk::Ask { n, reply_to })?;
                    let _ = stashed_tx.send(n);
                    Ok(Behaviors::same())
                }
                Desk::Open => Ok(Behaviors::same()),
                Desk::Crash => Ok(Behaviors::stopped()),
            }
        })
    })
    .unwrap();
    nodes.b.spawn(desk, "desk").unwrap();
    let remote = desk_on_b(&nodes);
    let ask = remote
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(Duration::from_secs(20));
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(&mut stashed).await, 1);
    let started = Instant::now();
    remote.tell(Desk::Crash);
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    nodes.terminate().await;
}

#[message(remote = "sw11.poll.v1")]
#[derive(Clone)]
pub struct RemotePoll {
    pub reply_to: ActorRef<N>,
}

/// S44, S32, S22: an ask from A to a broadcast pool on B is answered by every routee:
/// the first answer resolves the ask, and the others are dead letters on A saying
/// the promise had its answer already.
#[tokio::test]
async fn s44_s32_a_remote_ask_to_a_broadcast_pool_letters_the_extra_answers_on_the_asker() {
    let nodes = pair();
    let mut a_letters = letters(&nodes.a);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, p: RemotePoll| {
            let n: u64 = ctx
                .path()
                .name()
                .trim_start_matches("routee-")
                .parse()
                .unwrap();
            p.reply_to.tell(N(n));
        })
    })
    .unwrap()
    .broadcast();
    nodes.b.spawn(pool, "fanout").unwrap();
    let remote = nodes
        .a
        .resolve::<RemotePoll>(&uri(&nodes.b, "/user/fanout"))
        .unwrap();
    let first = remote
        .ask_with(|reply_to| RemotePoll { reply_to })
        .timeout(T)
        .await
        .unwrap();
    let mut got = vec![first.0];
    for _ in 0..2 {
        let letter = letter_where(&mut a_letters, T, |l| l.is::<N>()).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::AlreadyAnswered,
            "{}",
            describe(&letter)
        );
        got.push(letter.take_message::<N>().unwrap().0);
    }
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3]);
    nodes.terminate().await;
}

#[message(remote = "sw11.open-session.v1", reply = Session)]
pub struct OpenSession;

#[message(remote = "sw11.session.v1")]
pub struct Session {
    pub worker: ActorRef<Cmd>,
}

#[derive(Clone)]
pub struct Sessions {
    said: mpsc::UnboundedSender<u64>,
}

#[actor]
impl Sessions {
    fn open(&mut self, ctx: &mut Ctx<Self>, _: OpenSession) -> Session {
        let said = self.said.clone();
        let worker = ctx
            .spawn_anonymous(Behaviors::receive_message(move |c: Cmd| match c {
                Cmd::Say(n) => {
                    let _ = said.send(n);
                    Behaviors::same()
                }
                Cmd::Crash => Behaviors::stopped(),
            }))
            .unwrap();
        Session { worker }
    }
}

/// S36, S2, S41, S44: the answer to a remote ask carries a ref to an anonymous actor
/// the answering actor just spawned; on A it is a live ref to it (its tells arrive,
/// in order), A watches it, and hears `Terminated` when it stops.
#[tokio::test]
async fn s36_s41_a_ref_to_a_fresh_anonymous_child_inside_a_reply_is_live_and_watchable() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(Sessions { said: said_tx }, "sessions")
        .unwrap();
    let sessions = nodes
        .a
        .resolve::<SessionsMsg>(&uri(&nodes.b, "/user/sessions"))
        .unwrap();
    let session = sessions.ask(OpenSession).timeout(T).await.unwrap();
    let worker = session.worker;
    assert!(worker.path().name().starts_with('$'), "{}", worker.path());
    assert_eq!(worker.path().address(), nodes.b.address());
    for n in 1..=5 {
        worker.tell(Cmd::Say(n));
    }
    for n in 1..=5 {
        assert_eq!(next(&mut said).await, n);
    }
    let mut probe = TestProbe::<String>::new(&nodes.a);
    probe.watch(&worker);
    worker.tell(Cmd::Crash);
    probe.expect_terminated(&worker, T).await;
    nodes.terminate().await;
}

/// A B-side actor that stops on `Crash` and reports `Say`.
fn stoppable(said: mpsc::UnboundedSender<u64>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |c: Cmd| match c {
        Cmd::Say(n) => {
            let _ = said.send(n);
            Behaviors::same()
        }
        Cmd::Crash => Behaviors::stopped(),
    })
    .into()
}

/// S18, S41: two actors on A watch one actor on B; one of them unwatches; when the
/// actor stops, the other still hears `Terminated` (once), the one that unwatched
/// hears nothing.
#[tokio::test]
async fn s18_s41_one_of_two_remote_watchers_unwatching_leaves_the_other_watching() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    nodes.b.spawn(stoppable(said_tx), "watched").unwrap();
    let on_b = nodes
        .a
        .resolve::<Cmd>(&uri(&nodes.b, "/user/watched"))
        .unwrap();
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let w1 = nodes
        .a
        .spawn(watcher("w1", heard_tx.clone()), "w1")
        .unwrap();
    let w2 = nodes.a.spawn(watcher("w2", heard_tx), "w2").unwrap();
    w1.tell(Watcher::Watch(on_b.clone()));
    w2.tell(Watcher::Watch(on_b.clone()));
    // A round trip after both watches were made: each watch has reached B by then.
    on_b.tell(Cmd::Say(1));
    assert_eq!(next(&mut said).await, 1);
    w1.tell(Watcher::Unwatch(on_b.clone()));
    on_b.tell(Cmd::Say(2));
    assert_eq!(next(&mut said).await, 2);
    on_b.tell(Cmd::Crash);
    assert_eq!(next(&mut heard).await, "w2 heard watched");
    assert!(
        timeout(ms(400), heard.recv()).await.is_err(),
        "only w2, and once"
    );
    nodes.terminate().await;
}

/// S18, S41: an actor that watches a remote actor, tells it to stop and unwatches it,
/// all in one handler, never hears `Terminated`, though the stop happens and its
/// notice crosses the link; over twenty actors at once.
#[tokio::test]
async fn s18_s41_unwatching_a_remote_actor_in_the_turn_that_stops_it_hears_nothing() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let mut targets = Vec::new();
    for i in 0..20 {
        let name = format!("t{i}");
        let local = nodes.b.spawn(stoppable(said_tx.clone()), &name).unwrap();
        let remote = nodes
            .a
            .resolve::<Cmd>(&uri(&nodes.b, &format!("/user/{name}")))
            .unwrap();
        targets.push((local, remote));
    }
    for (_, remote) in &targets {
        remote.tell(Cmd::Say(0));
    }
    for _ in 0..20 {
        assert_eq!(next(&mut said).await, 0);
    }
    let mut ends = TestProbe::<String>::new(&nodes.b);
    for (local, _) in &targets {
        ends.watch(local);
    }
    let w = nodes.a.spawn(watcher("w", heard_tx.clone()), "w").unwrap();
    for (_, remote) in &targets {
        w.tell(Watcher::WatchStopUnwatch(remote.clone()));
    }
    for (local, _) in &targets {
        ends.expect_terminated(local, T).await;
    }
    // A control watch made afterwards is heard: the notices had time to cross.
    let control = nodes.b.spawn(stoppable(said_tx), "control").unwrap();
    let control_remote = nodes
        .a
        .resolve::<Cmd>(&uri(&nodes.b, "/user/control"))
        .unwrap();
    w.tell(Watcher::Watch(control_remote.clone()));
    control_remote.tell(Cmd::Say(9));
    assert_eq!(next(&mut said).await, 9);
    nodes.b.stop(&control).unwrap();
    assert_eq!(next(&mut heard).await, "w heard control");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "nothing for the unwatched ones"
    );
    nodes.terminate().await;
}

// ----------------------------------------------------------- requests dropped there

/// Ask `target` for `Desk::Ask { n: 1 }`, wait until `held` says its actor has the
/// request, do `then`, and give the ask's outcome. The deadline is far: an outcome
/// other than `Timeout` came from the other side.
async fn ask_desk(
    target: &ActorRef<Desk>,
    held: &mut mpsc::UnboundedReceiver<u64>,
    then: impl FnOnce(),
) -> Result<N, AskError> {
    let ask = target
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(Duration::from_secs(30));
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(held).await, 1);
    then();
    timeout(T, waiting)
        .await
        .expect("the ask ended before the test's bound")
        .expect("the ask's task")
}

/// The ref, resolved on a, to the actor named "desk" on b.
fn desk_on_b(nodes: &TwoNodes) -> ActorRef<Desk> {
    nodes
        .a
        .resolve::<Desk>(&uri(&nodes.b, "/user/desk"))
        .unwrap()
}

/// A desk on b that drops each request's reply ref unanswered and then says which
/// request it had; the ref to it from a, and what it says.
fn dropping_desk_on_b(nodes: &TwoNodes) -> (ActorRef<Desk>, mpsc::UnboundedReceiver<u64>) {
    let (held_tx, held) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    drop(reply_to);
                    let _ = held_tx.send(n);
                }
            }),
            "desk",
        )
        .unwrap();
    (desk_on_b(nodes), held)
}

/// S14, S44: a request from another system held in a stash that a restart discards
/// fails its ask at once with `Unanswered`, as a local one does, not at the deadline.
#[tokio::test]
async fn s14_s44_a_remote_request_discarded_from_a_stash_is_unanswered_at_once() {
    let nodes = pair();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::supervise(
        Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
            let held_tx = held_tx.clone();
            Behaviors::receive_message(move |d: Desk| -> Result<(), BoxError> {
                match d {
                    Desk::Ask { n, reply_to } => {
                        stash.stash(Desk::Ask { n, reply_to })?;
                        let _ = held_tx.send(n);
                    }
                    Desk::Open => {}
                    Desk::Crash => return Err(Boom.into()),
                }
                Ok(())
            })
        })
        .unwrap(),
    )
    .on_failure::<Boom>(SupervisorStrategy::restart());
    nodes.b.spawn(desk, "desk").unwrap();
    let remote = desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || remote.tell(Desk::Crash)).await;
    assert!(
        matches!(&outcome, Err(AskError::Unanswered { target }) if target.name() == "desk"),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S21, S44: a handler on another system that drops the request's reply ref without
/// answering fails the ask at once with `Unanswered`, as a local handler does.
#[tokio::test]
async fn s21_s44_a_remote_handler_that_drops_the_reply_ref_is_unanswered_at_once() {
    let nodes = pair();
    let (remote, mut held) = dropping_desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || ()).await;
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S44, S36: a handler that passes the reply ref on, in a message to an actor of a
/// third place (here back on the asking system), has not dropped the request: the
/// answer that actor gives reaches the ask.
#[tokio::test]
async fn s44_s36_a_reply_ref_passed_on_across_the_link_is_not_unanswered() {
    let nodes = pair();
    let answerer = nodes
        .a
        .spawn(
            Behaviors::receive_message(|d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    reply_to.tell(N(n * 10));
                }
            }),
            "answerer",
        )
        .unwrap();
    let onward = nodes.b.resolve::<Desk>(&answerer.to_string()).unwrap();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    onward.tell(Desk::Ask { n, reply_to });
                    let _ = held_tx.send(n);
                }
            }),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    for _ in 0..20 {
        let outcome = ask_desk(&remote, &mut held, || ()).await;
        assert_eq!(outcome, Ok(N(10)));
    }
    nodes.terminate().await;
}

/// S23, S44: the target passes the request to a worker of its own, which stops
/// holding it. The target did not stop, so the ask fails at once with `Unanswered`,
/// as a local one does; `TargetTerminated` is for the target's own end.
#[tokio::test]
async fn s23_s44_a_request_passed_to_a_worker_that_stops_is_unanswered_not_terminated() {
    let nodes = pair();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    let worker = nodes
        .b
        .spawn(
            Behaviors::setup(move |_| {
                let held_tx = held_tx.clone();
                let kept = std::sync::Mutex::new(Vec::new());
                Behaviors::receive_message(move |d: Desk| match d {
                    Desk::Ask { n, reply_to } => {
                        kept.lock().unwrap().push(reply_to);
                        let _ = held_tx.send(n);
                        Behaviors::same()
                    }
                    Desk::Open | Desk::Crash => Behaviors::stopped(),
                })
            }),
            "worker",
        )
        .unwrap();
    let to_worker = worker.clone();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| to_worker.tell(d)),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || worker.tell(Desk::Crash)).await;
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S37, S44: a peer's message carrying a ref to a promise at some third address,
/// which the actor drops unused, does not make this system dial that address: only
/// a system it is linked with hears that a request went unanswered.
#[tokio::test]
async fn s37_s44_an_unused_promise_ref_naming_a_third_address_dials_nobody() {
    let nodes = pair();
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = elsewhere.local_addr().unwrap().port();
    let (remote, mut held) = dropping_desk_on_b(&nodes);
    let third = format!("tapio://third@127.0.0.1:{port}/system/promises/7");
    let reply_to = nodes.a.resolve::<N>(&third).unwrap();
    remote.tell(Desk::Ask { n: 5, reply_to });
    assert_eq!(next(&mut held).await, 5);
    // The drop happened before `held` heard; a dial would follow at once.
    let dialled = timeout(ms(500), elsewhere.accept()).await;
    assert!(dialled.is_err(), "b dialled the address a peer's ref named");
    nodes.terminate().await;
}

#[message(remote = "sw11.failing.v1", reply = N)]
pub struct Failing(pub u64);

/// Answers a `Failing` with an error: its handler fails.
#[derive(Clone, Default)]
pub struct Failer;

#[actor]
impl Failer {
    fn failing(&mut self, _: Failing) -> Result<N, Boom> {
        Err(Boom)
    }
}

/// S9, S23, S44: a request whose handler fails, with the default decision (stop):
/// the ask fails at once as it does locally, with `TargetTerminated`, whether the
/// target is here or on another system.
#[tokio::test]
async fn s9_s23_s44_a_request_whose_handler_fails_and_stops_the_target_is_terminated() {
    let nodes = pair();
    let local = nodes.a.spawn(Failer, "failer").unwrap();
    nodes.b.spawn(Failer, "failer").unwrap();
    let remote = nodes
        .a
        .resolve::<FailerMsg>(&uri(&nodes.b, "/user/failer"))
        .unwrap();
    for target in [local, remote] {
        let outcome = timeout(T, target.ask(Failing(1)).timeout(Duration::from_secs(30)))
            .await
            .expect("the ask ended before the test's bound");
        assert!(
            matches!(outcome, Err(AskError::TargetTerminated { .. })),
            "{target}: {outcome:?}"
        );
    }
    nodes.terminate().await;
}

/// What the watcher of the S50 test below is told.
#[message(remote = "s50.tracked.v1")]
#[derive(Debug)]
pub enum Tracked {
    /// Watch this device with `watch_with(.., Tracked::Gone)`.
    Watch(ActorRef<Burst>),
    /// Wait in the handler until the gate opens.
    Hold,
    Reading(u64),
    Gone,
}

/// Told to a device: send this many readings to the watcher, then stop.
#[message(remote = "s50.burst.v1")]
pub struct Burst(pub u64);

// S50 + S40: `watch_with` across a link: the watcher on A is held while the device on
// B sends it 1,000 readings and stops; once free, it handles all 1,000, then the
// message `watch_with` asked for (one link keeps its order, and the message waits
// behind what is queued; `Terminated`, a signal, would overtake them).
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn s50_s40_watch_with_across_a_link_comes_after_what_the_device_sent() {
    let nodes = pair();
    let gate = outside::Gate::new();
    let (log_tx, mut log) = mpsc::unbounded_channel::<String>();
    let held = gate.clone();
    let watcher = nodes
        .a
        .spawn(
            Behaviors::receive(move |ctx: &mut ActorContext<Tracked>, tracked: Tracked| {
                let said = match tracked {
                    Tracked::Watch(device) => {
                        ctx.watch_with(&device, Tracked::Gone);
                        "watching".to_string()
                    }
                    Tracked::Hold => {
                        let _ = log_tx.send("held".to_string());
                        held.pass();
                        return;
                    }
                    Tracked::Reading(n) => n.to_string(),
                    Tracked::Gone => "gone".to_string(),
                };
                let _ = log_tx.send(said);
            }),
            "watcher",
        )
        .unwrap();
    let watcher_from_b = nodes
        .b
        .resolve::<Tracked>(&uri(&nodes.a, "/user/watcher"))
        .unwrap();
    let device = nodes
        .b
        .spawn(
            Behaviors::receive_message(move |Burst(n): Burst| {
                for i in 0..n {
                    watcher_from_b.tell(Tracked::Reading(i));
                }
                Behaviors::stopped()
            }),
            "device",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&nodes.b);
    probe.watch(&device);
    let device_from_a = nodes
        .a
        .resolve::<Burst>(&uri(&nodes.b, "/user/device"))
        .unwrap();
    watcher.tell(Tracked::Watch(device_from_a.clone()));
    assert_eq!(next(&mut log).await, "watching");
    watcher.tell(Tracked::Hold);
    assert_eq!(next(&mut log).await, "held");
    device_from_a.tell(Burst(1_000));
    probe.expect_terminated(&device, T).await;
    gate.open();
    let mut expected: Vec<String> = (0..1_000).map(|n| n.to_string()).collect();
    expected.push("gone".to_string());
    let mut got = Vec::new();
    for _ in 0..expected.len() {
        got.push(next(&mut log).await);
    }
    assert_eq!(got, expected);
    nodes.terminate().await;
}
