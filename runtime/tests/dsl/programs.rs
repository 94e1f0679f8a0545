//! Small programs in the macro DSL, held to what the README, `docs/`, the macros' and
//! the public items' doc comments, DESIGN.md ("What the compiler must refuse") and
//! docs/semantics.md say. Each module is one small but realistic program that
//! combines DSL features (`#[message]` with `reply` and
//! `remote`, `#[actor]` with helpers, `Ctx`, `async` and `Result` handlers, `ReplyThen`,
//! `#[signal]`, state machines with `#[state]`, stashing, `#[otherwise]`, hooks,
//! adapters, timers, setup with children, `#[remote_behavior]`, `#[tapio::test]`), and
//! its test asserts what the docs promise (named after the promise when there is one).
//!
//! Every wait is bounded (`tokio::time::timeout` or a probe's bound); timers run on
//! tokio's paused clock.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_where;
use std::time::Duration;

use tapio::prelude::*;
use tapio::{DeadLetter, DeadLetterReason};

const T: Duration = Duration::from_secs(5);

/// A bank account: requests answered with `Result<u64, BankError>`, a deposit told,
/// an error that is an answer (not a failure), and the typed helpers.
mod bank {
    use tapio::prelude::*;

    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    pub enum BankError {
        #[error("insufficient funds: {available} available, {requested} requested")]
        Insufficient { available: u64, requested: u64 },
        #[error("account frozen")]
        Frozen,
    }

    #[message]
    pub struct Deposit {
        pub amount: u64,
    }

    #[message(reply = Result<u64, BankError>)]
    pub struct Withdraw {
        pub amount: u64,
    }

    #[message(reply = u64)]
    pub struct Balance;

    #[message]
    pub struct Freeze;

    #[derive(Clone, Default)]
    pub struct Account {
        pub balance: u64,
        pub frozen: bool,
    }

    #[actor(helpers)]
    impl Account {
        fn deposit(&mut self, Deposit { amount }: Deposit) {
            self.balance += amount;
        }

        fn withdraw(&mut self, Withdraw { amount }: Withdraw) -> Result<u64, BankError> {
            if self.frozen {
                return Err(BankError::Frozen);
            }
            if amount > self.balance {
                return Err(BankError::Insufficient {
                    available: self.balance,
                    requested: amount,
                });
            }
            self.balance -= amount;
            Ok(self.balance)
        }

        fn balance(&mut self, _: Balance) -> u64 {
            self.balance
        }

        fn freeze(&mut self, _: Freeze) {
            self.frozen = true;
        }
    }
}

/// S21: a request answered with `Result<T, E>`: the `Err` is the answer, not a failure,
/// and the actor runs on; the helpers ask and tell the same messages.
#[tokio::test]
async fn s21_request_answered_with_a_result_error_is_an_answer_not_a_failure() {
    use bank::*;
    let system = ActorSystem::new("bank").unwrap();
    let account = system.spawn(Account::default(), "account").unwrap();
    account.tell(Deposit { amount: 100 });
    assert_eq!(
        account
            .ask(Withdraw { amount: 30 })
            .timeout(T)
            .await
            .unwrap(),
        Ok(70)
    );
    assert_eq!(
        account
            .ask(Withdraw { amount: 500 })
            .timeout(T)
            .await
            .unwrap(),
        Err(BankError::Insufficient {
            available: 70,
            requested: 500
        })
    );
    // Still alive, state intact, through the helpers.
    account.deposit(5);
    assert_eq!(account.balance().timeout(T).await.unwrap(), 75);
    account.freeze();
    assert_eq!(
        account.withdraw(1).timeout(T).await.unwrap(),
        Err(BankError::Frozen)
    );
    system.terminate().await;
}

/// A ledger whose handlers fail: `?` on mixed error types into a `BoxError`, a
/// supervision clause that matches the error inside the box by its own type, and a
/// request handler whose `Err` fails the actor and sends no answer.
mod ledger {
    use std::num::ParseIntError;

    use tapio::BoxError;
    use tapio::prelude::*;

    #[message]
    pub struct Import {
        pub line: String,
    }

    #[message(reply = Vec<u64>)]
    pub struct Entries;

    #[message(reply = u64)]
    pub struct Strict {
        pub line: String,
    }

    #[derive(Clone, Default)]
    pub struct Ledger {
        pub entries: Vec<u64>,
    }

    fn check_io(line: &str) -> Result<(), std::io::Error> {
        if line == "io" {
            return Err(std::io::Error::other("disk on fire"));
        }
        Ok(())
    }

    #[actor]
    impl Ledger {
        fn import(&mut self, Import { line }: Import) -> Result<(), BoxError> {
            check_io(&line)?; // an io::Error
            let n: u64 = line.trim().parse()?; // a ParseIntError
            self.entries.push(n);
            Ok(())
        }

        fn entries(&mut self, _: Entries) -> Vec<u64> {
            self.entries.clone()
        }

        fn strict(&mut self, Strict { line }: Strict) -> Result<u64, ParseIntError> {
            line.parse()
        }
    }
}

/// README ("Supervision"): a handler returning `Result<_, BoxError>` can use `?` on
/// several error types, and a clause still matches the error inside the box by its own
/// type: a `ParseIntError` is resumed (state kept), an `io::Error` falls through to the
/// default, stop (S10, S11).
#[tokio::test]
async fn s10_boxed_errors_matched_by_their_own_type() {
    use ledger::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("ledger").unwrap();
    let ledger = system
        .spawn(
            Behaviors::supervise(Ledger::default())
                .on_failure::<std::num::ParseIntError>(SupervisorStrategy::resume()),
            "ledger",
        )
        .unwrap();
    ledger.tell(Import { line: "4".into() });
    ledger.tell(Import {
        line: "four".into(),
    }); // resumed
    ledger.tell(Import { line: " 5 ".into() });
    assert_eq!(ledger.ask(Entries).timeout(T).await.unwrap(), vec![4, 5]);
    let probe = TestProbe::<u64>::new(&system);
    probe.watch(&ledger);
    ledger.tell(Import { line: "io".into() }); // no clause: stop
    let mut probe = probe;
    probe.expect_terminated(&ledger, T).await;
    system.terminate().await;
}

