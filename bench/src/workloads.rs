//! The workloads, each written once over `F: Framework`, so that every framework
//! does the same work: the same actors, exchanging the same messages, with the same
//! state. Each returns the time it measured (or, for memory, bytes per actor); the
//! setup before the clock starts and the teardown after it stops are not measured.
//!
//! The Savina ones follow Imam and Sarkar, "Savina - An Actor Benchmark Suite"
//! (AGERE! 2014), with the sizes below (smaller than Savina's defaults where a run
//! would take seconds on two cores): PingPong, Counting, ThreadRing, Fork-Join
//! throughput and creation, Big and Chameneos. A sink actor, where Savina has one,
//! is a shared countdown here, the same on every framework.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::frameworks::{Behaviour, Flow, Framework};
use crate::harness::{resident_bytes, wait_for};

/// Tell throughput: messages from one producer task to one actor.
pub const TELLS: u64 = 1_000_000;
/// Ask latency: sequential round trips.
pub const ASKS: u64 = 100_000;
/// Spawn, stop and memory: idle actors.
pub const IDLE_ACTORS: usize = 100_000;
/// Skynet: ten children per actor down to this many leaves (1,111,111 actors).
pub const SKYNET_LEAVES: u64 = 1_000_000;
/// Savina PingPong: round trips.
pub const PING_PONGS: u64 = 100_000;
/// Savina Counting: increments told by one actor to another.
pub const COUNTS: u64 = 1_000_000;
/// Savina ThreadRing: actors in the ring, and hops of the token.
pub const RING_ACTORS: usize = 100;
pub const RING_HOPS: u64 = 500_000;
/// Savina Fork-Join throughput: actors, and messages to each.
pub const FJ_ACTORS: usize = 60;
pub const FJ_MESSAGES: u64 = 10_000;
/// Savina Fork-Join create: actors, each created and told one message.
pub const FJ_CREATES: usize = 40_000;
/// Savina Big: actors, and pings each sends to a neighbour picked at random.
pub const BIG_ACTORS: usize = 120;
pub const BIG_PINGS: u64 = 5_000;
/// Savina Chameneos: creatures, and meetings at the mall.
pub const CHAMENEOS: usize = 100;
pub const MEETINGS: u64 = 200_000;

/// Counts down to zero, then wakes whoever waits.
pub struct Countdown {
    left: AtomicUsize,
    zero: Notify,
}

impl Countdown {
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            left: AtomicUsize::new(n),
            zero: Notify::new(),
        })
    }

    pub fn one(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.zero.notify_one();
        }
    }

    pub async fn wait(&self) {
        self.zero.notified().await;
    }
}

/// A little arithmetic per message, as Savina's Fork-Join workloads do.
fn compute(n: u64) {
    let x = std::hint::black_box(37.2_f64 + (n % 7) as f64);
    std::hint::black_box(x.sin().abs().sqrt() * x.cos());
}

// ---------------------------------------------------------------- tell throughput

/// Sums what it is told; counts down once it has seen `until`.
#[derive(Clone)]
struct Summer {
    sum: u64,
    seen: u64,
    until: u64,
    done: Arc<Countdown>,
}

impl<F: Framework> Behaviour<F> for Summer {
    type Msg = u64;

    fn handle(&mut self, n: u64, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        self.sum = self.sum.wrapping_add(n);
        self.seen += 1;
        if self.seen == self.until {
            std::hint::black_box(self.sum);
            self.done.one();
        }
        Flow::Continue
    }
}

/// `tells` messages from this task to one actor, until it has handled them all.
pub async fn tell<F: Framework>(tells: u64) -> Duration {
    let system = F::system();
    let done = Countdown::new(1);
    let summer = Summer {
        sum: 0,
        seen: 0,
        until: tells,
        done: done.clone(),
    };
    let summer = F::spawn(&system, summer).await;
    let start = Instant::now();
    for n in 0..tells {
        F::tell(&summer, n);
    }
    done.wait().await;
    let elapsed = start.elapsed();
    drop(summer);
    F::shutdown(system).await;
    elapsed
}

