//! Every example prints the lines its guide promises: checked on the value each
//! example's `run` returns, and on the stdout of the example binary itself, as
//! `cargo run --example NAME` would show it.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tapio_examples::support::ExampleError;

/// Run an example's `run`, bounded, on a fresh current-thread runtime, as the
/// examples' own `main`s do.
fn lines_of<F>(run: fn() -> F) -> Vec<String>
where
    F: std::future::Future<Output = Result<Vec<String>, ExampleError>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), run()).await })
        .expect("the example finished within 60 s")
        .expect("the example ran without error")
}

/// The stdout of the compiled example, one entry per line.
fn printed_by(example: &str) -> Vec<String> {
    // Test binaries live in `target/<profile>/deps`; examples in `target/<profile>/examples`.
    let deps = std::env::current_exe().expect("the test binary's path");
    let profile = deps
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the target profile directory");
    let binary: PathBuf = profile.join("examples").join(example);
    let output = Command::new(&binary)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", binary.display()));
    assert!(
        output.status.success(),
        "{example} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn check(example: &str, returned: Vec<String>, expected: &[&str]) {
    assert_eq!(returned, expected, "{example}: what `run` returned");
    assert_eq!(
        printed_by(example),
        expected,
        "{example}: what the binary printed"
    );
}

#[test]
fn hello_world_greets_before_the_listener_hears() {
    check(
        "hello_world",
        lines_of(tapio_examples::hello_world::run),
        &["greeter: hello, world!", "listener: world has been greeted"],
    );
}

#[test]
fn ping_pong_alternates_and_ping_stops_itself() {
    check(
        "ping_pong",
        lines_of(tapio_examples::ping_pong::run),
        &[
            "ping: hop 1",
            "pong: hop 2",
            "ping: hop 3",
            "pong: hop 4",
            "ping: hop 5",
            "pong: hop 6",
            "ping: hop 7",
            "ping: that is enough, stopping",
        ],
    );
}

#[test]
fn counter_reports_three() {
    check(
        "counter",
        lines_of(tapio_examples::counter::run),
        &["counter: 3"],
    );
    check(
        "counter_without_macros",
        lines_of(tapio_examples::counter_without_macros::run),
        &["counter: 3"],
    );
}

#[test]
fn supervision_backoff_accounts_for_every_item_and_gives_up_on_the_doomed() {
    check(
        "supervision_backoff",
        lines_of(tapio_examples::supervision_backoff::run),
        &[
            "uploader: incarnation 1 ready",
            "uploader: item 1 failed",
            "uploader: incarnation 2 ready",
            "uploader: item 2 failed",
            "uploader: incarnation 3 ready",
            "uploader: item 3 uploaded",
            "doomed: item 4 failed",
            "doomed: item 5 failed",
            "doomed: restart window exhausted, stopped",
        ],
    );
}

#[test]
fn death_watch_evicts_the_session_that_stopped() {
    check(
        "death_watch",
        lines_of(tapio_examples::death_watch::run),
        &[
            "registry: registered ada, holding 1",
            "registry: registered grace, holding 2",
            "registry: ada stopped, holding 1",
            "registry: holding [grace]",
        ],
    );
}

#[test]
fn escalation_rebuilds_the_pipeline_and_terminates_an_unsupervised_system() {
    check(
        "escalation",
        lines_of(tapio_examples::escalation::run),
        &[
            "pipeline: building, incarnation 1",
            "worker: ready",
            "ticker: tick 1",
            "worker: cannot parse an empty line",
            "worker: stopped",
            "pipeline: restarting after the worker escalated",
            "pipeline: building, incarnation 2",
            "worker: ready",
            "ticker: tick 2",
            "worker: parsed \"ok\"",
            "worker: stopped",
            "worker: ready",
            "worker: cannot parse an empty line",
            "worker: stopped",
            "system: terminated by empty input",
            "system: raised in /user/worker",
            "system: escalated up to the guardian /user",
        ],
    );
}

#[test]
fn graceful_shutdown_closes_the_connections_before_the_pool() {
    check(
        "graceful_shutdown",
        lines_of(tapio_examples::graceful_shutdown::run),
        &[
            "conn-1: ran \"select 1\"",
            "conn-2: ran \"select 1\"",
            "signal: SIGINT, shutting down",
            "conn-1: closed",
            "conn-2: closed",
            "pool: closed, after every connection in it",
        ],
    );
}

#[test]
fn ask_timeout_tells_the_three_ways_of_not_getting_an_answer_apart() {
    check(
        "ask_timeout",
        lines_of(tapio_examples::ask_timeout::run),
        &[
            "reader: 'Dune' is on shelf 3",
            "reader: gave up on 'Ulysses' after 50ms",
            "dead letter: Shelf (the ask it answers has ended)",
            "reader: the desk closed, so there was no point waiting",
        ],
    );
}

#[test]
fn rate_limiter_throttles_the_burst_and_refills() {
    check(
        "rate_limiter",
        lines_of(tapio_examples::rate_limiter::run),
        &[
            "req-1: allowed",
            "req-2: allowed",
            "req-3: throttled",
            "req-4: throttled",
            "req-5: throttled",
            "req-6: allowed",
        ],
    );
}

// S26 + S27: two greetings stashed while the template loads, replayed ahead of the
// third, which arrives after it.
#[test]
fn stash_on_startup_answers_the_held_greetings_first_and_in_order() {
    check(
        "stash_on_startup",
        lines_of(tapio_examples::stash_on_startup::run),
        &[
            "greeter: loading, holding what arrives",
            "greeter: not ready, stashed ada",
            "greeter: not ready, stashed grace",
            "greeter: loaded, replaying 2 held",
            "greeter: hello, ada!",
            "greeter: hello, grace!",
            "greeter: hello, carol!",
        ],
    );
}

// S30 + S32: six jobs over three workers in strict rotation, the producer slowed by
// `offer` against the router's bounded mailbox; a poisoned worker leaves, and the
// rotation carries on over the other two from where it was.
#[test]
fn worker_pool_rotates_waits_and_carries_on_without_the_poisoned_worker() {
    check(
        "worker_pool",
        lines_of(tapio_examples::worker_pool::run),
        &[
            "producer: the pool is full, waiting to hand over job 3",
            "routee-1: job 1",
            "routee-2: job 2",
            "producer: the pool is full, waiting to hand over job 5",
            "routee-3: job 3",
            "routee-1: job 4",
            "routee-2: job 5",
            "routee-3: job 6",
            "routee-1: stopped, and left the pool",
            "producer: the pool is full, waiting to hand over job 9",
            "routee-2: job 7",
            "routee-3: job 8",
            "routee-2: job 9",
            "routee-3: job 10",
        ],
    );
}

// S28: the service answers in its own protocol through the portfolio's adapter; a
// price that cannot be read fails the portfolio (not the service), whose supervision
// restarts it, and the new incarnation's adapter works as the first did.
#[test]
fn adapters_translate_inside_the_owner_and_fail_under_its_supervision() {
    check(
        "adapters",
        lines_of(tapio_examples::adapters::run),
        &[
            "portfolio: ready (incarnation 1)",
            "prices: quoting ACME",
            "portfolio: ACME is worth 1250 cents",
            "prices: quoting JUNK",
            "portfolio: cannot read the price of JUNK (\"n/a\"), failing",
            "portfolio: ready (incarnation 2)",
            "prices: quoting ACME",
            "portfolio: ACME is worth 1250 cents",
        ],
    );
}

// S33: the same blocking call, through `run_blocking` and then directly in a handler,
// on one thread: the heartbeat next door ticks through the first and not the second.
#[test]
fn blocking_calls_stall_the_neighbour_only_when_made_in_the_handler() {
    check(
        "blocking_calls",
        lines_of(tapio_examples::blocking_calls::run),
        &[
            "run_blocking: the heartbeat ticked 3 times during the call",
            "run_blocking: the call returned as soon as it had heard 3 beats",
            "in the handler: the heartbeat ticked 0 times during the call",
            "in the handler: the call gave up after 500ms, the heartbeat stalled all along",
        ],
    );
}

// The tour leaves no example out: every `[[example]]` target but the tour itself.
#[test]
fn the_tour_knows_every_example() {
    let manifest = include_str!("../Cargo.toml");
    let targets: Vec<&str> = manifest
        .split("[[example]]")
        .skip(1)
        .filter_map(|section| {
            let line = section.lines().find(|l| l.starts_with("name = "))?;
            Some(line.trim_start_matches("name = ").trim_matches('"'))
        })
        .filter(|name| *name != "tour")
        .collect();
    let toured: Vec<&str> = tapio_examples::EXAMPLES.iter().map(|(n, _)| *n).collect();
    assert_eq!(toured, targets);
}

#[test]
fn the_tour_runs_every_example_in_turn() {
    let printed = printed_by("tour");
    let sections: Vec<&str> = printed
        .iter()
        .filter_map(|line| line.strip_prefix("== ")?.strip_suffix(" =="))
        .collect();
    assert_eq!(
        sections,
        tapio_examples::EXAMPLES
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
    );
    for (name, _) in tapio_examples::EXAMPLES {
        let section = printed
            .iter()
            .skip_while(|line| **line != format!("== {name} =="))
            .skip(1)
            .take_while(|line| !line.is_empty())
            .map(|line| stable(line))
            .collect::<Vec<_>>();
        let alone: Vec<String> = printed_by(name).iter().map(|line| stable(line)).collect();
        assert_eq!(section, alone, "the tour's {name} section");
    }
}

// S34: each state refuses what it has no handler for, for its own reason; the same
// `Transmit` goes through once `Ready`; `Close` drains with a marker.
#[test]
fn state_machine_refuses_by_state_and_drains_on_close() {
    check(
        "state_machine",
        lines_of(tapio_examples::state_machine::run),
        &[
            "conn: refused Transmit, not open",
            "conn: connecting, asking for a token",
            "conn: refused Transmit, still connecting",
            "conn: authenticated with t-42",
            "conn: sent \"hello\" with t-42",
            "conn: closing, draining what is queued",
            "conn: dropped Transmit, closing",
            "conn: closed",
        ],
    );
    assert_eq!(
        tapio_examples::state_machine::Connection::STATE_GRAPH_MERMAID,
        "stateDiagram-v2\n    [*] --> Disconnected\n    Disconnected --> Authenticating\n    Authenticating --> Ready\n    Ready --> Closing\n    Closing --> [*]\n"
    );
}

// S34: the state machine written out by hand behaves as the generated one.
#[test]
fn state_machine_without_macros_matches_the_generated_one() {
    check(
        "state_machine_without_macros",
        lines_of(tapio_examples::state_machine_without_macros::run),
        &[
            "conn: refused Transmit, not open",
            "conn: connecting, asking for a token",
            "conn: refused Transmit, still connecting",
            "conn: authenticated with t-42",
            "conn: sent \"hello\" with t-42",
            "conn: closing, draining what is queued",
            "conn: dropped Transmit, closing",
            "conn: closed",
        ],
    );
}

// S50, S52: the manager forwards each track request and the group answers it; the
// query keeps the reading of a device that answered and then stopped, and tells a
// device that stopped first, one that is too slow and one without a reading apart.
#[test]
fn iot_query_gives_each_device_its_verdict_and_keeps_a_reading_given_before_a_stop() {
    check(
        "iot",
        lines_of(tapio_examples::iot::run),
        &[
            "floor-1: devices [device-1, device-2, device-3, device-4, device-5]",
            "manager: tracking device-1 again gives the same device: true",
            "device-1: recorded 21.5",
            "device-2: recorded 19.0",
            "device-3: calibrating",
            "device-4: calibrating",
            "query 1: asked 5 devices",
            "device-2: passivating",
            "device-3: calibration failed, stopping",
            "query 1: device-1 = 21.5",
            "query 1: device-2 = 19.0",
            "query 1: device-3 = device not available",
            "query 1: device-4 = timed out",
            "query 1: device-5 = no reading yet",
            "floor-1: devices [device-1, device-4, device-5]",
            "device-4: calibrated",
            "device-4: recorded 23.0",
            "query 2: asked 3 devices",
            "query 2: device-1 = 21.5",
            "query 2: device-4 = 23.0",
            "query 2: device-5 = no reading yet",
        ],
    );
}

// S50, S51: a session closes when its client stops, though it only holds the
// client's adapter, and a client's last post goes out before its session closes.
#[test]
fn chat_room_broadcasts_and_closes_a_session_when_its_client_stops() {
    check(
        "chat_room",
        lines_of(tapio_examples::chat_room::run),
        &[
            "ada: joined the room",
            "grace: joined the room",
            "linus: joined the room",
            "ada hears ada: hello, everyone",
            "grace hears ada: hello, everyone",
            "linus hears ada: hello, everyone",
            "ada hears linus: bye for now",
            "grace hears linus: bye for now",
            "session linus: its client stopped, closing",
            "room: linus left, 2 in the room",
            "session grace: its client stopped, closing",
            "room: grace left, 1 in the room",
            "ada hears ada: anyone here?",
        ],
    );
}

/// `line` with every loopback port (`127.0.0.1:40123`) written as `PORT`: the OS
/// picks them anew on every run.
fn without_port(line: &str) -> String {
    const HOST: &str = "127.0.0.1:";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(HOST) {
        let after = &rest[at + HOST.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&rest[..at + HOST.len()]);
        out.push_str(if digits > 0 { "PORT" } else { "" });
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// [`check`], for an example whose lines name loopback ports.
fn check_without_ports(example: &str, returned: Vec<String>, expected: &[&str]) {
    let returned: Vec<String> = returned.iter().map(|line| without_port(line)).collect();
    assert_eq!(returned, expected, "{example}: what `run` returned");
    let printed: Vec<String> = printed_by(example)
        .iter()
        .map(|line| without_port(line))
        .collect();
    assert_eq!(printed, expected, "{example}: what the binary printed");
}

#[test]
fn without_port_hides_every_loopback_port() {
    assert_eq!(
        without_port("at tapio://a@127.0.0.1:4012/user/x and tapio://b@127.0.0.1:80"),
        "at tapio://a@127.0.0.1:PORT/user/x and tapio://b@127.0.0.1:PORT"
    );
    assert_eq!(without_port("no address"), "no address");
}

// S38, S39: the greeting crosses a link between two systems and the answer comes
// back through the reply ref that crossed with it.
#[test]
fn two_nodes_greets_across_a_link() {
    let expected = [
        "home: resolving tapio://away@127.0.0.1:PORT/user/greeter",
        "away: hello, world!",
        "home: world has been greeted",
    ];
    check_without_ports(
        "two_nodes",
        lines_of(tapio_examples::two_nodes::run),
        &expected,
    );
}

// S41: a remote watch hears the worker's whole system stop, at once; the
// coordinator rebuilds the worker as a child of its own and carries on.
#[test]
fn node_failure_rebuilds_the_worker_here_when_its_node_goes() {
    check_without_ports(
        "node_failure",
        lines_of(tapio_examples::node_failure::run),
        &[
            "away: the worker did job 1",
            "home: job 1 came back from away",
            "away: the whole system terminates",
            "home: the worker on away is gone, rebuilding it here",
            "home: the worker did job 2",
            "home: job 2 came back from home",
            "home: the worker did job 3",
            "home: job 3 came back from home",
        ],
    );
}

// S41, S42, S43, S45: a partition gives each live node up on the other (both
// quarantine, both watchers hear Terminated) while both keep serving locally;
// healing repairs nothing; clearing both quarantines and reconnecting does, through
// refs resolved again.
#[test]
fn partition_leaves_both_nodes_wrong_until_somebody_reconnects() {
    check_without_ports(
        "partition",
        lines_of(tapio_examples::partition::run),
        &[
            "away: poked by home, still answering",
            "home: answered by the actor on away",
            "home: poked by away, still answering",
            "away: answered by the actor on home",
            "home: the network between home and away is cut",
            "home: nothing from away for 1s, gave it up: quarantined",
            "away: nothing from home for 1s, gave it up: quarantined",
            "home: told that /user/steady on away has stopped",
            "away: told that /user/steady on home has stopped",
            "home: poked by home, still answering",
            "home: answered by the actor on home",
            "away: poked by away, still answering",
            "away: answered by the actor on away",
            "home: the network is back, and a poke to away is still a dead letter: quarantined",
            "home: cleared the quarantine of away",
            "away: cleared the quarantine of home",
            "home: reconnected to away",
            "home: the old ref to away still dead-letters: its session has ended",
            "away: poked by home, still answering",
            "home: answered by the actor on away",
            "home: poked by away, still answering",
            "away: answered by the actor on home",
        ],
    );
}

/// `line` as `without_port` leaves it, with the share of the work each worker did
/// (`sink-1 did 7`) written as `N`: it depends on whose credit came back first.
fn stable(line: &str) -> String {
    let line = without_port(line);
    let mut out = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(at) = rest.find(" did ") {
        let (head, tail) = rest.split_at(at + " did ".len());
        out.push_str(head);
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push('N');
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// The numbers in `line`, in order.
fn numbers_in(line: &str) -> Vec<u32> {
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().expect("a number"))
        .collect()
}

/// [`check`], for an example whose lines name an address with a port the OS picks.
fn check_without_port(example: &str, returned: Vec<String>, expected: &[&str]) {
    let returned: Vec<String> = returned.iter().map(|line| without_port(line)).collect();
    assert_eq!(returned, expected, "{example}: what `run` returned");
    let printed: Vec<String> = printed_by(example)
        .iter()
        .map(|line| without_port(line))
        .collect();
    assert_eq!(printed, expected, "{example}: what the binary printed");
}

// S46: the worker is started on compute at orders' request and answers through a
// typed ref; it crashes and is restarted over there (the same ref answers, the job
// count starts again); a key compute does not have is refused with its reason;
// orders' overseer watches the worker and hears it retire.
#[test]
fn remote_spawn_starts_a_worker_that_its_own_node_restarts_and_orders_watches() {
    check_without_port(
        "remote_spawn",
        lines_of(tapio_examples::remote_spawn::run),
        &[
            "orders: compute started doubler-1 at tapio://compute@127.0.0.1:PORT/user/spawner/doubler-1",
            "orders: 6 doubled is 12, job 1 for it",
            "orders: 7 doubled is 14, job 1 for it",
            "orders: its count started again; compute restarted it and told orders nothing",
            "orders: compute refused tripler: unknown factory \"tripler\": the spawner's binary has no factory with this key (do both systems run the same code?)",
            "orders: doubler-1 is gone, so the next job needs another worker",
        ],
    );
}

// S47: two workers started on compute each grant three items; the producer sends
// only what it was granted, all twelve items are done, and no worker ever had more
// than its grant outstanding. The split between the two depends on timing, so only
// its sum is asserted.
#[test]
fn worker_pool_remote_never_sends_past_the_grant() {
    let runs = [
        (
            "what `run` returned",
            lines_of(tapio_examples::worker_pool_remote::run),
        ),
        ("what the binary printed", printed_by("worker_pool_remote")),
    ];
    for (what, lines) in runs {
        assert_eq!(lines.len(), 4, "worker_pool_remote, {what}: {lines:?}");
        assert_eq!(
            lines[0], "orders: compute started 2 workers, each granting 3 items at a time",
            "{what}"
        );
        let [1, first, 2, second] = numbers_in(&lines[1])[..] else {
            panic!(
                "{what}: not a split between sink-1 and sink-2: {:?}",
                lines[1]
            );
        };
        assert_eq!(
            lines[1],
            format!("orders: sink-1 did {first} and sink-2 did {second}"),
            "{what}"
        );
        assert_eq!(first + second, 12, "{what}: every item was done once");
        let [12, peak] = numbers_in(&lines[2])[..] else {
            panic!("{what}: not twelve items and a peak: {:?}", lines[2]);
        };
        assert!(
            (1..=3).contains(&peak),
            "{what}: {peak} outstanding at one worker, past its grant of 3"
        );
        assert_eq!(
            lines[2],
            format!("orders: 12 items done, and never more than {peak} outstanding at one worker"),
            "{what}"
        );
        assert_eq!(
            lines[3],
            "orders: the credit was the backpressure; offer would have waited only for room in this node's outbound buffer",
            "{what}"
        );
    }
}
// S44: a remote ask is answered; `Timeout` while the peer is there and nobody
// answers; `Unreachable` for an ask in flight when the peer is given up on, and at
// once for one asked after, both far inside their 30 s deadline; an answer again
// after the explicit repair.
#[test]
fn remote_ask_tells_a_timeout_from_an_unreachable_peer() {
    check_without_ports(
        "remote_ask",
        lines_of(tapio_examples::remote_ask::run),
        &[
            "away: asked \"six times seven\", answering 42",
            "home: six times seven is 42, says away",
            "away: asked \"the meaning of life\", still thinking it over",
            "home: no answer about the meaning of life within 200ms, and away is still there: a timeout",
            "home: the network between home and away is cut",
            "home: nothing from away for 1s, gave it up",
            "away: nothing from home for 1s, gave it up",
            "home: the ask in flight failed then: away is unreachable, long before its 30s deadline",
            "home: asked again allowing 30s: unreachable in under a second, away is quarantined",
            "home: cleared the quarantine on both sides and reconnected",
            "away: asked \"six times seven\", answering 42",
            "home: six times seven is still 42, says away",
        ],
    );
}

// S38, S44: `node` without arguments runs its server and its client in one process
// (`tests/node.rs` runs them as two).
#[test]
fn node_greets_from_a_client_system_of_its_own() {
    check_without_ports(
        "node",
        lines_of(tapio_examples::node::run),
        &[
            "server: listening at tapio://server@127.0.0.1:PORT",
            "server: the greeter is tapio://server@127.0.0.1:PORT/user/greeter",
            "client: asking tapio://server@127.0.0.1:PORT/user/greeter to greet ada",
            "server: hello, ada!",
            "client: ada has been greeted by server",
        ],
    );
}