/// S9, S23: a request handler's `Err` fails the actor (default: stop) and sends no
/// answer; the asker is not raised into, its ask fails at once with
/// `TargetTerminated`, not at its deadline.
#[tokio::test(start_paused = true)]
async fn s23_request_handler_error_stops_the_actor_and_the_ask_fails_fast() {
    use ledger::*;
    let system = ActorSystem::new("strict").unwrap();
    let ledger = system.spawn(Ledger::default(), "ledger").unwrap();
    assert_eq!(
        ledger
            .ask(Strict { line: "12".into() })
            .timeout(T)
            .await
            .unwrap(),
        12
    );
    let started = tokio::time::Instant::now();
    let asked = ledger
        .ask(Strict { line: "x".into() })
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(asked, Err(tapio::AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    system.terminate().await;
}

/// A safe-deposit box: `ReplyThen::stop` answers and then stops; `ReplyThen::new`
/// answers and then switches to `Behaviors::empty()`.
mod vault {
    use tapio::ReplyThen;
    use tapio::prelude::*;

    #[message]
    pub struct Store(pub String);

    #[message(reply = Vec<String>)]
    pub struct CloseAccount;

    #[message(reply = usize)]
    pub struct Seal;

    #[message(reply = usize)]
    pub struct Count;

    #[derive(Clone, Default)]
    pub struct Vault {
        items: Vec<String>,
    }

    #[actor]
    impl Vault {
        fn store(&mut self, Store(item): Store) {
            self.items.push(item);
        }

        fn close_account(&mut self, _: CloseAccount) -> ReplyThen<Vec<String>, VaultMsg> {
            ReplyThen::stop(std::mem::take(&mut self.items))
        }

        fn seal(&mut self, _: Seal) -> ReplyThen<usize, VaultMsg> {
            ReplyThen::new(self.items.len(), Behaviors::empty())
        }

        fn count(&mut self, _: Count) -> usize {
            self.items.len()
        }
    }
}

/// `ReplyThen::stop`: the ask resolves with the answer, then watchers see the actor
/// terminated, and a later tell is a dead letter.
#[tokio::test]
async fn s21_reply_then_stop_answers_first_then_stops() {
    use tapio::testkit::TestProbe;
    use vault::*;
    let system = ActorSystem::new("vault").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let vault = system.spawn(Vault::default(), "vault").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&vault);
    vault.tell(Store("gold".into()));
    vault.tell(Store("deeds".into()));
    let items = vault.ask(CloseAccount).timeout(T).await.unwrap();
    assert_eq!(items, ["gold", "deeds"]);
    probe.expect_terminated(&vault, T).await;
    vault.tell(Store("late".into()));
    let letter = letter_where(&mut letters, T, |l| l.is::<Store>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(
        letter.take_message::<Store>().map(|s| s.0),
        Some("late".to_string())
    );
    system.terminate().await;
}

/// `ReplyThen::new(answer, Behaviors::empty())`: the answer comes, then every message
/// is an unhandled dead letter (S6) and an ask of the switched actor gets no answer.
#[tokio::test(start_paused = true)]
async fn s6_reply_then_new_switches_after_answering() {
    use vault::*;
    let system = ActorSystem::new("sealed").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let vault = system.spawn(Vault::default(), "vault").unwrap();
    vault.tell(Store("a".into()));
    assert_eq!(vault.ask(Seal).timeout(T).await.unwrap(), 1);
    vault.tell(Store("b".into()));
    let letter = letter_where(&mut letters, T, |l| l.short_message_type() == "Store").await;
    assert_eq!(letter.reason(), &DeadLetterReason::Unhandled);
    let asked = vault.ask(Count).timeout(Duration::from_secs(1)).await;
    assert!(asked.is_err(), "{asked:?}");
    system.terminate().await;
}

/// Async handlers that await asks to other actors: a quote service asks a price list
/// and a tax office, both `#[actor]`s, and answers the sum; `?` on an `AskError`.
mod quotes {
    use std::collections::HashMap;

    use tapio::prelude::*;
    use tapio::{AskError, ReplyThen};

    #[message(reply = Option<u64>)]
    pub struct PriceOf {
        pub sku: String,
    }

    #[message(reply = u64)]
    pub struct TaxOn(pub u64);

    #[message(reply = Result<u64, QuoteError>)]
    pub struct Quote {
        pub skus: Vec<String>,
    }

    #[message(reply = Vec<String>)]
    pub struct History;

    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    pub enum QuoteError {
        #[error("unknown sku {0}")]
        UnknownSku(String),
    }

    #[derive(Clone)]
    pub struct PriceList {
        pub prices: HashMap<String, u64>,
    }

    #[actor]
    impl PriceList {
        fn price_of(&mut self, PriceOf { sku }: PriceOf) -> Option<u64> {
            self.prices.get(&sku).copied()
        }
    }

    #[derive(Clone)]
    pub struct TaxOffice {
        pub percent: u64,
    }

    #[actor]
    impl TaxOffice {
        async fn tax_on(&mut self, TaxOn(net): TaxOn) -> u64 {
            tokio::task::yield_now().await;
            net * self.percent / 100
        }
    }

    #[derive(Clone)]
    pub struct QuoteService {
        pub prices: ActorRef<PriceListMsg>,
        pub tax: ActorRef<TaxOfficeMsg>,
        pub history: Vec<String>,
    }

    #[actor]
    impl QuoteService {
        async fn quote(
            &mut self,
            ctx: &mut Ctx<Self>,
            Quote { skus }: Quote,
        ) -> Result<Result<u64, QuoteError>, AskError> {
            let mut net = 0;
            for sku in skus {
                self.history.push(format!("{}: {sku}", ctx.path().name()));
                match self.prices.ask(PriceOf { sku: sku.clone() }).await? {
                    Some(price) => net += price,
                    None => return Ok(Err(QuoteError::UnknownSku(sku))),
                }
            }
            let tax = self.tax.ask(TaxOn(net)).await?;
            Ok(Ok(net + tax))
        }

        fn history(&mut self, _: History) -> ReplyThen<Vec<String>, QuoteServiceMsg> {
            ReplyThen::new(self.history.clone(), Behaviors::same())
        }
    }
}

/// S4: an `async` handler that awaits two asks answers with their sum, and while it
/// awaits the actor takes no other message: the history read after two quotes holds
/// both, in order.
#[tokio::test]
async fn s4_async_handler_awaits_asks_to_other_actors() {
    use quotes::*;
    let system = ActorSystem::new("quotes").unwrap();
    let prices = system
        .spawn(
            PriceList {
                prices: [("apple".to_string(), 100), ("pear".to_string(), 50)].into(),
            },
            "prices",
        )
        .unwrap();
    let tax = system.spawn(TaxOffice { percent: 20 }, "tax").unwrap();
    let service = system
        .spawn(
            QuoteService {
                prices,
                tax,
                history: Vec::new(),
            },
            "quotes",
        )
        .unwrap();
    let first = service.ask(Quote {
        skus: vec!["apple".into(), "pear".into()],
    });
    let second = service.ask(Quote {
        skus: vec!["kiwi".into()],
    });
    let history = service.ask(History);
    let (first, second, history) =
        tokio::time::timeout(T, async { tokio::join!(first, second, history) })
            .await
            .unwrap();
    assert_eq!(first.unwrap(), Ok(180));
    assert_eq!(second.unwrap(), Err(QuoteError::UnknownSku("kiwi".into())));
    assert_eq!(
        history.unwrap(),
        ["quotes: apple", "quotes: pear", "quotes: kiwi"]
    );
    system.terminate().await;
}

/// S9, S23: `?` on a failed ask inside an async request handler fails the asking actor;
/// its own asker learns at once that it stopped.
#[tokio::test]
async fn s23_async_handler_question_mark_on_a_failed_ask() {
    use quotes::*;
    let system = ActorSystem::new("quotes-down").unwrap();
    let prices = system
        .spawn(
            PriceList {
                prices: [("apple".to_string(), 1)].into(),
            },
            "prices",
        )
        .unwrap();
    let tax = system.spawn(TaxOffice { percent: 0 }, "tax").unwrap();
    system.stop(&tax).unwrap();
    let service = system
        .spawn(
            QuoteService {
                prices,
                tax,
                history: Vec::new(),
            },
            "quotes",
        )
        .unwrap();
    let asked = service
        .ask(Quote {
            skus: vec!["apple".into()],
        })
        .timeout(T)
        .await;
    assert!(
        matches!(asked, Err(tapio::AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    system.terminate().await;
}

/// A connection as a state machine: a dial timer started on entry, a state that stashes
/// what it cannot handle yet (with a small `stash_capacity`), a switching request,
/// entry and exit hooks, and a status request every state answers.
mod connection {
    use std::time::Duration;

    use tapio::prelude::*;

    #[message]
    pub struct Dial {
        pub host: String,
    }

    #[message]
    pub struct Established {
        pub session: u64,
    }

    #[message]
    #[derive(Clone)]
    pub struct DialTimeout;

    #[message]
    pub struct Send(pub String);

    #[message(reply = Vec<String>)]
    pub struct Hangup;

    #[message(reply = &'static str)]
    pub struct Status;

    #[message(reply = Vec<String>)]
    pub struct Journal;

    #[derive(Clone, Default)]
    pub struct Conn {
        pub journal: Vec<String>,
        pub dial_timeout: Option<Duration>,
    }

    #[actor(
        messages(Dial, Established, DialTimeout, Send, Hangup, Status, Journal),
        states(
            Disconnected => Connecting,
            Connecting => Connected | Disconnected,
            Connected => Disconnected,
        ),
        stash_capacity = 2
    )]
    impl Conn {}

    #[derive(Clone)]
    pub struct Disconnected;

    #[state(Conn)]
    impl Disconnected {
        fn dial(self, conn: &mut Conn, Dial { host }: Dial) -> Next<Self> {
            conn.journal.push(format!("dial {host}"));
            Next::to(Connecting { host })
        }

        fn status(&mut self, _: Status) -> &'static str {
            "disconnected"
        }

        fn journal(&mut self, conn: &mut Conn, _: Journal) -> Vec<String> {
            conn.journal.clone()
        }
    }

    #[derive(Clone)]
    pub struct Connecting {
        pub host: String,
    }

    #[state(Conn, unhandled = stash)]
    impl Connecting {
        #[on_entry]
        fn arm(&mut self, conn: &mut Conn, ctx: &mut Ctx<Conn>) {
            if let Some(after) = conn.dial_timeout {
                ctx.timers().start_single_timer("dial", DialTimeout, after);
            }
        }

        #[on_exit]
        fn disarm(conn: &mut Conn, ctx: &mut Ctx<Conn>) {
            ctx.timers().cancel("dial");
            conn.journal.push("left connecting".into());
        }

        fn established(self, conn: &mut Conn, Established { session }: Established) -> Next<Self> {
            conn.journal
                .push(format!("session {session} with {}", self.host));
            Next::to(Connected {
                session,
                sent: Vec::new(),
            })
        }

        fn dial_timeout(self, conn: &mut Conn, _: DialTimeout) -> Next<Self> {
            conn.journal.push(format!("timeout dialing {}", self.host));
            Next::to(Disconnected)
        }

        fn status(&mut self, _: Status) -> &'static str {
            "connecting"
        }
    }

    #[derive(Clone)]
    pub struct Connected {
        pub session: u64,
        pub sent: Vec<String>,
    }

    #[state(Conn)]
    impl Connected {
        fn send(&mut self, Send(line): Send) {
            self.sent.push(format!("{}:{line}", self.session));
        }

        fn hangup(self, conn: &mut Conn, _: Hangup) -> (Vec<String>, Next<Self>) {
            conn.journal.push("hangup".into());
            (self.sent, Next::to(Disconnected))
        }

        fn status(&mut self, _: Status) -> &'static str {
            "connected"
        }

        fn journal(&mut self, conn: &mut Conn, _: Journal) -> Vec<String> {
            conn.journal.clone()
        }
    }
}

