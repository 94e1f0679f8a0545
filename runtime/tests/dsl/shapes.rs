//! Shapes of the macro DSL a user would write, each compiled and run: generic actor
//! types written for concrete arguments, actors in other modules and reached by path,
//! messages from elsewhere and re-exported, the replies a request may have, async
//! handlers that ask other actors, handler attributes, names that look like generated
//! ones, state machines split over modules, a remote factory, and a protocol enum
//! driven by a hand-written stub. Each module is one shape and has its own test.
//!
//! Only shapes that compile are here; what the compiler must refuse is checked in
//! `ui-tests`.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

const T: Duration = Duration::from_secs(5);

/// A generic actor type, written for one concrete instantiation (the block itself
/// cannot be generic), with generic messages and a generic reply.
mod generic_actor_concrete_impl {
    use std::collections::HashMap;
    use std::hash::Hash;
    use std::marker::PhantomData;

    use tapio::prelude::*;

    #[message]
    pub struct Put<K, V> {
        pub key: K,
        pub value: V,
    }

    #[message(reply = Option<V>)]
    pub struct Get<K, V> {
        pub key: K,
        pub _value: PhantomData<fn() -> V>,
    }

    impl<K, V> Get<K, V> {
        pub fn new(key: K) -> Self {
            Self {
                key,
                _value: PhantomData,
            }
        }
    }

    #[derive(Clone)]
    pub struct Cache<K, V>
    where
        K: Eq + Hash,
    {
        map: HashMap<K, V>,
    }

    impl<K: Eq + Hash, V> Default for Cache<K, V> {
        fn default() -> Self {
            Self {
                map: HashMap::new(),
            }
        }
    }

    #[actor(helpers)]
    impl Cache<String, u64> {
        fn put(&mut self, Put { key, value }: Put<String, u64>) {
            self.map.insert(key, value);
        }

        fn get(&mut self, Get { key, .. }: Get<String, u64>) -> Option<u64> {
            self.map.get(&key).copied()
        }
    }

    #[tapio::test]
    async fn a_concrete_instantiation_is_an_actor(system: ActorSystem) {
        let cache: ActorRef<CacheMsg> = system
            .spawn(Cache::<String, u64>::default(), "cache")
            .unwrap();
        cache.tell(Put {
            key: "a".to_owned(),
            value: 1_u64,
        });
        cache.put("b".to_owned(), 2);
        assert_eq!(cache.ask(Get::new("a".to_owned())).await.unwrap(), Some(1));
        assert_eq!(
            cache.get("b".to_owned(), PhantomData).await.unwrap(),
            Some(2)
        );
        assert_eq!(cache.ask(Get::new("zz".to_owned())).await.unwrap(), None);
    }
}

/// The same generic type under a type alias: the protocol is named after the alias.
mod generic_actor_through_a_type_alias {
    use std::collections::BTreeMap;

    use tapio::prelude::*;

    #[message]
    pub struct Insert<K, V>(pub K, pub V);

    #[message(reply = Vec<V>)]
    pub struct Values<V>(pub std::marker::PhantomData<V>);

    #[derive(Clone, Default)]
    pub struct Table<K, V> {
        rows: BTreeMap<K, V>,
    }

    pub type Names = Table<u32, String>;

    #[actor(helpers)]
    impl Names {
        fn insert(&mut self, Insert(key, value): Insert<u32, String>) {
            self.rows.insert(key, value);
        }

        fn values(&self, _: Values<String>) -> Vec<String> {
            self.rows.values().cloned().collect()
        }
    }

    #[tapio::test]
    async fn the_alias_names_the_protocol(system: ActorSystem) {
        let names: ActorRef<NamesMsg> = system.spawn(Names::default(), "names").unwrap();
        names.insert(2, "b".to_owned());
        names.tell(Insert(1_u32, "a".to_owned()));
        assert_eq!(
            names.values(Default::default()).await.unwrap(),
            vec!["a".to_owned(), "b".to_owned()]
        );
    }
}

/// An actor type with a lifetime parameter, written for `'static`.
mod actor_with_a_static_lifetime {
    use tapio::prelude::*;

    #[message(reply = usize)]
    pub struct Measure;

    #[derive(Clone)]
    pub struct Named<'a> {
        name: &'a str,
    }

    #[actor]
    impl Named<'static> {
        fn measure(&self, _: Measure) -> usize {
            self.name.len()
        }
    }

    #[tapio::test]
    async fn named_static_is_an_actor(system: ActorSystem) {
        let named = system.spawn(Named { name: "four" }, "named").unwrap();
        assert_eq!(named.ask(Measure).await.unwrap(), 4);
    }
}

/// A const-generic actor type written for one `N`, handling the runtime's container
/// messages (`Vec`, `Option`, `Box`) with helpers that take them whole, and calling
/// one handler from another.
mod const_generic_actor_with_container_messages {
    use tapio::prelude::*;

    #[message(reply = Vec<u64>)]
    pub struct Snapshot;

    #[derive(Clone)]
    pub struct Ring<const N: usize> {
        buf: [u64; N],
        at: usize,
    }

    #[actor(helpers)]
    impl Ring<4> {
        fn push(&mut self, value: u64) {
            self.buf[self.at % 4] = value;
            self.at += 1;
        }

        fn many(&mut self, values: Vec<u64>) {
            for value in values {
                self.push(value);
            }
        }

        fn maybe(&mut self, value: Option<u64>) {
            if let Some(value) = value {
                self.push(value);
            }
        }

        // A `Box<T>` message is taken by value, as every message is.
        #[allow(clippy::boxed_local)]
        fn boxed(&mut self, pair: Box<(u64, u64)>) {
            self.push(pair.0);
            self.push(pair.1);
        }

        fn snapshot(&self, _: Snapshot) -> Vec<u64> {
            self.buf.to_vec()
        }
    }

    #[tapio::test]
    async fn containers_are_handled_and_taken_whole(system: ActorSystem) {
        let ring = system
            .spawn(Ring::<4> { buf: [0; 4], at: 0 }, "ring")
            .unwrap();
        ring.push(1);
        ring.many(vec![2, 3]);
        ring.maybe(None);
        ring.maybe(Some(4));
        ring.boxed(Box::new((5, 6)));
        assert_eq!(ring.snapshot().await.unwrap(), vec![5, 6, 3, 4]);
    }
}

/// An enum as the actor type, replacing itself (`*self = Self::..`) in a handler.
mod enum_actor {
    use tapio::prelude::*;

    #[message]
    pub struct Toggle;

    #[message(reply = &'static str)]
    pub struct Color;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Light {
        Red,
        Green,
    }

    #[actor(helpers)]
    impl Light {
        fn toggle(&mut self, _: Toggle) {
            *self = match self {
                Self::Red => Self::Green,
                Self::Green => Self::Red,
            };
        }

        fn color(&self, _: Color) -> &'static str {
            match self {
                Light::Red => "red",
                Light::Green => "green",
            }
        }
    }

    #[tapio::test]
    async fn an_enum_switches_itself(system: ActorSystem) {
        let light = system.spawn(Light::Red, "light").unwrap();
        assert_eq!(light.color().await.unwrap(), "red");
        light.toggle();
        assert_eq!(light.color().await.unwrap(), "green");
    }
}