// ---------------------------------------------------------------- idle actors

/// An idle actor: counts its start, handles `Work` by counting it, stops on `Stop`,
/// and counts its end when the framework drops it.
#[derive(Clone)]
struct Idle {
    started: Arc<AtomicUsize>,
    handled: Arc<Countdown>,
    ended: Arc<Countdown>,
    /// Only the instance that started counts its end (tapio keeps the value it was
    /// spawned with, to restart from, besides the one that runs).
    running: bool,
}

enum IdleMsg {
    Work(u64),
    Stop,
}

impl<F: Framework> Behaviour<F> for Idle {
    type Msg = IdleMsg;

    fn started(&mut self) {
        self.running = true;
        self.started.fetch_add(1, Ordering::AcqRel);
    }

    fn handle(&mut self, msg: IdleMsg, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            IdleMsg::Work(n) => {
                std::hint::black_box(n);
                self.handled.one();
                Flow::Continue
            }
            IdleMsg::Stop => Flow::Stop,
        }
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        if self.running {
            self.ended.one();
        }
    }
}

/// `n` idle actors, spawned one after the other from this task, all started.
async fn idle_actors<F: Framework>(
    system: &F::System,
    n: usize,
    handled: &Arc<Countdown>,
    ended: &Arc<Countdown>,
) -> Vec<F::Ref<Idle>> {
    let started = Arc::new(AtomicUsize::new(0));
    let idle = Idle {
        started: started.clone(),
        handled: handled.clone(),
        ended: ended.clone(),
        running: false,
    };
    let mut refs = Vec::with_capacity(n);
    for _ in 0..n {
        refs.push(F::spawn(system, idle.clone()).await);
    }
    wait_for(&started, n).await;
    refs
}

/// The time to spawn `n` idle actors until every one has started.
pub async fn spawn<F: Framework>(n: usize) -> Duration {
    let system = F::system();
    let (handled, ended) = (Countdown::new(n), Countdown::new(n));
    let start = Instant::now();
    let refs = idle_actors::<F>(&system, n, &handled, &ended).await;
    let elapsed = start.elapsed();
    drop(refs);
    F::shutdown(system).await;
    elapsed
}

/// `n` idle actors, all started; then each is told to stop, until every one has
/// ended (its framework has dropped it).
pub async fn stop<F: Framework>(n: usize) -> Duration {
    let system = F::system();
    let (handled, ended) = (Countdown::new(n), Countdown::new(n));
    let refs = idle_actors::<F>(&system, n, &handled, &ended).await;
    let start = Instant::now();
    for actor in &refs {
        F::tell(actor, IdleMsg::Stop);
    }
    ended.wait().await;
    let elapsed = start.elapsed();
    drop(refs);
    F::shutdown(system).await;
    elapsed
}

/// The resident bytes per idle actor, `n` of them, all started; after one message
/// each (all handled) if `one_message`.
pub async fn memory<F: Framework>(n: usize, one_message: bool) -> usize {
    let system = F::system();
    let (handled, ended) = (Countdown::new(n), Countdown::new(n));
    let before = resident_bytes();
    let refs = idle_actors::<F>(&system, n, &handled, &ended).await;
    if one_message {
        for (i, actor) in refs.iter().enumerate() {
            F::tell(actor, IdleMsg::Work(i as u64));
        }
        handled.wait().await;
    }
    let bytes = resident_bytes().saturating_sub(before) / n;
    drop(refs);
    F::shutdown(system).await;
    bytes
}

// ---------------------------------------------------------------- Savina: PingPong

/// Ping: answers each pong with a ping until `left` is spent.
#[derive(Clone)]
struct Ping<F: Framework> {
    pong: F::Ref<Pong<F>>,
    left: u64,
    done: Arc<Countdown>,
}