/// S34: a message the current state has no handler for is refused by that state: a
/// dead letter naming it, and an ask of a request it does not handle fails at once
/// with `NotHandled`, naming the state.
#[tokio::test(start_paused = true)]
async fn s34_refused_by_the_state_that_does_not_handle_it() {
    use connection::*;
    let system = ActorSystem::new("conn-refuse").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let conn = system
        .spawn(Machine::new(Conn::default(), Disconnected), "conn")
        .unwrap();
    conn.tell(Send("too early".into()));
    let letter = letter_where(&mut letters, T, |l| l.is::<Send>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::NotHandledInState("Disconnected")
    );
    let started = tokio::time::Instant::now();
    let asked = conn.ask(Hangup).timeout(Duration::from_secs(30)).await;
    match asked {
        Err(tapio::AskError::NotHandled { state, .. }) => assert_eq!(state, "Disconnected"),
        other => panic!("expected NotHandled, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "disconnected");
    system.terminate().await;
}

/// S27, S34: what `Connecting` cannot handle is stashed (`unhandled = stash`) and
/// replayed, in arrival order, on the switch to `Connected`, ahead of what arrived
/// after; a switching request answers `(reply, Next)`; hooks run on the switches.
#[tokio::test(start_paused = true)]
async fn s27_stashing_state_replays_in_order_on_the_switch() {
    use connection::*;
    let system = ActorSystem::new("conn-stash").unwrap();
    let conn = system
        .spawn(Machine::new(Conn::default(), Disconnected), "conn")
        .unwrap();
    conn.tell(Dial { host: "db".into() });
    conn.tell(Send("a".into()));
    conn.tell(Send("b".into()));
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "connecting");
    conn.tell(Established { session: 7 });
    conn.tell(Send("c".into()));
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "connected");
    let sent = conn.ask(Hangup).timeout(T).await.unwrap();
    assert_eq!(sent, ["7:a", "7:b", "7:c"]);
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "disconnected");
    assert_eq!(
        conn.ask(Journal).timeout(T).await.unwrap(),
        ["dial db", "session 7 with db", "left connecting", "hangup"]
    );
    system.terminate().await;
}

/// S26: `stash_capacity = 2`: the third message a stashing state holds overflows, and
/// the actor fails with `StashOverflow` (stopped, by default); what it held is dead.
#[tokio::test(start_paused = true)]
async fn s26_stash_capacity_from_the_actor_attribute_overflows() {
    use connection::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("conn-overflow").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let conn = system
        .spawn(Machine::new(Conn::default(), Disconnected), "conn")
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&conn);
    conn.tell(Dial { host: "db".into() });
    conn.tell(Send("1".into()));
    conn.tell(Send("2".into()));
    conn.tell(Send("3".into()));
    let letter = letter_where(&mut letters, T, |l| l.is::<Send>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::StashFull);
    probe.expect_terminated(&conn, T).await;
    system.terminate().await;
}