/// The block written for a type declared in a nested module (`impl shop::inner::Thing`),
/// with messages reached by full path, through a re-export, and through a renaming
/// re-export; `Self` in bodies, an associated const and a method from another block,
/// and the protocol written as `<Self as Protocol>::Msg` in the context and in a
/// `ReplyThen`.
mod actor_impl_by_path {
    use tapio::prelude::*;
    use tapio::{Protocol, ReplyThen};

    pub mod proto {
        pub mod v1 {
            use tapio::prelude::*;

            #[message]
            pub struct Ping(pub u64);

            #[message(reply = u64)]
            pub struct Read;

            #[message(reply = u64)]
            pub struct Close;
        }

        pub use v1::Ping;
        pub use v1::Read as Fetch;
    }

    pub mod shop {
        pub mod inner {
            #[derive(Clone, Default)]
            pub struct Thing {
                pub(crate) n: u64,
            }

            impl Thing {
                pub const STEP: u64 = 2;

                pub fn step(&self) -> u64 {
                    Self::STEP
                }
            }
        }
    }

    #[actor(helpers)]
    impl shop::inner::Thing {
        fn ping(&mut self, ping: crate::shapes::actor_impl_by_path::proto::Ping) {
            self.n += ping.0 * Self::STEP;
        }

        fn fetch(&self, _: proto::Fetch) -> u64 {
            self.n + self.step() - Self::STEP
        }

        fn close(
            &mut self,
            ctx: &mut ActorContext<<Self as Protocol>::Msg>,
            _: proto::v1::Close,
        ) -> ReplyThen<u64, <Self as Protocol>::Msg> {
            assert_eq!(ctx.path().name(), "thing");
            *self = Self { n: self.n + 1 };
            ReplyThen::stop(self.n)
        }
    }

    #[tapio::test]
    async fn the_protocol_is_generated_where_the_block_is(system: ActorSystem) {
        let thing: ActorRef<ThingMsg> = system
            .spawn(shop::inner::Thing::default(), "thing")
            .unwrap();
        thing.ping(3);
        thing.tell(proto::v1::Ping(1));
        assert_eq!(thing.fetch().await.unwrap(), 8);
        assert_eq!(thing.ask(proto::Fetch).await.unwrap(), 8);
        assert_eq!(thing.close().await.unwrap(), 9);
    }
}

/// Two types with the same last name (`a::Worker`, `b::Worker`) get their blocks in
/// one module, each with its own protocol and helper trait names.
mod same_type_name_in_one_module {
    use tapio::prelude::*;

    pub mod a {
        #[derive(Clone, Default)]
        pub struct Worker {
            pub pings: u64,
        }
    }

    pub mod b {
        #[derive(Clone, Default)]
        pub struct Worker {
            pub pongs: u64,
        }
    }

    #[message(reply = u64)]
    pub struct Ping;

    #[message(reply = u64)]
    pub struct Pong;

    #[actor(protocol = PingWorkerMsg, helpers = PingWorker)]
    impl a::Worker {
        fn ping(&mut self, _: Ping) -> u64 {
            self.pings += 1;
            self.pings
        }
    }

    #[actor(protocol = PongWorkerMsg, helpers = PongWorker)]
    impl b::Worker {
        fn pong(&mut self, _: Pong) -> u64 {
            self.pongs += 10;
            self.pongs
        }
    }

    #[tapio::test]
    async fn each_has_its_own_protocol(system: ActorSystem) {
        let a: ActorRef<PingWorkerMsg> = system.spawn(a::Worker::default(), "a").unwrap();
        let b: ActorRef<PongWorkerMsg> = system.spawn(b::Worker::default(), "b").unwrap();
        assert_eq!(a.ping().await.unwrap(), 1);
        assert_eq!(b.pong().await.unwrap(), 10);
        assert_eq!(b.ask(Pong).await.unwrap(), 20);
    }
}

/// Messages declared after the block that handles them, in the same module and in a
/// module further down, with helpers.
mod messages_declared_after_the_actor {
    use tapio::prelude::*;

    #[derive(Clone, Default)]
    pub struct Early {
        n: u64,
    }

    #[actor(helpers)]
    impl Early {
        fn later(&mut self, message: Later) {
            self.n += message.by;
        }

        fn deep(&mut self, message: after::Deep) {
            self.n += message.0;
        }

        fn total(&self, _: Total) -> u64 {
            self.n
        }
    }

    #[message]
    pub struct Later {
        pub by: u64,
    }

    #[message(reply = u64)]
    pub struct Total;

    pub mod after {
        use tapio::prelude::*;

        #[message]
        pub struct Deep(pub u64);
    }

    #[tapio::test]
    async fn order_of_declaration_does_not_matter(system: ActorSystem) {
        let early = system.spawn(Early::default(), "early").unwrap();
        early.later(1);
        early.deep(10);
        assert_eq!(early.total().await.unwrap(), 11);
    }
}