/// Pong: answers each ping; it learns who pings first.
#[derive(Clone)]
struct Pong<F: Framework> {
    ping: Option<F::Ref<Ping<F>>>,
    ready: Arc<Countdown>,
}

enum PongMsg<F: Framework> {
    Partner(F::Ref<Ping<F>>),
    Ping,
}

impl<F: Framework> Behaviour<F> for Ping<F> {
    type Msg = ();

    fn handle(&mut self, (): (), _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        if self.left == 0 {
            self.done.one();
            return Flow::Stop;
        }
        self.left -= 1;
        F::tell(&self.pong, PongMsg::Ping);
        Flow::Continue
    }
}

impl<F: Framework> Behaviour<F> for Pong<F> {
    type Msg = PongMsg<F>;

    fn handle(&mut self, msg: PongMsg<F>, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            PongMsg::Partner(ping) => {
                self.ping = Some(ping);
                self.ready.one();
            }
            PongMsg::Ping => {
                if let Some(ping) = &self.ping {
                    F::tell(ping, ());
                }
            }
        }
        Flow::Continue
    }
}

/// `rounds` round trips between two actors.
pub async fn ping_pong<F: Framework>(rounds: u64) -> Duration {
    let system = F::system();
    let done = Countdown::new(1);
    let ready = Countdown::new(1);
    let pong = Pong::<F> {
        ping: None,
        ready: ready.clone(),
    };
    let pong = F::spawn(&system, pong).await;
    let ping = Ping::<F> {
        pong: pong.clone(),
        left: rounds,
        done: done.clone(),
    };
    let ping = F::spawn(&system, ping).await;
    F::tell(&pong, PongMsg::Partner(ping.clone()));
    ready.wait().await;
    let start = Instant::now();
    F::tell(&ping, ());
    done.wait().await;
    let elapsed = start.elapsed();
    drop((ping, pong));
    F::shutdown(system).await;
    elapsed
}

// ---------------------------------------------------------------- Savina: Counting

/// The counter: counts increments, and answers a retrieve with the count.
#[derive(Clone)]
struct Counter<F: Framework> {
    count: u64,
    _framework: std::marker::PhantomData<fn() -> F>,
}

enum CounterMsg<F: Framework> {
    Increment,
    Retrieve(F::Ref<Producer<F>>),
}

/// The producer: on `Start`, tells the counter `counts` increments and then asks
/// (by a message carrying its own ref) for the count, which it checks.
#[derive(Clone)]
struct Producer<F: Framework> {
    counter: F::Ref<Counter<F>>,
    counts: u64,
    /// The count the counter answered with.
    answer: Arc<AtomicU64>,
    done: Arc<Countdown>,
}

enum ProducerMsg {
    Start,
    Count(u64),
}

impl<F: Framework> Behaviour<F> for Counter<F> {
    type Msg = CounterMsg<F>;

    fn handle(&mut self, msg: CounterMsg<F>, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            CounterMsg::Increment => self.count += 1,
            CounterMsg::Retrieve(producer) => F::tell(&producer, ProducerMsg::Count(self.count)),
        }
        Flow::Continue
    }
}

impl<F: Framework> Behaviour<F> for Producer<F> {
    type Msg = ProducerMsg;

    fn handle(&mut self, msg: ProducerMsg, me: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            ProducerMsg::Start => {
                for _ in 0..self.counts {
                    F::tell(&self.counter, CounterMsg::Increment);
                }
                F::tell(&self.counter, CounterMsg::Retrieve(me()));
                Flow::Continue
            }
            ProducerMsg::Count(count) => {
                self.answer.store(count, Ordering::Release);
                self.done.one();
                Flow::Stop
            }
        }
    }
}