/// S24, S25: a timer started in a state's entry hook delivers an ordinary message that
/// switches the machine back; a timer cancelled in the exit hook never fires.
#[tokio::test(start_paused = true)]
async fn s25_timer_from_an_entry_hook_and_cancelled_on_exit() {
    use connection::*;
    let system = ActorSystem::new("conn-timer").unwrap();
    let conn = system
        .spawn(
            Machine::new(
                Conn {
                    journal: Vec::new(),
                    dial_timeout: Some(Duration::from_secs(3)),
                },
                Disconnected,
            ),
            "conn",
        )
        .unwrap();
    conn.tell(Dial {
        host: "slow".into(),
    });
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "connecting");
    tokio::time::advance(Duration::from_secs(4)).await;
    tokio::time::timeout(T, async {
        while conn.ask(Status).timeout(T).await.unwrap() != "disconnected" {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    conn.tell(Dial {
        host: "fast".into(),
    });
    conn.tell(Established { session: 1 });
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(conn.ask(Status).timeout(T).await.unwrap(), "connected");
    assert_eq!(
        conn.ask(Journal).timeout(T).await.unwrap(),
        [
            "dial slow",
            "timeout dialing slow",
            "left connecting",
            "dial fast",
            "session 1 with fast",
            "left connecting"
        ]
    );
    system.terminate().await;
}

/// A door with an `#[otherwise]` handler in one state: a locked door counts the knocks
/// (whatever it has no handler for) instead of refusing them.
mod door {
    use tapio::prelude::*;

    #[message]
    pub struct Unlock {
        pub code: u32,
    }

    #[message]
    pub struct Knock;

    #[message]
    pub enum Visitor {
        Postman,
        Neighbour(String),
    }

    #[message(reply = (u32, Vec<String>))]
    pub struct Report;

    #[derive(Clone, Default)]
    pub struct Door {
        pub knocks: u32,
        pub seen: Vec<String>,
    }

    #[actor(messages(Unlock, Knock, Visitor, Report), states(Locked => Open, Open))]
    impl Door {}

    #[derive(Clone)]
    pub struct Locked {
        pub code: u32,
    }

    #[state(Door)]
    impl Locked {
        fn unlock(self, Unlock { code }: Unlock) -> Next<Self> {
            if code == self.code {
                Next::to(Open)
            } else {
                Next::stay(self)
            }
        }

        fn report(&mut self, door: &mut Door, _: Report) -> (u32, Vec<String>) {
            (door.knocks, door.seen.clone())
        }

        #[otherwise]
        fn rest(&mut self, door: &mut Door, message: DoorMsg) {
            door.knocks += 1;
            door.seen.push(format!("{message:?}"));
        }
    }

    #[derive(Clone)]
    pub struct Open;

    #[state(Door)]
    impl Open {
        fn visitor(&mut self, door: &mut Door, visitor: Visitor) {
            door.seen.push(match visitor {
                Visitor::Postman => "letters".to_string(),
                Visitor::Neighbour(name) => format!("tea with {name}"),
            });
        }

        fn report(&mut self, door: &mut Door, _: Report) -> (u32, Vec<String>) {
            (door.knocks, door.seen.clone())
        }
    }
}

/// `#[otherwise]` takes whole what the state has no handler for, and nothing is
/// refused; the state with no `#[otherwise]` still refuses (`Knock` in `Open`).
#[tokio::test]
async fn s34_otherwise_takes_what_the_state_has_no_handler_for() {
    use door::*;
    let system = ActorSystem::new("door").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let door = system
        .spawn(Machine::new(Door::default(), Locked { code: 42 }), "door")
        .unwrap();
    door.tell(Knock);
    door.tell(Visitor::Neighbour("ada".into()));
    door.tell(Unlock { code: 1 });
    let (knocks, seen) = door.ask(Report).timeout(T).await.unwrap();
    assert_eq!(knocks, 2);
    assert_eq!(seen.len(), 2);
    door.tell(Unlock { code: 42 });
    door.tell(Visitor::Postman);
    door.tell(Knock);
    let letter = letter_where(&mut letters, T, |l| l.is::<Knock>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::NotHandledInState("Open")
    );
    let (knocks, seen) = door.ask(Report).timeout(T).await.unwrap();
    assert_eq!(knocks, 2);
    assert_eq!(seen.last().map(String::as_str), Some("letters"));
    system.terminate().await;
}

/// Typed helpers over every shape of message: a unit struct, a tuple struct, named
/// fields with `Option`, `Vec`, `Box` and `ActorRef`, an enum (taken whole), a runtime
/// type (taken whole), a renamed helper and one left out.
mod shapes {
    use tapio::prelude::*;

    #[message]
    pub struct Reset;

    #[message]
    pub struct Move(pub i32, pub i32);

    #[message]
    pub struct Paint {
        pub colour: Option<String>,
        pub layers: Vec<u8>,
        pub note: Box<str>,
        pub done: ActorRef<String>,
    }

    #[message]
    pub enum Turn {
        Left,
        Right,
        By { degrees: u16 },
    }

    #[message(reply = (i32, i32, u16, usize))]
    pub struct Where;

    #[message]
    pub struct Secret(pub u64);

    #[derive(Clone, Default)]
    pub struct Turtle {
        x: i32,
        y: i32,
        heading: u16,
        painted: usize,
        secret: u64,
    }

    #[actor(helpers = TurtleOps)]
    impl Turtle {
        fn reset(&mut self, _: Reset) {
            *self = Turtle {
                secret: self.secret,
                ..Turtle::default()
            };
        }

        #[handler(helper = step)]
        fn go(&mut self, Move(dx, dy): Move) {
            self.x += dx;
            self.y += dy;
        }

        fn paint(&mut self, paint: Paint) {
            self.painted += paint.layers.len();
            paint.done.tell(format!(
                "{} x{} ({})",
                paint.colour.as_deref().unwrap_or("clear"),
                paint.layers.len(),
                paint.note
            ));
        }

        fn turn(&mut self, turn: Turn) {
            self.heading = match turn {
                Turn::Left => (self.heading + 270) % 360,
                Turn::Right => (self.heading + 90) % 360,
                Turn::By { degrees } => (self.heading + degrees) % 360,
            };
        }

        fn label(&mut self, label: String) {
            self.painted += label.len();
        }

        fn where_(&mut self, _: Where) -> (i32, i32, u16, usize) {
            (self.x, self.y, self.heading, self.painted)
        }

        #[handler(no_helper)]
        fn secret(&mut self, Secret(n): Secret) {
            self.secret = n;
        }
    }
}

/// README ("Typed helpers"): one method per handler, parameters the message's fields in
/// order (none for a unit struct), an enum or runtime type taken whole, renamed and
/// left-out helpers; the helpers and `tell` reach the same handlers, in order (S5).
#[tokio::test]
async fn s5_typed_helpers_for_every_message_shape() {
    use shapes::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("turtle").unwrap();
    let mut done = TestProbe::<String>::new(&system);
    let turtle = system.spawn(Turtle::default(), "turtle").unwrap();
    turtle.step(3, 4);
    turtle.turn(Turn::By { degrees: 45 });
    turtle.turn(Turn::Left);
    turtle.turn(Turn::Right);
    turtle.turn(Turn::Left);
    turtle.paint(
        Some("red".into()),
        vec![1, 2, 3],
        "wall".into(),
        done.actor_ref().clone(),
    );
    turtle.paint(None, vec![], Box::from("floor"), done.actor_ref().clone());
    turtle.label("hi".to_string());
    turtle.tell(Secret(9));
    assert_eq!(done.expect_message(T).await, "red x3 (wall)");
    assert_eq!(done.expect_message(T).await, "clear x0 (floor)");
    assert_eq!(turtle.where_().timeout(T).await.unwrap(), (3, 4, 315, 5));
    turtle.reset();
    assert_eq!(turtle.ask(Where).timeout(T).await.unwrap(), (0, 0, 0, 0));
    system.terminate().await;
}

/// A checkout that speaks to a payment gateway in the gateway's own protocol, through
/// a message adapter made in setup; a translation that can fail fails its owner.
mod checkout {
    use tapio::prelude::*;

    /// The gateway's protocol: it answers on a `ActorRef<PaymentResult>`.
    #[message]
    pub struct Charge {
        pub cents: u64,
        pub reply_to: ActorRef<PaymentResult>,
    }

    #[message]
    #[derive(Debug, Clone, PartialEq)]
    pub enum PaymentResult {
        Approved { id: u64 },
        Declined(String),
    }

    pub fn gateway() -> Behavior<Charge> {
        Behaviors::receive_message(|Charge { cents, reply_to }: Charge| {
            if cents > 1000 {
                reply_to.tell(PaymentResult::Declined("limit".into()));
            } else {
                reply_to.tell(PaymentResult::Approved { id: cents * 10 });
            }
        })
        .into()
    }

    /// The checkout's own protocol.
    #[message]
    pub struct Pay(pub u64);

    #[message]
    pub struct Paid(pub Result<u64, String>);

    #[message(reply = Vec<Result<u64, String>>)]
    pub struct Receipts;

    pub struct Checkout {
        pub gateway: ActorRef<Charge>,
        pub results: ActorRef<PaymentResult>,
        pub receipts: Vec<Result<u64, String>>,
    }

    #[actor]
    impl Checkout {
        fn pay(&mut self, Pay(cents): Pay) {
            self.gateway.tell(Charge {
                cents,
                reply_to: self.results.clone(),
            });
        }

        fn paid(&mut self, Paid(result): Paid) {
            self.receipts.push(result);
        }

        fn receipts(&mut self, _: Receipts) -> Vec<Result<u64, String>> {
            self.receipts.clone()
        }
    }

    pub fn checkout(gateway: ActorRef<Charge>) -> Behavior<CheckoutMsg> {
        Behaviors::setup(move |ctx| {
            let results = ctx.message_adapter(|result: PaymentResult| match result {
                PaymentResult::Approved { id } => Paid(Ok(id)),
                PaymentResult::Declined(why) => Paid(Err(why)),
            });
            Checkout {
                gateway: gateway.clone(),
                results,
                receipts: Vec::new(),
            }
        })
    }

    #[derive(Debug, thiserror::Error)]
    #[error("refund {0} is not a payment")]
    pub struct NotAPayment(pub u64);

    #[message]
    pub struct Refund(pub u64);

    /// A checkout whose adapter refuses a refund of zero: its error fails the owner.
    pub fn strict_checkout(
        gateway: ActorRef<Charge>,
        report: ActorRef<ActorRef<Refund>>,
    ) -> Behavior<CheckoutMsg> {
        Behaviors::setup(move |ctx| {
            let refunds = ctx.try_message_adapter(|Refund(cents): Refund| {
                if cents == 0 {
                    Err(NotAPayment(cents))
                } else {
                    Ok(Paid(Ok(cents)))
                }
            });
            report.tell(refunds);
            let results = ctx.message_adapter(|_: PaymentResult| Paid(Err("n/a".into())));
            Checkout {
                gateway: gateway.clone(),
                results,
                receipts: Vec::new(),
            }
        })
    }
}

/// S28: the adapter's translation runs inside the owner, in order with its other
/// messages: two payments and their answers come back as the checkout's own `Paid`.
#[tokio::test]
async fn s28_adapter_made_in_setup_translates_a_foreign_reply() {
    use checkout::*;
    let system = ActorSystem::new("checkout").unwrap();
    let gateway = system.spawn(gateway(), "gateway").unwrap();
    let shop = system.spawn(checkout(gateway), "checkout").unwrap();
    shop.tell(Pay(250));
    shop.tell(Pay(5000));
    let receipts = tokio::time::timeout(T, async {
        loop {
            let receipts = shop.ask(Receipts).timeout(T).await.unwrap();
            if receipts.len() == 2 {
                return receipts;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    assert_eq!(receipts, [Ok(2500), Err("limit".to_string())]);
    system.terminate().await;
}

/// S28: a translation that fails (`try_message_adapter`) is its owner's failure, under
/// its supervision (default: stop); a good one is delivered like any message.
#[tokio::test]
async fn s28_failing_translation_fails_the_owner() {
    use checkout::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("strict-checkout").unwrap();
    let gateway = system.spawn(gateway(), "gateway").unwrap();
    let mut adapters = TestProbe::<ActorRef<Refund>>::new(&system);
    let shop = system
        .spawn(
            strict_checkout(gateway, adapters.actor_ref().clone()),
            "checkout",
        )
        .unwrap();
    let refunds = adapters.expect_message(T).await;
    refunds.tell(Refund(30));
    assert_eq!(shop.ask(Receipts).timeout(T).await.unwrap(), [Ok(30)]);
    adapters.watch(&shop);
    refunds.tell(Refund(0));
    adapters.expect_terminated(&shop, T).await;
    system.terminate().await;
}

/// A supervisor that spawns its workers in setup and forwards jobs to them; it fails on
/// a poisoned job and is restarted, and the workers spawned in setup come back (S14).
/// A `#[signal]` handler sees `PreRestart` and reports it.
mod crew {
    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Square(pub u64);

    #[derive(Clone)]
    pub struct Worker;

    #[actor]
    impl Worker {
        fn square(&mut self, Square(n): Square) -> u64 {
            n * n
        }
    }

    #[message]
    pub struct Job {
        pub n: u64,
        pub reply_to: ActorRef<u64>,
    }

    #[message]
    pub struct Poison;

    #[message(reply = Vec<String>)]
    pub struct Children;

    #[derive(Debug, thiserror::Error)]
    #[error("poisoned")]
    pub struct Poisoned;

    pub struct Foreman {
        pub workers: Vec<ActorRef<WorkerMsg>>,
        pub next: usize,
        pub events: ActorRef<String>,
    }

    #[actor]
    impl Foreman {
        async fn job(&mut self, Job { n, reply_to }: Job) -> Result<(), tapio::AskError> {
            let worker = self.workers[self.next % self.workers.len()].clone();
            self.next += 1;
            reply_to.tell(worker.ask(Square(n)).await?);
            Ok(())
        }

        fn poison(&mut self, _: Poison) -> Result<(), Poisoned> {
            Err(Poisoned)
        }

        fn children(&mut self, ctx: &mut Ctx<Self>, _: Children) -> Vec<String> {
            let mut names: Vec<String> = ctx
                .children()
                .iter()
                .map(|c| c.path().name().to_string())
                .collect();
            names.sort();
            names
        }

        #[signal]
        fn on_signal(&mut self, signal: &Signal) {
            if let Signal::PreRestart = signal {
                self.events.tell("pre-restart".to_string());
            }
        }
    }

    pub fn foreman(events: ActorRef<String>) -> Behavior<ForemanMsg> {
        Behaviors::supervise(Behaviors::setup(move |ctx| {
            let workers = vec![ctx.spawn(Worker, "w1")?, ctx.spawn(Worker, "w2")?];
            events.tell("setup".to_string());
            Ok::<_, tapio::SpawnError>(Foreman {
                workers,
                next: 0,
                events: events.clone(),
            })
        }))
        .on_failure::<Poisoned>(SupervisorStrategy::restart())
        .into()
    }
}

/// S7, S14, S15: setup runs again on restart, the children it spawned come back, the
/// restarted actor forwards to them again; `PreRestart` reaches the `#[signal]` handler.
#[tokio::test]
async fn s14_children_spawned_in_setup_come_back_after_a_restart() {
    use crew::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("crew").unwrap();
    let mut events = TestProbe::<String>::new(&system);
    let mut answers = TestProbe::<u64>::new(&system);
    let foreman = system
        .spawn(foreman(events.actor_ref().clone()), "foreman")
        .unwrap();
    assert_eq!(events.expect_message(T).await, "setup");
    foreman.tell(Job {
        n: 3,
        reply_to: answers.actor_ref().clone(),
    });
    assert_eq!(answers.expect_message(T).await, 9);
    foreman.tell(Poison);
    assert_eq!(events.expect_message(T).await, "pre-restart");
    assert_eq!(events.expect_message(T).await, "setup");
    assert_eq!(
        foreman.ask(Children).timeout(T).await.unwrap(),
        ["w1", "w2"]
    );
    foreman.tell(Job {
        n: 4,
        reply_to: answers.actor_ref().clone(),
    });
    assert_eq!(answers.expect_message(T).await, 16);
    system.terminate().await;
}

/// A watcher in the DSL: it spawns a child in a handler, watches it, and its `#[signal]`
/// handler hears `Terminated` exactly once, after the child answered its last request
/// with `ReplyThen::stop`.
mod watcher {
    use tapio::ReplyThen;
    use tapio::prelude::*;

    #[message(reply = String)]
    pub struct Finish;

    #[derive(Clone)]
    pub struct Task {
        pub name: String,
    }

    #[actor]
    impl Task {
        fn finish(&mut self, _: Finish) -> ReplyThen<String, TaskMsg> {
            ReplyThen::stop(format!("{} done", self.name))
        }
    }

    #[message(reply = ActorRef<TaskMsg>)]
    pub struct Start(pub String);

    #[derive(Clone)]
    pub struct Boss {
        pub log: ActorRef<String>,
    }

    #[actor]
    impl Boss {
        fn start(
            &mut self,
            ctx: &mut Ctx<Self>,
            Start(name): Start,
        ) -> Result<ActorRef<TaskMsg>, tapio::SpawnError> {
            let task = ctx.spawn(Task { name: name.clone() }, &name)?;
            ctx.watch(&task);
            Ok(task)
        }

        #[signal]
        fn on_signal(&mut self, signal: &Signal) -> Behavior<BossMsg> {
            match signal {
                Signal::Terminated(t) => {
                    self.log.tell(format!("ended {}", t.actor().path().name()));
                    Behaviors::same()
                }
                _ => Behaviors::unhandled(),
            }
        }
    }
}

/// S18: `Terminated` comes once per watch, to the `#[signal]` handler, after the
/// child's last answer; a handler that spawns answers the child's typed ref.
#[tokio::test]
async fn s18_signal_handler_hears_terminated_of_a_watched_child() {
    use tapio::testkit::TestProbe;
    use watcher::*;
    let system = ActorSystem::new("boss").unwrap();
    let mut log = TestProbe::<String>::new(&system);
    let boss = system
        .spawn(
            Boss {
                log: log.actor_ref().clone(),
            },
            "boss",
        )
        .unwrap();
    let task = boss.ask(Start("report".into())).timeout(T).await.unwrap();
    assert_eq!(task.path().name(), "report");
    assert_eq!(task.ask(Finish).timeout(T).await.unwrap(), "report done");
    assert_eq!(log.expect_message(T).await, "ended report");
    log.expect_no_message(Duration::from_millis(50)).await;
    // The name is free again once the child has stopped (S2).
    let again = boss.ask(Start("report".into())).timeout(T).await.unwrap();
    assert_ne!(again, task);
    system.terminate().await;
}

/// An inventory whose whole protocol is registered for the wire, used locally: structs
/// with `Vec`/`Option` fields and a serde attribute, an enum with tuple, struct and
/// unit variants, a request answered with a registered type, and an `ActorRef` field.
mod inventory {
    use std::collections::BTreeMap;

    use tapio::prelude::*;

    #[message(remote = "dsl2.inventory.add.v1")]
    pub struct AddStock {
        pub sku: String,
        pub qty: u32,
        #[serde(default)]
        pub tags: Vec<String>,
        pub note: Option<String>,
    }

    #[message(remote = "dsl2.inventory.adjust.v1")]
    #[serde(rename_all = "snake_case")]
    pub enum Adjust {
        Shrink(String, u32),
        Recount { sku: String, qty: u32 },
        ClearAll,
    }

    #[message(remote = "dsl2.inventory.level.v1")]
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Level {
        pub sku: String,
        pub qty: u32,
        pub tags: Vec<String>,
    }

    #[message(remote = "dsl2.inventory.query.v1", reply = Level)]
    pub struct Query {
        pub sku: String,
    }

    #[message(remote = "dsl2.inventory.subscribe.v1")]
    pub struct Subscribe {
        pub to: ActorRef<Level>,
    }

    #[derive(Clone, Default)]
    pub struct Inventory {
        stock: BTreeMap<String, (u32, Vec<String>)>,
        subscribers: Vec<ActorRef<Level>>,
    }

    impl Inventory {
        fn level(&self, sku: &str) -> Level {
            let (qty, tags) = self.stock.get(sku).cloned().unwrap_or_default();
            Level {
                sku: sku.to_string(),
                qty,
                tags,
            }
        }

        fn publish(&self, sku: &str) {
            for s in &self.subscribers {
                s.tell(self.level(sku));
            }
        }
    }

    #[actor(helpers)]
    impl Inventory {
        fn add_stock(&mut self, add: AddStock) {
            let entry = self.stock.entry(add.sku.clone()).or_default();
            entry.0 += add.qty;
            entry.1.extend(add.tags);
            if let Some(note) = add.note {
                entry.1.push(note);
            }
            self.publish(&add.sku);
        }

        fn adjust(&mut self, adjust: Adjust) {
            match adjust {
                Adjust::Shrink(sku, by) => {
                    let entry = self.stock.entry(sku.clone()).or_default();
                    entry.0 = entry.0.saturating_sub(by);
                    self.publish(&sku);
                }
                Adjust::Recount { sku, qty } => {
                    self.stock.entry(sku.clone()).or_default().0 = qty;
                    self.publish(&sku);
                }
                Adjust::ClearAll => self.stock.clear(),
            }
        }

        fn query(&mut self, Query { sku }: Query) -> Level {
            self.level(&sku)
        }

        fn subscribe(&mut self, Subscribe { to }: Subscribe) {
            self.subscribers.push(to);
        }
    }
}

/// S35, S36: a protocol registered for the wire works locally as any other (tell, ask,
/// helpers, a ref inside a message), and `resolve` of this system's own URI gives the
/// live local actor.
#[tokio::test]
async fn s35_wire_registered_protocol_used_locally_and_resolved_locally() {
    use inventory::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("inventory").unwrap();
    let inventory = system.spawn(Inventory::default(), "inventory").unwrap();
    let mut levels = TestProbe::<Level>::new(&system);
    inventory.subscribe(levels.actor_ref().clone());
    inventory.add_stock("bolt".into(), 10, vec!["m4".into()], Some("bin 3".into()));
    let level = levels.expect_message(T).await;
    assert_eq!(
        level,
        Level {
            sku: "bolt".into(),
            qty: 10,
            tags: vec!["m4".into(), "bin 3".into()]
        }
    );
    inventory.adjust(Adjust::Shrink("bolt".into(), 3));
    assert_eq!(levels.expect_message(T).await.qty, 7);
    let resolved = system
        .resolve::<InventoryMsg>(&inventory.to_string())
        .unwrap();
    assert_eq!(resolved, inventory);
    resolved.tell(Adjust::Recount {
        sku: "bolt".into(),
        qty: 2,
    });
    assert_eq!(levels.expect_message(T).await.qty, 2);
    let level = resolved
        .ask(Query { sku: "bolt".into() })
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(level.qty, 2);
    resolved.tell(Adjust::ClearAll);
    assert_eq!(
        inventory.query("bolt".into()).timeout(T).await.unwrap().qty,
        0
    );
    system.terminate().await;
}

/// S35, S40, S44: the same protocol across a real link: a second system resolves the
/// inventory by URI, tells and asks it, and a ref it sends inside a message comes back
/// live, so the inventory's notifications reach the second system's probe.
#[tokio::test]
async fn s40_wire_registered_protocol_across_two_nodes() {
    use inventory::*;
    use tapio::remote::RemoteSettings;
    use tapio::testkit::{TestProbe, two_nodes};
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let inventory = nodes.a.spawn(Inventory::default(), "inventory").unwrap();
    let remote = nodes
        .b
        .resolve::<InventoryMsg>(&inventory.to_string())
        .unwrap();
    let mut levels = TestProbe::<Level>::new(&nodes.b);
    remote.tell(Subscribe {
        to: levels.actor_ref().clone(),
    });
    remote.tell(AddStock {
        sku: "nut".into(),
        qty: 5,
        tags: vec![],
        note: None,
    });
    assert_eq!(
        levels.expect_message(T).await,
        Level {
            sku: "nut".into(),
            qty: 5,
            tags: vec![]
        }
    );
    let level = remote
        .ask(Query { sku: "nut".into() })
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(level.qty, 5);
    remote.adjust(Adjust::Recount {
        sku: "nut".into(),
        qty: 1,
    });
    assert_eq!(levels.expect_message(T).await.qty, 1);
    nodes.terminate().await;
}

/// A factory for remote spawn, offered by a spawner and asked for from this system:
/// its arguments declared with `#[message(remote = ..)]`, which derives their serde.
mod doubling {
    use tapio::prelude::*;
    use tapio::remote_behavior;

    #[message(remote = "dsl2.doubler.args.v1")]
    pub struct DoublerArgs {
        pub factor: u64,
    }

    #[message(remote = "dsl2.doubler.doubled.v1")]
    #[derive(Debug, PartialEq, Eq)]
    pub struct Doubled(pub u64);

    #[message(remote = "dsl2.doubler.double.v1", reply = Doubled)]
    pub struct Double(pub u64);

    #[derive(Clone)]
    pub struct Doubler {
        pub factor: u64,
    }

    #[actor]
    impl Doubler {
        fn double(&mut self, Double(n): Double) -> Doubled {
            Doubled(n * self.factor)
        }
    }

    #[remote_behavior("dsl2.doubler.v1")]
    pub fn doubler(args: DoublerArgs) -> Behavior<DoublerMsg> {
        let factor = args.factor;
        Behaviors::setup(move |_ctx| Doubler { factor })
    }

    #[remote_behavior("dsl2.tripler.v1")]
    pub fn tripler(_args: DoublerArgs) -> Behavior<DoublerMsg> {
        Behaviors::setup(|_ctx| Doubler { factor: 3 })
    }
}

/// S46: a spawner offers an allowlist; `spawn_remote` answers a typed ref of the
/// factory's protocol, the new actor is the spawner's child, and a factory not
/// offered is refused, saying so.
#[tokio::test]
async fn s46_remote_behavior_through_a_spawner() {
    use doubling::*;
    use tapio::remote::RemoteSettings;
    use tapio::remote::spawn::{RemoteSpawnError, SpawnFailure, Spawner};
    use tapio::testkit::two_nodes;
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let spawner = nodes
        .a
        .spawn(Spawner::offering::<doubler>().build().unwrap(), "spawner")
        .unwrap();
    let remote_spawner = nodes.b.resolve(&spawner.to_string()).unwrap();
    let spawned = tokio::time::timeout(
        T,
        tapio::ActorRef::spawn_remote::<doubler>(&remote_spawner, DoublerArgs { factor: 2 }, "d1"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(spawned.name, "d1");
    assert_eq!(
        spawned.actor.ask(Double(21)).timeout(T).await.unwrap(),
        Doubled(42)
    );
    assert_eq!(
        spawned.actor.path().parent().map(|p| p.name().to_string()),
        Some("spawner".into())
    );
    let refused = tokio::time::timeout(
        T,
        remote_spawner.spawn_remote::<tripler>(DoublerArgs { factor: 0 }, "t1"),
    )
    .await
    .unwrap();
    assert!(
        matches!(
            refused,
            Err(RemoteSpawnError::Refused(SpawnFailure::NotOffered { .. }))
        ),
        "{refused:?}"
    );
    nodes.terminate().await;
}

/// A heartbeat monitor: a fixed-rate timer started from a handler, ticks counted, the
/// timer cancelled from another handler after a request; a `Box<dyn FnOnce>` message
/// runs a closure on the actor's state.
mod heartbeat {
    use std::time::Duration;

    use tapio::prelude::*;

    #[message]
    #[derive(Clone)]
    pub struct Beat;

    #[message]
    pub struct Start {
        pub every: Duration,
    }

    #[message(reply = u32)]
    pub struct StopBeating;

    #[message(reply = u32)]
    pub struct Beats;

    #[message]
    pub struct Inspect(pub Box<dyn FnOnce(u32) + Send>);

    #[derive(Clone)]
    pub struct Monitor {
        pub beats: u32,
        pub report: ActorRef<u32>,
    }

    #[actor]
    impl Monitor {
        fn start(
            &mut self,
            ctx: &mut Ctx<Self>,
            Start { every }: Start,
        ) -> Result<(), tapio::ZeroInterval> {
            ctx.timers().start_fixed_rate("beat", Beat, every)
        }

        fn beat(&mut self, _: Beat) {
            self.beats += 1;
            self.report.tell(self.beats);
        }

        fn stop_beating(&mut self, ctx: &mut Ctx<Self>, _: StopBeating) -> u32 {
            ctx.timers().cancel("beat");
            self.beats
        }

        fn beats(&mut self, _: Beats) -> u32 {
            self.beats
        }

        fn inspect(&mut self, Inspect(look): Inspect) {
            look(self.beats);
        }
    }
}

/// S24, S25: a fixed-rate timer started from a handler delivers ticks on the actor's
/// own mailbox; cancelled by key, it sends no more. A zero interval is the handler's
/// failure (`ZeroInterval`), here under the default supervision: stop.
#[tokio::test(start_paused = true)]
async fn s25_fixed_rate_timer_from_a_handler_cancelled_by_key() {
    use heartbeat::*;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("heartbeat").unwrap();
    let mut beats = TestProbe::<u32>::new(&system);
    let monitor = system
        .spawn(
            Monitor {
                beats: 0,
                report: beats.actor_ref().clone(),
            },
            "monitor",
        )
        .unwrap();
    let started = tokio::time::Instant::now();
    monitor.tell(Start {
        every: Duration::from_secs(1),
    });
    assert_eq!(monitor.ask(Beats).timeout(T).await.unwrap(), 0);
    assert_eq!(beats.receive_messages(3, T).await, [1, 2, 3]);
    assert!(started.elapsed() >= Duration::from_secs(3));
    let at_stop = monitor.ask(StopBeating).timeout(T).await.unwrap();
    assert_eq!(at_stop, 3);
    beats.expect_no_message(Duration::from_secs(10)).await;
    let (tx, rx) = tokio::sync::oneshot::channel();
    monitor.tell(Inspect(Box::new(move |beats| {
        let _ = tx.send(beats);
    })));
    assert_eq!(tokio::time::timeout(T, rx).await.unwrap().unwrap(), 3);
    beats.watch(&monitor);
    monitor.tell(Start {
        every: Duration::ZERO,
    });
    beats.expect_terminated(&monitor, T).await;
    system.terminate().await;
}

/// A log writer whose async handler hands a blocking call to the blocking pool, and a
/// drop guard that shows where a stop cuts an awaiting handler.
mod writer {
    use tapio::BoxError;
    use tapio::prelude::*;

    #[message(reply = usize)]
    pub struct Write(pub Vec<String>);

    #[message]
    pub struct Hang {
        pub dropped: tokio::sync::oneshot::Sender<&'static str>,
    }

    #[derive(Clone, Default)]
    pub struct Writer {
        pub written: usize,
    }

    struct Guard(Option<tokio::sync::oneshot::Sender<&'static str>>);

    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send("dropped at its await");
            }
        }
    }

    #[actor]
    impl Writer {
        async fn write(
            &mut self,
            ctx: &mut Ctx<Self>,
            Write(lines): Write,
        ) -> Result<usize, BoxError> {
            let bytes = ctx
                .run_blocking(move || lines.iter().map(|l| l.len() + 1).sum::<usize>())
                .await?;
            self.written += bytes;
            Ok(self.written)
        }

        async fn hang(&mut self, Hang { dropped }: Hang) {
            let _guard = Guard(Some(dropped));
            std::future::pending::<()>().await;
        }
    }
}

/// S33 and "Cancel safety of handlers": `run_blocking` in an async handler answers
/// through `?`; a stop drops an awaiting handler's future where it awaits (its drop
/// guard runs) and the actor stops.
#[tokio::test]
async fn s33_run_blocking_in_an_async_handler_and_a_stop_cuts_an_await() {
    use tapio::testkit::TestProbe;
    use writer::*;
    let system = ActorSystem::new("writer").unwrap();
    let writer = system.spawn(Writer::default(), "writer").unwrap();
    let n = writer
        .ask(Write(vec!["ab".into(), "cde".into()]))
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(n, 7);
    let (tx, rx) = tokio::sync::oneshot::channel();
    writer.tell(Hang { dropped: tx });
    let mut probe = TestProbe::<u8>::new(&system);
    probe.watch(&writer);
    // Let the handler reach its await: an ask queued behind it never gets an answer.
    let behind = writer
        .ask(Write(vec![]))
        .timeout(Duration::from_millis(100))
        .await;
    assert!(
        matches!(behind, Err(tapio::AskError::Timeout { .. })),
        "{behind:?}"
    );
    system.stop(&writer).unwrap();
    assert_eq!(
        tokio::time::timeout(T, rx).await.unwrap().unwrap(),
        "dropped at its await"
    );
    probe.expect_terminated(&writer, T).await;
    system.terminate().await;
}

/// A notifier whose handlers answer `unhandled` for what they will not take, and a
/// request told rather than asked.
mod notifier {
    use tapio::prelude::*;

    #[message]
    pub struct Notify {
        pub channel: Channel,
        pub text: String,
    }

    #[message]
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Channel {
        Email,
        Sms,
        Pager,
    }

    #[message(reply = u32)]
    pub struct Sent;

    #[derive(Clone, Default)]
    pub struct Notifier {
        sent: u32,
    }

    #[actor]
    impl Notifier {
        fn notify(&mut self, n: Notify) -> Behavior<NotifierMsg> {
            if n.channel == Channel::Pager || n.text.is_empty() {
                return Behaviors::unhandled();
            }
            self.sent += 1;
            Behaviors::same()
        }

        fn sent(&mut self, _: Sent) -> u32 {
            self.sent
        }
    }
}

/// S6, S31: a handler that answers `unhandled` makes the message an unhandled dead
/// letter naming the message's own type (not the protocol enum); a request that is told
/// has its answer dead-lettered as `NoReplyExpected`.
#[tokio::test]
async fn s31_unhandled_and_unexpected_answers_are_dead_letters() {
    use notifier::*;
    let system = ActorSystem::new("notifier").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let notifier = system.spawn(Notifier::default(), "notifier").unwrap();
    notifier.tell(Notify {
        channel: Channel::Email,
        text: "hi".into(),
    });
    notifier.tell(Notify {
        channel: Channel::Pager,
        text: "wake up".into(),
    });
    let letter = letter_where(&mut letters, T, |l| {
        l.reason() == &DeadLetterReason::Unhandled
    })
    .await;
    assert_eq!(letter.short_message_type(), "Notify");
    assert_eq!(letter.recipient(), notifier.path());
    notifier.tell(Sent);
    let letter = letter_where(&mut letters, T, |l| {
        l.reason() == &DeadLetterReason::NoReplyExpected
    })
    .await;
    assert_eq!(letter.take_message::<u32>(), Some(1));
    notifier.tell(Notify {
        channel: Channel::Sms,
        text: "ok".into(),
    });
    assert_eq!(notifier.ask(Sent).timeout(T).await.unwrap(), 2);
    system.terminate().await;
}

/// A thermostat under `#[tapio::test]`: a single timer from a handler, a request with
/// `Option` reply, and nothing left behind (no actor, timer or ask leaks).
mod thermostat {
    use std::time::Duration;

    use tapio::prelude::*;

    #[message]
    pub struct SetTarget(pub i16);

    #[message]
    #[derive(Clone)]
    pub struct Settle;

    #[message(reply = Option<i16>)]
    pub struct Reading;

    #[derive(Clone, Default)]
    pub struct Thermostat {
        target: Option<i16>,
        current: Option<i16>,
    }

    #[actor(helpers)]
    impl Thermostat {
        fn set_target(&mut self, ctx: &mut Ctx<Self>, SetTarget(t): SetTarget) {
            self.target = Some(t);
            ctx.timers()
                .start_single_timer("settle", Settle, Duration::from_secs(30));
        }

        // Only the timer sends it, so its helper is never called: that is not a
        // warning (it was "method `settle` is never used", pointing at this handler;
        // this file compiles with warnings denied in CI's clippy).
        fn settle(&mut self, _: Settle) {
            self.current = self.target;
        }

        fn reading(&mut self, _: Reading) -> Option<i16> {
            self.current
        }
    }
}

/// docs/testing.md: `#[tapio::test]` with a paused clock and a `Result` body; a timer
/// set from a handler fires after its delay (S24), and the test leaks nothing.
#[tapio::test(start_paused = true, shutdown_timeout_ms = 500)]
async fn s48_tapio_test_with_a_timer_set_from_a_handler(
    system: ActorSystem,
) -> Result<(), Box<dyn std::error::Error>> {
    use thermostat::*;
    let thermostat = system.spawn(Thermostat::default(), "thermostat")?;
    thermostat.set_target(21);
    assert_eq!(thermostat.reading().timeout(T).await?, None);
    tokio::time::advance(Duration::from_secs(29)).await;
    assert_eq!(thermostat.reading().timeout(T).await?, None);
    tokio::time::advance(Duration::from_secs(2)).await;
    // The tick is on its way: it queues like any message (S24), so poll for it.
    tokio::time::timeout(T, async {
        while thermostat.reading().timeout(T).await != Ok(Some(21)) {
            tokio::task::yield_now().await;
        }
    })
    .await?;
    Ok(())
}

/// A helper's ask carries its deadline: `.timeout(..)` on the helper of a request whose
/// handler awaits something that never comes fails with `Timeout`.
#[tapio::test(start_paused = true)]
async fn s22_helper_ask_times_out(system: ActorSystem) -> Result<(), tapio::SpawnError> {
    use slow::*;
    let slow = system.spawn(Slow, "slow")?;
    let asked = slow.ponder(7).timeout(Duration::from_secs(2)).await;
    assert!(
        matches!(asked, Err(tapio::AskError::Timeout { .. })),
        "{asked:?}"
    );
    system.stop(&slow).unwrap();
    Ok(())
}

mod slow {
    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Ponder {
        pub n: u64,
    }

    #[derive(Clone)]
    pub struct Slow;

    #[actor(helpers)]
    impl Slow {
        async fn ponder(&mut self, Ponder { n }: Ponder) -> u64 {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            n
        }
    }
}

/// A watcher that forgets to handle `Terminated`: a death pact (S18) stops it by
/// default, and `on_failure::<DeathPact>(resume)` keeps it running.
mod pact {
    use tapio::prelude::*;

    #[message]
    pub struct Follow(pub ActorRef<u8>);

    #[message(reply = u32)]
    pub struct Followed;

    #[derive(Clone, Default)]
    pub struct Fan {
        followed: u32,
    }

    #[actor]
    impl Fan {
        fn follow(&mut self, ctx: &mut Ctx<Self>, Follow(star): Follow) {
            ctx.watch(&star);
            self.followed += 1;
        }

        fn followed(&mut self, _: Followed) -> u32 {
            self.followed
        }
    }
}

/// S18: an `#[actor]` with no `#[signal]` handler that watches an actor which stops
/// fails with `DeathPact`: stopped by default, resumed under a clause for it.
#[tokio::test]
async fn s18_death_pact_of_an_actor_without_a_signal_handler() {
    use pact::*;
    use tapio::DeathPact;
    use tapio::testkit::TestProbe;
    let system = ActorSystem::new("pact").unwrap();
    let star = system.spawn(Behaviors::ignore::<u8>(), "star").unwrap();
    let fan = system.spawn(Fan::default(), "fan").unwrap();
    let loyal = system
        .spawn(
            Behaviors::supervise(Fan::default())
                .on_failure::<DeathPact>(SupervisorStrategy::resume()),
            "loyal",
        )
        .unwrap();
    let mut probe = TestProbe::<u8>::new(&system);
    probe.watch(&fan);
    fan.tell(Follow(star.clone()));
    loyal.tell(Follow(star.clone()));
    assert_eq!(fan.ask(Followed).timeout(T).await.unwrap(), 1);
    assert_eq!(loyal.ask(Followed).timeout(T).await.unwrap(), 1);
    system.stop(&star).unwrap();
    probe.expect_terminated(&fan, T).await;
    assert_eq!(loyal.ask(Followed).timeout(T).await.unwrap(), 1);
    system.terminate().await;
}

/// A job queue with a bounded mailbox: an ask to it when full fails at once with
/// `MailboxFull` (README, "Ask"); `offer` waits for room instead (S30).
mod queue {
    use tapio::prelude::*;

    #[message]
    pub struct Block(pub tokio::sync::oneshot::Receiver<()>);

    #[message(reply = u32)]
    pub struct Take(pub u32);

    #[derive(Clone, Default)]
    pub struct Queue;

    #[actor]
    impl Queue {
        async fn block(&mut self, Block(until): Block) {
            let _ = until.await;
        }

        fn take(&mut self, Take(n): Take) -> u32 {
            n
        }
    }
}

/// S29, S30: a full bounded mailbox refuses an ask at once (`MailboxFull`), and an
/// `offer` of the same request waits until the actor makes room.
#[tokio::test]
async fn s30_bounded_mailbox_refuses_an_ask_and_offer_waits() {
    use queue::*;
    use tapio::{MailboxConfig, OverflowStrategy};
    let system = ActorSystem::new("queue").unwrap();
    let queue = system
        .spawn_with(
            Queue,
            "queue",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    let (release, until) = tokio::sync::oneshot::channel();
    queue.tell(Block(until));
    // Room comes when the blocker is taken out to be handled; then the mailbox is full.
    assert!(tokio::time::timeout(T, queue.offer(Take(1))).await.unwrap());
    let asked = queue.ask(Take(2)).timeout(T).await;
    assert!(
        matches!(asked, Err(tapio::AskError::MailboxFull { .. })),
        "{asked:?}"
    );
    let offered = queue.offer(Take(3));
    release.send(()).unwrap();
    assert!(tokio::time::timeout(T, offered).await.unwrap());
    // Take(3) waits in the mailbox until Take(1) is done; then there is room again.
    let last = tokio::time::timeout(T, async {
        loop {
            match queue.ask(Take(4)).timeout(T).await {
                Err(tapio::AskError::MailboxFull { .. }) => tokio::task::yield_now().await,
                other => return other,
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(last.unwrap(), 4);
    system.terminate().await;
}