/// An async handler that asks another actor in a loop and answers with `?` on the
/// `AskError`; a sync handler that spawns a child and answers with its ref.
mod async_handler_asks_another_actor {
    use tapio::AskError;
    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Price(pub &'static str);

    #[message(reply = u64)]
    pub struct Total(pub Vec<&'static str>);

    #[message(reply = ActorRef<u64>)]
    pub struct OpenLedger;

    #[derive(Clone)]
    pub struct Catalog;

    #[actor]
    impl Catalog {
        fn price(&mut self, Price(item): Price) -> u64 {
            item.len() as u64
        }
    }

    #[derive(Clone)]
    pub struct Till {
        catalog: ActorRef<CatalogMsg>,
    }

    #[actor]
    impl Till {
        async fn total(&mut self, Total(items): Total) -> Result<u64, AskError> {
            let mut sum = 0;
            for item in items {
                sum += self.catalog.ask(Price(item)).timeout(super::T).await?;
            }
            Ok(sum)
        }

        fn open_ledger(&mut self, ctx: &mut Ctx<Self>, _: OpenLedger) -> ActorRef<u64> {
            ctx.spawn(Behaviors::ignore::<u64>(), "ledger").unwrap()
        }
    }

    #[tapio::test]
    async fn the_answer_is_built_from_other_answers(system: ActorSystem) {
        let catalog = system.spawn(Catalog, "catalog").unwrap();
        let till = system.spawn(Till { catalog }, "till").unwrap();
        assert_eq!(till.ask(Total(vec!["ab", "cde"])).await.unwrap(), 5);
        assert_eq!(till.ask(Total(Vec::new())).await.unwrap(), 0);
        let ledger = till.ask(OpenLedger).await.unwrap();
        assert_eq!(ledger.path().name(), "ledger");
        ledger.tell(3);
    }
}

/// `?` on several error types in one request handler through `tapio::BoxError`;
/// supervision matches each error inside the box; a failed request is answered
/// `Unanswered` at once.
mod mixed_errors_through_box_error {
    use std::num::{ParseFloatError, ParseIntError};

    use tapio::prelude::*;
    use tapio::{AskError, BoxError};

    #[derive(Debug, thiserror::Error)]
    #[error("negative: {0}")]
    pub struct Negative(pub f64);

    #[message(reply = u64)]
    pub struct Sum(pub String, pub String);

    #[message(reply = u64)]
    pub struct Last;

    #[derive(Clone, Default)]
    pub struct Adder {
        last: u64,
    }

    #[actor]
    impl Adder {
        fn sum(&mut self, Sum(a, b): Sum) -> Result<u64, BoxError> {
            let a: u64 = a.parse()?;
            let b: f64 = b.parse()?;
            if b < 0.0 {
                return Err(Negative(b).into());
            }
            self.last = a + b as u64;
            Ok(self.last)
        }

        fn last(&self, _: Last) -> u64 {
            self.last
        }
    }

    #[tapio::test]
    async fn each_error_is_the_actor_s_failure(system: ActorSystem) {
        let adder = system
            .spawn(
                Adder::default()
                    .supervise()
                    .on_failure::<ParseIntError>(SupervisorStrategy::resume())
                    .on_failure::<ParseFloatError>(SupervisorStrategy::resume())
                    .on_failure::<Negative>(SupervisorStrategy::resume()),
                "adder",
            )
            .unwrap();
        assert_eq!(adder.ask(Sum("1".into(), "2.5".into())).await.unwrap(), 3);
        for (a, b) in [("x", "1"), ("1", "y"), ("1", "-1")] {
            let answer = adder.ask(Sum(a.into(), b.into())).timeout(super::T).await;
            assert!(
                matches!(answer, Err(AskError::Unanswered { .. })),
                "{a} + {b}: {answer:?}"
            );
        }
        // Resumed each time: the state is intact.
        assert_eq!(adder.ask(Last).await.unwrap(), 3);
    }
}

/// A `Result` as the reply type: a handler returning exactly the reply answers with
/// the `Err` too; wrapped in another `Result`, the outer error fails the actor.
mod result_as_the_reply {
    use tapio::AskError;
    use tapio::prelude::*;

    #[derive(Debug, PartialEq, Eq, thiserror::Error)]
    #[error("not a number: {0}")]
    pub struct NotANumber(pub String);

    #[message(reply = Result<u64, NotANumber>)]
    pub struct Parse(pub String);

    #[message(reply = Result<u64, String>)]
    pub struct ParseText(pub String);

    #[message(reply = Result<u64, NotANumber>)]
    pub struct ParseFile(pub String);

    #[derive(Clone)]
    pub struct Parser;

    #[actor]
    impl Parser {
        fn parse(&mut self, Parse(text): Parse) -> Result<u64, NotANumber> {
            text.parse().map_err(|_| NotANumber(text))
        }

        fn parse_text(&mut self, ParseText(text): ParseText) -> Result<u64, String> {
            text.parse().map_err(|_| text)
        }

        fn parse_file(
            &mut self,
            ParseFile(text): ParseFile,
        ) -> Result<Result<u64, NotANumber>, std::io::Error> {
            if text.is_empty() {
                return Err(std::io::Error::other("empty file"));
            }
            Ok(text.parse().map_err(|_| NotANumber(text)))
        }
    }

    #[tapio::test]
    async fn the_error_is_an_answer(system: ActorSystem) {
        let parser = system
            .spawn(
                Parser
                    .supervise()
                    .on_failure::<std::io::Error>(SupervisorStrategy::resume()),
                "parser",
            )
            .unwrap();
        assert_eq!(parser.ask(Parse("7".into())).await.unwrap(), Ok(7));
        assert_eq!(
            parser.ask(Parse("x".into())).await.unwrap(),
            Err(NotANumber("x".into()))
        );
        assert_eq!(
            parser.ask(ParseText("y".into())).await.unwrap(),
            Err("y".to_owned())
        );
        assert_eq!(parser.ask(ParseFile("8".into())).await.unwrap(), Ok(8));
        assert_eq!(
            parser.ask(ParseFile("z".into())).await.unwrap(),
            Err(NotANumber("z".into()))
        );
        let failed = parser.ask(ParseFile(String::new())).timeout(super::T).await;
        assert!(
            matches!(failed, Err(AskError::Unanswered { .. })),
            "{failed:?}"
        );
    }
}

/// Reply types: `()`, a tuple, `Vec`, `Option`, `&'static str`, and `Self` (a request
/// answered with its own type); a context the handler does not use, as `_`.
mod reply_shapes {
    use tapio::prelude::*;

    #[message(reply = ())]
    pub struct Flush;

    #[message(reply = (u32, String))]
    pub struct Pair;

    #[message(reply = Vec<u32>)]
    pub struct All;

    #[message(reply = Option<String>)]
    pub struct Maybe(pub bool);

    #[message(reply = &'static str)]
    pub struct Name;

    #[message(reply = Self)]
    #[derive(Debug, PartialEq, Eq)]
    pub struct Echo(pub String);

    #[derive(Clone, Default)]
    pub struct Replies {
        flushed: u32,
    }

    #[actor(helpers)]
    impl Replies {
        fn flush(&mut self, _: &mut Ctx<Self>, _: Flush) {
            self.flushed += 1;
        }

        fn pair(&self, _: Pair) -> (u32, String) {
            (self.flushed, "flushed".to_owned())
        }

        fn all(&self, _: All) -> Vec<u32> {
            (0..self.flushed).collect()
        }

        fn maybe(&self, Maybe(yes): Maybe) -> Option<String> {
            yes.then(|| "yes".to_owned())
        }

        fn name(&self, _: Name) -> &'static str {
            "replies"
        }

        fn echo(&self, echo: Echo) -> Echo {
            echo
        }
    }

    #[tapio::test]
    async fn each_reply_type_comes_back(system: ActorSystem) {
        let replies = system.spawn(Replies::default(), "replies").unwrap();
        let () = replies.ask(Flush).await.unwrap();
        replies.flush().await.unwrap();
        assert_eq!(replies.pair().await.unwrap(), (2, "flushed".to_owned()));
        assert_eq!(replies.all().await.unwrap(), vec![0, 1]);
        assert_eq!(replies.maybe(true).await.unwrap(), Some("yes".to_owned()));
        assert_eq!(replies.ask(Maybe(false)).await.unwrap(), None);
        assert_eq!(replies.name().await.unwrap(), "replies");
        assert_eq!(
            replies.echo("hi".to_owned()).await.unwrap(),
            Echo("hi".to_owned())
        );
    }
}

/// A generic request whose reply depends on its parameter; a generic enum message with
/// a struct variant that carries its reply ref, asked with `ask_with`; an async `&self`
/// handler; a `mut` message binding; `run_blocking` with `?`; an async handler
/// answering `Result<ReplyThen<..>, BoxError>`.
mod generic_requests_and_enums {
    use std::marker::PhantomData;

    use tapio::prelude::*;
    use tapio::{BoxError, ReplyThen};

    #[message(reply = Vec<T>)]
    pub struct Take<T: Clone + Send + 'static> {
        pub n: usize,
        pub _item: PhantomData<T>,
    }