/// One actor tells another `counts` increments, then retrieves the count. `None` if
/// the count was short: the retrieve overtook increments told before it, which a
/// mailbox that keeps each sender's order does not allow.
pub async fn counting<F: Framework>(counts: u64) -> Option<Duration> {
    let system = F::system();
    let done = Countdown::new(1);
    let counter = Counter::<F> {
        count: 0,
        _framework: std::marker::PhantomData,
    };
    let counter = F::spawn(&system, counter).await;
    let answer = Arc::new(AtomicU64::new(0));
    let producer = Producer::<F> {
        counter: counter.clone(),
        counts,
        answer: answer.clone(),
        done: done.clone(),
    };
    let producer = F::spawn(&system, producer).await;
    let start = Instant::now();
    F::tell(&producer, ProducerMsg::Start);
    done.wait().await;
    let elapsed = start.elapsed();
    drop((producer, counter));
    F::shutdown(system).await;
    (answer.load(Ordering::Acquire) == counts).then_some(elapsed)
}

// ---------------------------------------------------------------- Savina: ThreadRing

/// A ring member: passes the token on to the next, one hop fewer each time.
#[derive(Clone)]
struct RingMember<F: Framework> {
    next: Option<F::Ref<RingMember<F>>>,
    ready: Arc<Countdown>,
    done: Arc<Countdown>,
}

enum RingMsg<F: Framework> {
    Next(F::Ref<RingMember<F>>),
    Token(u64),
}

impl<F: Framework> Behaviour<F> for RingMember<F> {
    type Msg = RingMsg<F>;

    fn handle(&mut self, msg: RingMsg<F>, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            RingMsg::Next(next) => {
                self.next = Some(next);
                self.ready.one();
            }
            RingMsg::Token(0) => self.done.one(),
            RingMsg::Token(left) => {
                if let Some(next) = &self.next {
                    F::tell(next, RingMsg::Token(left - 1));
                }
            }
        }
        Flow::Continue
    }
}

/// A token passed `hops` times around a ring of `actors`.
pub async fn thread_ring<F: Framework>(actors: usize, hops: u64) -> Duration {
    let system = F::system();
    let (ready, done) = (Countdown::new(actors), Countdown::new(1));
    let mut ring = Vec::with_capacity(actors);
    for _ in 0..actors {
        let member = RingMember::<F> {
            next: None,
            ready: ready.clone(),
            done: done.clone(),
        };
        ring.push(F::spawn(&system, member).await);
    }
    for (i, member) in ring.iter().enumerate() {
        F::tell(member, RingMsg::Next(ring[(i + 1) % actors].clone()));
    }
    ready.wait().await;
    let start = Instant::now();
    F::tell(&ring[0], RingMsg::Token(hops));
    done.wait().await;
    let elapsed = start.elapsed();
    drop(ring);
    F::shutdown(system).await;
    elapsed
}

// ---------------------------------------------------------------- Savina: Fork-Join

/// A worker: computes a little per message; counts down once it has had `until`.
#[derive(Clone)]
struct Worker {
    seen: u64,
    until: u64,
    done: Arc<Countdown>,
}

impl<F: Framework> Behaviour<F> for Worker {
    type Msg = u64;