    #[message]
    pub enum Cmd<T: Send + 'static> {
        Push(T),
        Get {
            index: usize,
            reply_to: ActorRef<Option<T>>,
        },
    }

    #[message(reply = u64)]
    pub struct Checksum(pub String);

    #[message(reply = u64)]
    pub struct LastChecksum;

    #[message]
    pub struct Batch(pub Vec<String>);

    #[message(reply = usize)]
    pub struct Finish;

    #[derive(Clone, Default)]
    pub struct Store {
        items: Vec<String>,
        last: u64,
    }

    #[actor]
    impl Store {
        fn cmd(&mut self, cmd: Cmd<String>) {
            match cmd {
                Cmd::Push(item) => self.items.push(item),
                Cmd::Get { index, reply_to } => reply_to.tell(self.items.get(index).cloned()),
            }
        }

        fn take(&self, Take { n, .. }: Take<String>) -> Vec<String> {
            self.items.iter().take(n).cloned().collect()
        }

        async fn checksum(
            &mut self,
            ctx: &mut Ctx<Self>,
            Checksum(text): Checksum,
        ) -> Result<u64, BoxError> {
            let sum = ctx
                .run_blocking(move || text.bytes().map(u64::from).sum::<u64>())
                .await?;
            self.last = sum;
            Ok(sum)
        }

        async fn last_checksum(&self, _: LastChecksum) -> u64 {
            self.last
        }

        fn batch(&mut self, mut batch: Batch) {
            batch.0.sort();
            self.items.append(&mut batch.0);
        }

        async fn finish(&mut self, _: Finish) -> Result<ReplyThen<usize, StoreMsg>, BoxError> {
            tokio::task::yield_now().await;
            Ok(ReplyThen::stop(self.items.len()))
        }
    }

    #[tapio::test]
    async fn generic_messages_are_handled_for_one_argument(system: ActorSystem) {
        let store = system.spawn(Store::default(), "store").unwrap();
        store.tell(Cmd::Push("b".to_owned()));
        store.tell(Batch(vec!["z".into(), "a".into()]));
        let got: Option<String> = store
            .ask_with(|reply_to| Cmd::Get { index: 1, reply_to })
            .await
            .unwrap();
        assert_eq!(got.as_deref(), Some("a"));
        let first_two = store
            .ask(Take::<String> {
                n: 2,
                _item: PhantomData,
            })
            .await
            .unwrap();
        assert_eq!(first_two, vec!["b".to_owned(), "a".to_owned()]);
        assert_eq!(store.ask(Checksum("ab".into())).await.unwrap(), 97 + 98);
        assert_eq!(store.ask(LastChecksum).await.unwrap(), 195);
        assert_eq!(store.ask(Finish).await.unwrap(), 3);
    }
}

/// Fields a message may own: a boxed closure, a boxed `FnOnce`, a shared trait object,
/// a large array and a `&'static str`; a generic enum with a struct variant; all
/// through typed helpers.
mod trait_objects_and_large_fields {
    use std::sync::Arc;

    use tapio::prelude::*;

    pub trait Scorer: Send + Sync {
        fn score(&self, x: u64) -> u64;
    }

    pub struct Doubler;

    impl Scorer for Doubler {
        fn score(&self, x: u64) -> u64 {
            x * 2
        }
    }

    type Step = Box<dyn Fn(u64) -> u64 + Send>;

    #[message]
    pub struct Apply {
        pub step: Step,
        pub label: &'static str,
    }

    #[message]
    pub struct UseScorer(pub Arc<dyn Scorer>);

    #[message]
    pub struct Block {
        pub bytes: [u8; 8192],
    }

    #[message]
    pub struct Once(pub Box<dyn FnOnce() -> u64 + Send>);

    #[message]
    pub enum Cmd<T> {
        Set { value: T },
        Add(T),
        Reset,
    }

    #[message(reply = (u64, Vec<&'static str>))]
    pub struct Value;

    #[derive(Clone, Default)]
    pub struct Calc {
        value: u64,
        labels: Vec<&'static str>,
    }

    #[actor(helpers)]
    impl Calc {
        fn apply(&mut self, Apply { step, label }: Apply) {
            self.value = step(self.value);
            self.labels.push(label);
        }

        fn use_scorer(&mut self, UseScorer(scorer): UseScorer) {
            self.value = scorer.score(self.value);
        }

        fn block(&mut self, block: Block) {
            self.value += block.bytes.iter().map(|&b| u64::from(b)).sum::<u64>();
        }

        fn once(&mut self, Once(call): Once) {
            self.value += call();
        }

        fn cmd(&mut self, cmd: Cmd<u64>) {
            match cmd {
                Cmd::Set { value } => self.value = value,
                Cmd::Add(n) => self.value += n,
                Cmd::Reset => self.value = 0,
            }
        }

        fn value(&self, _: Value) -> (u64, Vec<&'static str>) {
            (self.value, self.labels.clone())
        }
    }

    #[tapio::test]
    async fn owned_fields_of_every_kind_travel(system: ActorSystem) {
        let calc = system.spawn(Calc::default(), "calc").unwrap();
        calc.cmd(Cmd::Set { value: 3 });
        calc.apply(Box::new(|x| x + 1), "inc");
        calc.use_scorer(Arc::new(Doubler));
        assert_eq!(calc.value().await.unwrap(), (8, vec!["inc"]));
        calc.block([1; 8192]);
        let moved = String::from("ab");
        calc.once(Box::new(move || moved.len() as u64));
        assert_eq!(calc.value().await.unwrap().0, 8 + 8192 + 2);
        calc.tell(Cmd::<u64>::Reset);
        calc.tell(Cmd::Add(5_u64));
        assert_eq!(calc.value().await.unwrap().0, 5);
    }
}

/// A `Default` actor with a hand-written `Clone`, `Drop`, `Display` and a trait of the
/// user's whose method has a handler's name; restarted from its template; a request
/// answered with `ReplyThen::new` that switches to a functional behavior.
mod traits_beside_the_actor {
    use std::fmt;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tapio::prelude::*;
    use tapio::{AskError, ReplyThen};

    #[message]
    pub struct Crash;

    #[message(reply = u64)]
    pub struct Count;

    #[message]
    pub struct Bump;

    #[message(reply = String)]
    pub struct Describe;

    #[message(reply = u64)]
    pub struct Retire;

    #[derive(Debug, thiserror::Error)]
    #[error("crashed")]
    pub struct Crashed;

    #[derive(Default)]
    pub struct Tracker {
        n: u64,
        drops: Arc<AtomicUsize>,
    }

    impl Clone for Tracker {
        fn clone(&self) -> Self {
            Self {
                n: self.n,
                drops: Arc::clone(&self.drops),
            }
        }
    }

    impl Drop for Tracker {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl fmt::Display for Tracker {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "tracker at {}", self.n)
        }
    }

    pub trait Bumpable {
        fn bump(&mut self);
    }

    impl Bumpable for Tracker {
        fn bump(&mut self) {
            self.n += 100;
        }
    }

    #[actor(helpers)]
    impl Tracker {
        fn crash(&mut self, _: Crash) -> Result<(), Crashed> {
            Err(Crashed)
        }

        fn count(&self, _: Count) -> u64 {
            self.n
        }

        fn bump(&mut self, _: Bump) {
            self.n += 1;
        }

        fn describe(&self, _: Describe) -> String {
            self.to_string()
        }

        async fn retire(&mut self, _: Retire) -> ReplyThen<u64, TrackerMsg> {
            tokio::task::yield_now().await;
            Bumpable::bump(self);
            ReplyThen::new(self.n, Behaviors::receive_message(|_: TrackerMsg| {}))
        }
    }

    #[tokio::test]
    async fn a_restart_starts_again_from_the_template() {
        let system = ActorSystem::new("traits").unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let template = Tracker {
            n: 5,
            drops: Arc::clone(&drops),
        };
        let tracker = system
            .spawn(
                template
                    .supervise()
                    .on_failure::<Crashed>(SupervisorStrategy::restart()),
                "tracker",
            )
            .unwrap();
        tracker.bump();
        assert_eq!(tracker.count().await.unwrap(), 6);
        tracker.crash();
        assert_eq!(tracker.count().await.unwrap(), 5);
        assert_eq!(tracker.describe().await.unwrap(), "tracker at 5");
        assert_eq!(tracker.retire().await.unwrap(), 105);
        // Switched to a behavior that answers nothing.
        let after = tracker.count().timeout(super::T).await;
        assert!(
            matches!(after, Err(AskError::Unanswered { .. })),
            "{after:?}"
        );
        system.terminate().await;
        // Both incarnations were dropped.
        assert!(drops.load(Ordering::SeqCst) >= 2);
    }
}

/// An actor that is `Clone` but not `Sync` (a `Cell` inside) cannot be spawned by
/// value; built in `Behaviors::setup` it runs.
mod not_sync_actor_built_in_setup {
    use std::cell::Cell;

    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Hit;

    #[derive(Clone, Default)]
    pub struct Hits {
        hits: Cell<u64>,
    }

    #[actor]
    impl Hits {
        fn hit(&self, _: Hit) -> u64 {
            self.hits.set(self.hits.get() + 1);
            self.hits.get()
        }
    }

    #[tapio::test]
    async fn setup_builds_it(system: ActorSystem) {
        let hits = system
            .spawn(Behaviors::setup(|_| Hits::default()), "hits")
            .unwrap();
        assert_eq!(hits.ask(Hit).await.unwrap(), 1);
        assert_eq!(hits.ask(Hit).await.unwrap(), 2);
    }
}

/// Attributes on handlers: doc comments, `#[inline]`, `#[allow]`, `#[must_use]`,
/// `#[tracing::instrument]` on an async handler taking the context, `pub` and
/// `pub(crate)` methods, a handler under `cfg(test)`; the protocol `pub(crate)`.
mod attributes_on_handlers {
    use tapio::prelude::*;

    #[message]
    pub struct Ping(pub u64);

    #[message(reply = u64)]
    pub struct Get;

    #[message]
    pub struct Traced(pub String);

    #[message(reply = &'static str)]
    pub struct Build;

    #[derive(Clone, Default)]
    pub(crate) struct Internal {
        n: u64,
    }

    #[actor(vis = pub(crate), helpers)]
    impl Internal {
        /// Adds.
        #[inline]
        #[allow(clippy::needless_pass_by_value)]
        pub fn ping(&mut self, Ping(n): Ping) {
            self.n += n;
        }

        /// Reads.
        #[must_use]
        pub(crate) fn get(&self, _: Get) -> u64 {
            self.n
        }

        #[tracing::instrument(level = "debug", skip(self, ctx), fields(actor = %ctx.path()))]
        async fn traced(&mut self, ctx: &mut Ctx<Self>, Traced(text): Traced) {
            tracing::debug!(len = text.len(), "traced");
            self.n += text.len() as u64;
        }

        #[cfg(test)]
        fn build(&self, _: Build) -> &'static str {
            "test"
        }
    }

    #[tapio::test]
    async fn attributes_stay_on_the_methods(system: ActorSystem) {
        let internal = system.spawn(Internal::default(), "internal").unwrap();
        internal.ping(1);
        internal.traced("abc".into());
        assert_eq!(internal.get().await.unwrap(), 4);
        assert_eq!(internal.build().await.unwrap(), "test");
    }
}

/// Everything private: messages, actor and helpers in a private module, under
/// `deny(warnings)`.
mod private_actor_in_a_private_module {
    #![deny(warnings)]

    use tapio::prelude::*;

    #[message]
    struct Tick;

    #[message(reply = u32)]
    struct Ticks;

    #[derive(Clone, Default)]
    struct Clock {
        ticks: u32,
    }

    #[actor(helpers)]
    impl Clock {
        fn tick(&mut self, _: Tick) {
            self.ticks += 1;
        }

        fn ticks(&self, _: Ticks) -> u32 {
            self.ticks
        }
    }

    #[tapio::test]
    async fn private_items_compile_without_warnings(system: ActorSystem) {
        let clock = system.spawn(Clock::default(), "clock").unwrap();
        clock.tick();
        clock.tell(Tick);
        assert_eq!(clock.ticks().await.unwrap(), 2);
    }
}

/// Handlers named like the methods of `Actor` (`handle`, `signal`, `supervise`,
/// `started`) and a `stop` handler, with helpers of the same names.
mod handler_names_like_generated_ones {
    use tapio::prelude::*;

    #[message]
    pub struct Job(pub u64);

    #[message]
    pub struct Sig;

    #[message]
    pub struct Sup;

    #[message]
    pub struct Start;

    #[message(reply = u64)]
    pub struct Count;

    #[message(reply = u64)]
    pub struct Stop;

    #[derive(Clone, Default)]
    pub struct Worker {
        n: u64,
    }

    #[actor(helpers)]
    impl Worker {
        fn handle(&mut self, Job(n): Job) {
            self.n += n;
        }

        fn signal(&mut self, _: Sig) {
            self.n += 100;
        }

        fn supervise(&mut self, _: Sup) {
            self.n += 1000;
        }

        fn started(&mut self, _: Start) {
            self.n += 10_000;
        }

        fn count(&self, _: Count) -> u64 {
            self.n
        }

        fn stop(&mut self, _: Stop) -> tapio::ReplyThen<u64, WorkerMsg> {
            tapio::ReplyThen::stop(self.n)
        }
    }

    #[tapio::test]
    async fn the_names_do_not_collide(system: ActorSystem) {
        let worker = system
            .spawn(
                <Worker as Actor>::supervise(Worker::default())
                    .on_failure::<std::io::Error>(SupervisorStrategy::resume()),
                "worker",
            )
            .unwrap();
        worker.handle(1);
        worker.signal();
        worker.supervise();
        worker.started();
        assert_eq!(worker.count().await.unwrap(), 11_101);
        assert_eq!(worker.stop().await.unwrap(), 11_101);
    }
}

/// One message type handled by two `#[actor]` types (helper traits named with
/// `helpers = ..`, one helper renamed) and by a functional behavior; an actor that
/// spawns both kinds as children, watches one and hears it stop in an async signal
/// handler.
mod one_message_many_handlers {
    use tapio::prelude::*;
    use tokio::sync::mpsc;

    #[message]
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Reading {
        pub sensor: &'static str,
        pub value: i64,
    }

    #[message(reply = i64)]
    pub struct Summary;

    pub mod stats {
        use super::*;

        #[derive(Clone, Default)]
        pub struct MaxStat {
            max: i64,
        }

        #[actor(helpers = MaxApi)]
        impl MaxStat {
            fn reading(&mut self, reading: Reading) {
                self.max = self.max.max(reading.value);
            }

            fn summary(&self, _: Summary) -> i64 {
                self.max
            }
        }

        #[derive(Clone, Default)]
        pub struct SumStat {
            sum: i64,
        }

        #[actor(helpers = SumApi)]
        impl SumStat {
            fn reading(&mut self, reading: Reading) {
                self.sum += reading.value;
            }

            #[handler(helper = total)]
            fn summary(&self, _: Summary) -> i64 {
                self.sum
            }
        }
    }

    #[derive(Clone)]
    pub struct Fanout {
        log: mpsc::UnboundedSender<String>,
    }