    fn handle(&mut self, n: u64, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        compute(n);
        self.seen += 1;
        if self.seen == self.until {
            self.done.one();
            // Fork-Join create: a worker told one message is done with it.
            if self.until == 1 {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }
}

/// Throughput: `messages` to each of `actors` workers, round robin from this task.
pub async fn fork_join_throughput<F: Framework>(actors: usize, messages: u64) -> Duration {
    let system = F::system();
    let done = Countdown::new(actors);
    let mut workers = Vec::with_capacity(actors);
    for _ in 0..actors {
        let worker = Worker {
            seen: 0,
            until: messages,
            done: done.clone(),
        };
        workers.push(F::spawn(&system, worker).await);
    }
    let start = Instant::now();
    for n in 0..messages {
        for worker in &workers {
            F::tell(worker, n);
        }
    }
    done.wait().await;
    let elapsed = start.elapsed();
    drop(workers);
    F::shutdown(system).await;
    elapsed
}

/// Creation: `actors` workers, each spawned and told one message as soon as it is,
/// until every one has handled its message.
pub async fn fork_join_create<F: Framework>(actors: usize) -> Duration {
    let system = F::system();
    let done = Countdown::new(actors);
    let worker = Worker {
        seen: 0,
        until: 1,
        done: done.clone(),
    };
    let mut workers = Vec::with_capacity(actors);
    let start = Instant::now();
    for n in 0..actors {
        let w = F::spawn(&system, worker.clone()).await;
        F::tell(&w, n as u64);
        workers.push(w);
    }
    done.wait().await;
    let elapsed = start.elapsed();
    drop(workers);
    F::shutdown(system).await;
    elapsed
}

// ---------------------------------------------------------------- Savina: Big

/// A Big actor: answers a ping with a pong; on a pong, pings a neighbour picked at
/// random until it has sent `pings`, then counts down.
#[derive(Clone)]
struct BigActor<F: Framework> {
    index: usize,
    neighbours: Arc<[F::Ref<BigActor<F>>]>,
    sent: u64,
    pings: u64,
    random: u64,
    ready: Arc<Countdown>,
    done: Arc<Countdown>,
}

enum BigMsg<F: Framework> {
    Neighbours(Arc<[F::Ref<BigActor<F>>]>),
    Start,
    /// A ping from the actor at this index.
    Ping(usize),
    Pong,
}

impl<F: Framework> BigActor<F> {
    fn ping_someone(&mut self) {
        // xorshift64: the same sequence on every framework.
        self.random ^= self.random << 13;
        self.random ^= self.random >> 7;
        self.random ^= self.random << 17;
        let to = (self.random % self.neighbours.len() as u64) as usize;
        self.sent += 1;
        F::tell(&self.neighbours[to], BigMsg::Ping(self.index));
    }
}

impl<F: Framework> Behaviour<F> for BigActor<F> {
    type Msg = BigMsg<F>;

    fn handle(&mut self, msg: BigMsg<F>, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            BigMsg::Neighbours(all) => {
                self.neighbours = all;
                self.ready.one();
            }
            BigMsg::Start => self.ping_someone(),
            BigMsg::Ping(from) => F::tell(&self.neighbours[from], BigMsg::Pong),
            BigMsg::Pong if self.sent < self.pings => self.ping_someone(),
            BigMsg::Pong => self.done.one(),
        }
        Flow::Continue
    }
}

/// `actors` actors, each sending `pings` pings to neighbours at random.
pub async fn big<F: Framework>(actors: usize, pings: u64) -> Duration {
    let system = F::system();
    let (ready, done) = (Countdown::new(actors), Countdown::new(actors));
    let mut all = Vec::with_capacity(actors);
    for index in 0..actors {
        let actor = BigActor::<F> {
            index,
            neighbours: Arc::new([]),
            sent: 0,
            pings,
            random: 0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1),
            ready: ready.clone(),
            done: done.clone(),
        };
        all.push(F::spawn(&system, actor).await);
    }
    let all: Arc<[F::Ref<BigActor<F>>]> = all.into();
    for actor in all.iter() {
        F::tell(actor, BigMsg::Neighbours(all.clone()));
    }
    ready.wait().await;
    let start = Instant::now();
    for actor in all.iter() {
        F::tell(actor, BigMsg::Start);
    }
    done.wait().await;
    let elapsed = start.elapsed();
    drop(all);
    F::shutdown(system).await;
    elapsed
}

// ---------------------------------------------------------------- Savina: Chameneos

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Colour {
    Blue,
    Red,
    Yellow,
}

impl Colour {
    fn complement(self, other: Colour) -> Colour {
        match (self, other) {
            (a, b) if a == b => a,
            (Colour::Blue, Colour::Red) | (Colour::Red, Colour::Blue) => Colour::Yellow,
            (Colour::Blue, Colour::Yellow) | (Colour::Yellow, Colour::Blue) => Colour::Red,
            _ => Colour::Blue,
        }
    }
}