    #[actor]
    impl Fanout {
        fn reading(&mut self, ctx: &mut Ctx<Self>, reading: Reading) {
            use stats::SumApi;
            let sum: ActorRef<stats::SumStatMsg> =
                ctx.spawn_anonymous(stats::SumStat::default()).unwrap();
            ctx.watch(&sum);
            sum.reading(reading.sensor, reading.value);
            ctx.stop(&sum).unwrap();
            let _ = self.log.send(format!("fanout {}", reading.value));
        }

        #[signal]
        async fn on_signal(&mut self, ctx: &mut Ctx<Self>, signal: &Signal) {
            tokio::task::yield_now().await;
            if let Signal::Terminated(_) = signal {
                let _ = self
                    .log
                    .send(format!("child stopped, {} left", ctx.children().len()));
            }
        }
    }

    #[tapio::test]
    async fn every_handler_sees_the_same_type(system: ActorSystem) {
        use stats::{MaxApi, SumApi};
        let (tx, mut rx) = mpsc::unbounded_channel();
        let plain_tx = tx.clone();
        let plain: ActorRef<Reading> = system
            .spawn(
                Behaviors::receive_message(move |reading: Reading| {
                    let _ = plain_tx.send(format!("plain {}", reading.value));
                }),
                "plain",
            )
            .unwrap();
        let max = system.spawn(stats::MaxStat::default(), "max").unwrap();
        let sum = system.spawn(stats::SumStat::default(), "sum").unwrap();
        for value in [3, -1, 7] {
            let reading = Reading { sensor: "s", value };
            plain.tell(reading.clone());
            if value < 0 {
                max.reading("s", value);
            } else {
                max.tell(reading);
            }
            sum.reading("s", value);
        }
        assert_eq!(max.summary().await.unwrap(), 7);
        assert_eq!(sum.total().await.unwrap(), 9);
        assert_eq!(sum.ask(Summary).await.unwrap(), 9);
        for value in [3, -1, 7] {
            assert_eq!(rx.recv().await.unwrap(), format!("plain {value}"));
        }
        let fanout = system.spawn(Fanout { log: tx }, "fanout").unwrap();
        fanout.tell(Reading {
            sensor: "x",
            value: 1,
        });
        assert_eq!(rx.recv().await.unwrap(), "fanout 1");
        assert_eq!(rx.recv().await.unwrap(), "child stopped, 0 left");
    }
}

/// The generated protocol enum driven by a hand-written functional behavior: a stub
/// that answers the same requests, for code written against `ActorRef<CounterMsg>`.
mod stub_of_a_generated_protocol {
    use tapio::prelude::*;

    #[message]
    pub struct Increment {
        pub by: u64,
    }

    #[message(reply = u64)]
    pub struct GetCount;

    #[derive(Clone, Default)]
    pub struct Counter {
        n: u64,
    }

    #[actor(helpers)]
    impl Counter {
        fn increment(&mut self, message: Increment) {
            self.n += message.by;
        }

        fn get_count(&self, _: GetCount) -> u64 {
            self.n
        }
    }

    fn stub() -> Behavior<CounterMsg> {
        Behaviors::receive(|ctx, message: CounterMsg| match message {
            CounterMsg::GetCount(_, reply) => reply.answer(ctx, 42_u64),
            CounterMsg::Increment(..) => Ok(Behaviors::same()),
        })
        .into()
    }

    async fn client(counter: ActorRef<CounterMsg>) -> u64 {
        counter.increment(1);
        counter.get_count().timeout(super::T).await.unwrap()
    }

    #[tapio::test]
    async fn the_stub_stands_in(system: ActorSystem) {
        let real = system.spawn(Counter::default(), "real").unwrap();
        let fake = system.spawn(stub(), "fake").unwrap();
        assert_eq!(client(real).await, 1);
        assert_eq!(client(fake).await, 42);
    }
}

/// A circuit breaker: shared data, a state with two successors (`A => B | C`),
/// requests answered in every state (one with `(reply, Next<Self>)`), an async state
/// handler taking the context, `#[on_entry]`, spawned by value with `Clone` states.
mod circuit_breaker_state_machine {
    use tapio::prelude::*;

    #[message]
    pub struct Fail;

    #[message]
    pub struct Probe;

    #[message(reply = Result<u64, String>)]
    pub struct Call(pub u64);

    #[message(reply = &'static str)]
    pub struct State;

    #[message(reply = u32)]
    pub struct Closings;

    #[derive(Clone)]
    pub struct Breaker {
        threshold: u32,
        failures: u32,
        closings: u32,
    }

    #[actor(
        helpers,
        messages(Call, Fail, Probe, State, Closings),
        states(Closed => Open, Open => HalfOpen, HalfOpen => Closed | Open)
    )]
    impl Breaker {}

    #[derive(Clone)]
    pub struct Closed;

    #[state(Breaker)]
    impl Closed {
        #[on_entry]
        fn enter(&mut self, breaker: &mut Breaker) {
            breaker.failures = 0;
            breaker.closings += 1;
        }

        fn call(&mut self, Call(n): Call) -> Result<u64, String> {
            Ok(n * 2)
        }

        fn fail(self, breaker: &mut Breaker, _: Fail) -> Next<Self> {
            breaker.failures += 1;
            if breaker.failures >= breaker.threshold {
                Next::to(Open { refused: 0 })
            } else {
                Next::stay(self)
            }
        }

        fn state(&mut self, _: State) -> &'static str {
            "closed"
        }

        fn closings(&mut self, breaker: &mut Breaker, _: Closings) -> u32 {
            breaker.closings
        }
    }

    #[derive(Clone)]
    pub struct Open {
        refused: u64,
    }

    #[state(Breaker)]
    impl Open {
        fn call(&mut self, _: Call) -> Result<u64, String> {
            self.refused += 1;
            Err(format!("open, refused {}", self.refused))
        }

        async fn probe(self, ctx: &mut Ctx<Breaker>, _: Probe) -> Next<Self> {
            tokio::task::yield_now().await;
            assert_eq!(ctx.path().name(), "breaker");
            Next::to(HalfOpen)
        }

        fn state(&mut self, _: State) -> &'static str {
            "open"
        }
    }

    #[derive(Clone)]
    pub struct HalfOpen;

    #[state(Breaker)]
    impl HalfOpen {
        fn call(self, Call(n): Call) -> (Result<u64, String>, Next<Self>) {
            if n == 0 {
                (Err("still failing".into()), Next::to(Open { refused: 0 }))
            } else {
                (Ok(n * 2), Next::to(Closed))
            }
        }

        fn state(&mut self, _: State) -> &'static str {
            "half-open"
        }
    }

    #[tapio::test]
    async fn it_opens_probes_and_closes(system: ActorSystem) {
        let data = Breaker {
            threshold: 2,
            failures: 0,
            closings: 0,
        };
        let breaker = system.spawn(Machine::new(data, Closed), "breaker").unwrap();
        assert_eq!(breaker.call(2).await.unwrap(), Ok(4));
        breaker.fail();
        breaker.fail();
        assert_eq!(breaker.state().await.unwrap(), "open");
        assert_eq!(
            breaker.call(2).await.unwrap(),
            Err("open, refused 1".into())
        );
        breaker.probe();
        assert_eq!(breaker.state().await.unwrap(), "half-open");
        assert_eq!(breaker.call(0).await.unwrap(), Err("still failing".into()));
        breaker.probe();
        assert_eq!(breaker.call(1).await.unwrap(), Ok(2));
        assert_eq!(breaker.state().await.unwrap(), "closed");
        assert_eq!(breaker.closings().await.unwrap(), 2);
    }
}

/// A state machine whose states live in a submodule (brought back with `pub use`),
/// one of them stashing, one with `#[otherwise]`, and a helper renamed in
/// `messages(.. as ..)`.
mod state_machine_states_in_a_submodule {
    use tapio::prelude::*;

    pub mod door {
        use tapio::prelude::*;

        pub use self::states::{Closed, Opened};

        #[message]
        pub struct Open;

        #[message]
        pub struct Shut;

        #[message(reply = u32)]
        pub struct Cycles;

        #[derive(Clone, Default)]
        pub struct Door {
            pub(crate) cycles: u32,
        }

        #[actor(
            helpers,
            messages(Open, Shut, Cycles as cycles_so_far),
            states(Closed => Opened, Opened => Closed)
        )]
        impl Door {}

        pub mod states {
            use tapio::prelude::*;

            use super::{Cycles, Door, DoorMsg, Open, Shut};

            #[derive(Clone)]
            pub struct Closed;

            #[state(Door, unhandled = stash)]
            impl Closed {
                fn open(self, door: &mut Door, _: Open) -> Next<Self> {
                    door.cycles += 1;
                    Next::to(Opened)
                }

                fn cycles(&mut self, door: &mut Door, _: Cycles) -> u32 {
                    door.cycles
                }
            }

            #[derive(Clone)]
            pub struct Opened;

            #[state(Door)]
            impl Opened {
                fn shut(self, _: Shut) -> Next<Self> {
                    Next::to(Closed)
                }

                #[otherwise]
                fn other(&mut self, door: &mut Door, message: DoorMsg) {
                    if let DoorMsg::Open(..) = message {
                        door.cycles += 100;
                    }
                }
            }
        }
    }

    #[tapio::test]
    async fn stash_and_otherwise_across_modules(system: ActorSystem) {
        use door::DoorRef;
        let door = system
            .spawn(Machine::new(door::Door::default(), door::Closed), "door")
            .unwrap();
        door.shut(); // stashed: `Closed` does not handle it
        door.open(); // to `Opened`, which replays `Shut`: back to `Closed`
        assert_eq!(door.cycles_so_far().await.unwrap(), 1);
        door.open();
        door.open(); // `Opened`'s `#[otherwise]`
        door.shut();
        assert_eq!(door.cycles_so_far().await.unwrap(), 102);
    }
}

/// A `#[remote_behavior]` factory in a nested module, offered by path and spawned from
/// another system; its request is answered with a registered reply type.
mod remote_factory_in_a_module {
    use tapio::remote::RemoteSettings;
    use tapio::remote::spawn::{Spawned, Spawner, SpawnerMsg};
    use tapio::testkit::two_nodes;

    pub mod factories {
        use tapio::prelude::*;
        use tapio::remote_behavior;

        #[message(remote = "dsl-shapes.scale.v1", reply = Scaled)]
        pub struct Scale(pub u64);

        #[message(remote = "dsl-shapes.scaled.v1")]
        #[derive(Debug, PartialEq, Eq)]
        pub struct Scaled(pub u64);

        #[derive(Debug, serde::Serialize, serde::Deserialize)]
        pub struct ScalerArgs {
            pub factor: u64,
        }

        pub struct Scaler {
            factor: u64,
        }

        #[actor]
        impl Scaler {
            fn scale(&mut self, Scale(n): Scale) -> Scaled {
                Scaled(n * self.factor)
            }
        }

        /// Builds a scaler.
        #[remote_behavior("dsl-shapes.scaler")]
        pub fn scaler(args: ScalerArgs) -> Behavior<ScalerMsg> {
            let factor = args.factor;
            Behaviors::setup(move |_| Scaler { factor })
        }
    }

    #[tokio::test]
    async fn the_factory_is_offered_and_spawned_by_path() {
        let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
        nodes
            .b
            .spawn(
                Spawner::offering::<factories::scaler>().build().unwrap(),
                "spawner",
            )
            .unwrap();
        let spawner = nodes
            .a
            .resolve::<SpawnerMsg>(&format!("{}/user/spawner", nodes.b.address()))
            .unwrap();
        let Spawned { actor, name } = spawner
            .spawn_remote::<factories::scaler>(factories::ScalerArgs { factor: 3 }, "s1")
            .await
            .unwrap();
        assert_eq!(name, "s1");
        let scaled = actor
            .ask(factories::Scale(5))
            .timeout(super::T)
            .await
            .unwrap();
        assert_eq!(scaled, factories::Scaled(15));
        nodes.terminate().await;
    }
}

/// An actor whose fields and messages hold refs of its own generated protocol: a ring
/// that passes a token; a message with `#[non_exhaustive]` and `#[repr(transparent)]`.
mod ring_of_actors_of_one_protocol {
    use tapio::prelude::*;

    #[message]
    pub struct Link {
        pub next: ActorRef<NodeMsg>,
    }

    #[message]
    pub struct Token {
        pub hops: u32,
        pub done: ActorRef<String>,
    }

    #[non_exhaustive]
    #[repr(transparent)]
    #[message]
    pub struct Mark(pub u64);

    #[derive(Clone, Default)]
    pub struct Node {
        next: Option<ActorRef<NodeMsg>>,
        marks: u64,
    }

    #[actor(helpers)]
    impl Node {
        fn link(&mut self, link: Link) {
            self.next = Some(link.next);
        }

        fn token(&mut self, ctx: &mut Ctx<Self>, Token { hops, done }: Token) {
            if hops == 0 {
                done.tell(format!("{} {}", ctx.path().name(), self.marks));
                return;
            }
            match &self.next {
                Some(next) => next.token(hops - 1, done),
                None => done.tell("no next".to_owned()),
            }
        }

        fn mark(&mut self, Mark(n): Mark) {
            self.marks += n;
        }
    }

    #[tapio::test]
    async fn the_token_goes_round(system: ActorSystem) {
        let nodes: Vec<ActorRef<NodeMsg>> = (0..5)
            .map(|i| system.spawn(Node::default(), &format!("n{i}")).unwrap())
            .collect();
        for (i, node) in nodes.iter().enumerate() {
            node.link(nodes[(i + 1) % nodes.len()].clone());
        }
        nodes[2].mark(7);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let done = system
            .spawn(
                Behaviors::receive_message(move |line: String| {
                    let _ = tx.send(line);
                }),
                "done",
            )
            .unwrap();
        nodes[0].token(12, done);
        assert_eq!(rx.recv().await.unwrap(), "n2 7");
    }
}

/// A message with fourteen fields and its helper; attributes (`doc`, `allow`) before
/// and after `#[actor]` on the block.
mod wide_message_and_block_attributes {
    // The generated helper takes fourteen parameters, and allows it itself: clippy's
    // `too_many_arguments` (run on this file with `-D warnings`) has nothing to say.

    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Wide {
        pub a: u64,
        pub b: u64,
        pub c: u64,
        pub d: u64,
        pub e: u64,
        pub f: u64,
        pub g: u64,
        pub h: u64,
        pub i: u64,
        pub j: u64,
        pub k: u64,
        pub l: u64,
        pub m: u64,
        pub n: u64,
    }

    #[derive(Clone)]
    pub struct Summer;