/// The mall: pairs chameneos two by two until `left` meetings are done, then sends
/// each that comes an `Exit`; sums the meetings they report.
#[derive(Clone)]
struct Mall<F: Framework> {
    waiting: Option<(F::Ref<Chameneo<F>>, Colour)>,
    left: u64,
    exited: usize,
    creatures: usize,
    meetings: u64,
    done: Arc<Countdown>,
}

enum MallMsg<F: Framework> {
    Meet(F::Ref<Chameneo<F>>, Colour),
    Exited(u64),
}

/// A chameneo: asks the mall for a meeting; met, it changes colour with its partner.
#[derive(Clone)]
struct Chameneo<F: Framework> {
    mall: F::Ref<Mall<F>>,
    colour: Colour,
    meetings: u64,
}

enum ChameneoMsg<F: Framework> {
    Start,
    /// The mall paired this one with the other, of this colour.
    Meet(F::Ref<Chameneo<F>>, Colour),
    /// The partner's new colour.
    Change(Colour),
    Exit,
}

impl<F: Framework> Behaviour<F> for Mall<F> {
    type Msg = MallMsg<F>;

    fn handle(&mut self, msg: MallMsg<F>, _: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            MallMsg::Meet(from, _) if self.left == 0 => F::tell(&from, ChameneoMsg::Exit),
            MallMsg::Meet(from, colour) => match self.waiting.take() {
                Some((first, _)) => {
                    self.left -= 1;
                    F::tell(&first, ChameneoMsg::Meet(from, colour));
                }
                None => self.waiting = Some((from, colour)),
            },
            MallMsg::Exited(meetings) => {
                self.meetings += meetings;
                self.exited += 1;
                if self.exited == self.creatures {
                    std::hint::black_box(self.meetings);
                    self.done.one();
                    return Flow::Stop;
                }
            }
        }
        Flow::Continue
    }
}

impl<F: Framework> Behaviour<F> for Chameneo<F> {
    type Msg = ChameneoMsg<F>;

    fn handle(&mut self, msg: ChameneoMsg<F>, me: &dyn Fn() -> F::Ref<Self>) -> Flow {
        match msg {
            ChameneoMsg::Start => {}
            ChameneoMsg::Meet(other, colour) => {
                self.colour = self.colour.complement(colour);
                self.meetings += 1;
                F::tell(&other, ChameneoMsg::Change(self.colour));
            }
            ChameneoMsg::Change(colour) => {
                self.colour = colour;
                self.meetings += 1;
            }
            ChameneoMsg::Exit => {
                F::tell(&self.mall, MallMsg::Exited(self.meetings));
                return Flow::Stop;
            }
        }
        F::tell(&self.mall, MallMsg::Meet(me(), self.colour));
        Flow::Continue
    }
}

/// `creatures` chameneos meeting two by two at a mall, `meetings` times.
pub async fn chameneos<F: Framework>(creatures: usize, meetings: u64) -> Duration {
    let system = F::system();
    let done = Countdown::new(1);
    let mall = Mall::<F> {
        waiting: None,
        left: meetings,
        exited: 0,
        creatures,
        meetings: 0,
        done: done.clone(),
    };
    let mall = F::spawn(&system, mall).await;
    let colours = [Colour::Blue, Colour::Red, Colour::Yellow];
    let mut all = Vec::with_capacity(creatures);
    for i in 0..creatures {
        let chameneo = Chameneo::<F> {
            mall: mall.clone(),
            colour: colours[i % 3],
            meetings: 0,
        };
        all.push(F::spawn(&system, chameneo).await);
    }
    let start = Instant::now();
    for chameneo in &all {
        F::tell(chameneo, ChameneoMsg::Start);
    }
    done.wait().await;
    let elapsed = start.elapsed();
    drop((all, mall));
    F::shutdown(system).await;
    elapsed
}