    /// Sums.
    #[allow(clippy::many_single_char_names)]
    #[actor(helpers)]
    #[allow(dead_code)]
    impl Summer {
        fn wide(&self, w: Wide) -> u64 {
            w.a + w.b + w.c + w.d + w.e + w.f + w.g + w.h + w.i + w.j + w.k + w.l + w.m + w.n
        }
    }

    #[tapio::test]
    async fn fourteen_parameters(system: ActorSystem) {
        let summer = system.spawn(Summer, "summer").unwrap();
        let sum = summer
            .wide(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
            .await
            .unwrap();
        assert_eq!(sum, 105);
    }
}

/// The protocol and the helper trait renamed, the context written as
/// `ActorContext<RenamedProtocol>`, a crate-private timer tick left without a helper,
/// a handler that fails through `?` on the timer's error.
mod timers_with_renamed_protocol {
    use std::time::Duration;

    use tapio::ZeroInterval;
    use tapio::prelude::*;

    #[message]
    pub struct Start {
        pub every_ms: u64,
    }

    #[message(reply = u32)]
    pub struct Ticks;

    #[message]
    #[derive(Clone)]
    pub(crate) struct Tick;

    #[derive(Clone, Default)]
    pub struct Metronome {
        ticks: u32,
    }

    #[actor(protocol = MetronomeProtocol, helpers = Metro)]
    impl Metronome {
        fn start(
            &mut self,
            ctx: &mut Ctx<Self>,
            Start { every_ms }: Start,
        ) -> Result<(), ZeroInterval> {
            ctx.timers()
                .start_fixed_delay("tick", Tick, Duration::from_millis(every_ms))?;
            Ok(())
        }

        #[handler(no_helper)]
        fn tick(&mut self, ctx: &mut ActorContext<MetronomeProtocol>, _: Tick) {
            self.ticks += 1;
            if self.ticks == 3 {
                ctx.timers().cancel("tick");
            }
        }

        fn ticks(&self, _: Ticks) -> u32 {
            self.ticks
        }
    }

    #[tapio::test(start_paused = true)]
    async fn three_ticks_then_cancelled(system: ActorSystem) {
        let metronome: ActorRef<MetronomeProtocol> =
            system.spawn(Metronome::default(), "metronome").unwrap();
        metronome.start(10);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(metronome.ticks().await.unwrap(), 3);
    }
}

/// Messages named like the prelude's own items (`Message`, `Signal`) and a message
/// whose derive comes before `#[message]`.
mod messages_named_like_prelude_items {
    use tapio::prelude::*;

    pub mod names {
        use tapio::prelude::*;

        #[message]
        pub struct Message(pub String);

        #[message]
        pub struct Signal;
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    #[message]
    pub struct DerivedFirst {
        pub x: u64,
    }

    #[message(reply = u64)]
    pub struct Total;

    #[derive(Clone, Default)]
    pub struct Odd {
        n: u64,
    }

    #[actor(helpers)]
    impl Odd {
        fn message(&mut self, message: names::Message) {
            self.n += message.0.len() as u64;
        }

        fn signal_message(&mut self, _: names::Signal) {
            self.n += 100;
        }

        fn derived(&mut self, derived: DerivedFirst) {
            self.n += derived.x;
        }

        fn total(&self, _: Total) -> u64 {
            self.n
        }

        #[signal]
        fn on_signal(&mut self, _: &Signal) {}
    }

    #[tapio::test]
    async fn the_names_are_the_user_s(system: ActorSystem) {
        let odd = system.spawn(Odd::default(), "odd").unwrap();
        odd.message("abc".into());
        odd.signal_message();
        odd.derived(5);
        assert_eq!(odd.total().await.unwrap(), 108);
    }
}

/// Messages of the user's own named like the runtime's generic message types keep
/// their helpers: `jobs::Result` (a request) asks, `names::Option` takes its fields.
mod messages_named_like_runtime_containers {
    use tapio::prelude::*;

    pub mod jobs {
        use tapio::prelude::*;

        #[message(reply = u64)]
        pub struct Result {
            pub job: u64,
        }

        #[message]
        pub struct Option {
            pub flag: bool,
        }
    }

    #[derive(Clone, Default)]
    pub struct Clerk {
        flags: u64,
    }

    #[actor(helpers)]
    impl Clerk {
        fn result(&mut self, result: jobs::Result) -> u64 {
            result.job * 2 + self.flags
        }

        fn option(&mut self, option: jobs::Option) {
            self.flags += u64::from(option.flag);
        }
    }

    #[tapio::test]
    async fn the_helpers_are_the_messages_own(system: ActorSystem) {
        let clerk = system.spawn(Clerk::default(), "clerk").unwrap();
        clerk.option(true);
        assert_eq!(clerk.result(20).await.unwrap(), 41);
    }
}

/// A `#[deprecated]` handler warns only where the user calls it, not in the code the
/// macro generates (this module denies the lint).
mod deprecated_handler {
    #![deny(deprecated)]

    use tapio::prelude::*;

    #[message(reply = u64)]
    pub struct Old;

    #[derive(Clone)]
    pub struct Legacy;

    #[actor]
    impl Legacy {
        #[deprecated(note = "ask `New` instead")]
        fn old(&self, _: Old) -> u64 {
            7
        }
    }

    #[tapio::test]
    async fn it_is_still_dispatched(system: ActorSystem) {
        let legacy = system.spawn(Legacy, "legacy").unwrap();
        assert_eq!(legacy.ask(Old).await.unwrap(), 7);
    }
}

/// Standard types as messages and replies: unsized boxes, maps, sets, arrays,
/// durations.
mod standard_types_as_messages {
    use std::collections::{BTreeMap, HashMap};
    use std::time::Duration;

    use tapio::prelude::*;

    #[message(reply = HashMap<String, u64>)]
    pub struct Counts;

    #[message(reply = [u8; 4])]
    pub struct Bytes;

    #[message(reply = Box<str>)]
    pub struct Name;

    #[derive(Clone, Default)]
    pub struct Store {
        waited: Duration,
        seen: BTreeMap<u64, u64>,
    }

    #[actor]
    impl Store {
        fn wait(&mut self, waited: Duration) {
            self.waited += waited;
        }

        fn tally(&mut self, tally: BTreeMap<u64, u64>) {
            self.seen.extend(tally);
        }

        fn counts(&self, _: Counts) -> HashMap<String, u64> {
            let waited = u64::try_from(self.waited.as_millis()).unwrap_or(u64::MAX);
            HashMap::from([
                ("waited".to_owned(), waited),
                ("seen".to_owned(), self.seen.len() as u64),
            ])
        }

        fn bytes(&self, _: Bytes) -> [u8; 4] {
            [1, 2, 3, 4]
        }

        fn name(&self, _: Name) -> Box<str> {
            "store".into()
        }
    }

    #[tapio::test]
    async fn they_cross_and_answer(system: ActorSystem) {
        let store = system.spawn(Store::default(), "store").unwrap();
        store.tell(Duration::from_millis(30));
        store.tell(BTreeMap::from([(1, 1), (2, 2)]));
        let counts = store.ask(Counts).await.unwrap();
        assert_eq!(counts["waited"], 30);
        assert_eq!(counts["seen"], 2);
        assert_eq!(store.ask(Bytes).await.unwrap(), [1, 2, 3, 4]);
        assert_eq!(&*store.ask(Name).await.unwrap(), "store");
    }
}
