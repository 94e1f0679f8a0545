//! `node` as it is meant to be used: a server and a client in two operating-system
//! processes, on loopback, and what it does with arguments that make no sense.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tapio_examples::node::{Command as NodeCommand, parse};

/// The bound of every wait for a process: far longer than anything here takes.
const BOUND: Duration = Duration::from_secs(30);

/// How long building the example may take, when it is not built yet.
const BUILD: Duration = Duration::from_secs(600);

/// The `node` example, built into the target directory of this test (cargo builds
/// examples for `cargo test`, but not for `cargo test --test node`).
fn node() -> PathBuf {
    // Test binaries live in `target/<profile>/deps`; examples in `target/<profile>/examples`.
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("the target profile directory");
    let target = profile.parent().expect("the target directory");
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "-q", "-p", "tapio-examples", "--example", "node"])
        .arg("--target-dir")
        .arg(target)
        .stdin(Stdio::null());
    if profile.file_name().is_some_and(|name| name == "release") {
        build.arg("--release");
    }
    let mut build = Process::spawn("cargo build", &mut build);
    let status = build.wait(BUILD);
    assert!(
        status.success(),
        "cannot build the example: {}",
        build.stderr()
    );
    profile.join("examples").join("node")
}

/// A running process whose stdout is read line by line; killed if dropped before it
/// has exited, so a failing test leaves nothing behind.
struct Process {
    what: String,
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    exited: bool,
}

impl Process {
    fn spawn(what: &str, command: &mut Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("RUST_LOG")
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {what}: {error}"));
        let (send, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Self {
            what: what.to_owned(),
            child,
            lines,
            stderr: Some(stderr),
            exited: false,
        }
    }

    /// `node ARGS`.
    fn node(binary: &Path, args: &[&str]) -> Self {
        Self::spawn(
            &format!("node {}", args.join(" ")),
            Command::new(binary).args(args).stdin(Stdio::null()),
        )
    }

    /// The next line it prints.
    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(BOUND)
            .unwrap_or_else(|error| panic!("{}: no line within {BOUND:?}: {error}", self.what))
    }

    /// Every line it prints until it closes its stdout.
    fn rest(&self) -> Vec<String> {
        let deadline = Instant::now() + BOUND;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => lines.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return lines,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{}: still printing after {BOUND:?}", self.what)
                }
            }
        }
    }

    /// Wait for it to exit, for at most `bound`.
    fn wait(&mut self, bound: Duration) -> ExitStatus {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.child.try_wait().expect("the process's status") {
                self.exited = true;
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} still running after {bound:?}",
                self.what
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What it wrote to stderr; once it has exited.
    fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|reader| reader.join().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Its remaining lines, its exit status and its stderr.
    fn finish(mut self) -> (Vec<String>, ExitStatus, String) {
        let lines = self.rest();
        let status = self.wait(BOUND);
        let stderr = self.stderr();
        (lines, status, stderr)
    }

    /// Ask it to stop, as a service manager would.
    #[cfg(unix)]
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "cannot send SIGTERM to {}", self.what);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `line` with the port of `127.0.0.1:PORT` written as `PORT`.
fn without_port(line: &str) -> String {
    match line.split_once("127.0.0.1:") {
        Some((before, after)) => {
            let rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{before}127.0.0.1:PORT{rest}")
        }
        None => line.to_owned(),
    }
}

// Two processes, one program: the server prints the URI of its greeter, clients in
// processes of their own greet through it, SIGTERM stops the server, and a client
// finds nobody there at once.
#[cfg(unix)]
#[test]
fn a_server_and_its_clients_in_processes_of_their_own() {
    let node = node();
    let server = Process::node(&node, &["serve", "127.0.0.1:0"]);
    assert_eq!(
        without_port(&server.next_line()),
        "server: listening at tapio://server@127.0.0.1:PORT"
    );
    let announced = server.next_line();
    let uri = announced
        .strip_prefix("server: the greeter is ")
        .unwrap_or_else(|| panic!("not the greeter's URI: {announced:?}"))
        .to_owned();
    assert_eq!(
        without_port(&uri),
        "tapio://server@127.0.0.1:PORT/user/greeter"
    );

    for whom in ["ada", "grace"] {
        let (lines, status, stderr) = Process::node(&node, &["greet", &uri, whom]).finish();
        assert!(status.success(), "greet {whom}: {status}: {stderr}");
        assert_eq!(
            lines,
            [
                format!("client: asking {uri} to greet {whom}"),
                format!("client: {whom} has been greeted by server"),
            ]
        );
        assert_eq!(server.next_line(), format!("server: hello, {whom}!"));
    }

    server.terminate();
    let (lines, status, stderr) = server.finish();
    assert!(status.success(), "the server: {status}: {stderr}");
    assert_eq!(lines, ["server: stopped by SIGTERM"]);

    // Nobody listens there now: the client says so at once, and exits with 1.
    let started = Instant::now();
    let (lines, status, stderr) = Process::node(&node, &["greet", &uri, "ada"]).finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(lines, [format!("client: asking {uri} to greet ada")]);
    assert!(
        stderr.contains("could not be reached") && stderr.contains("is `node serve` running"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < tapio_examples::node::PATIENCE,
        "it waited out its deadline"
    );
}

// Arguments that make no sense: the usage on stderr, exit code 2, no panic.
#[test]
fn bad_arguments_print_the_usage_and_exit_with_2() {
    let node = node();
    let cases: &[&[&str]] = &[
        &["bogus"],
        &["serve"],
        &["serve", "7100"],
        &["serve", "127.0.0.1:port"],
        &["serve", "127.0.0.1:7100", "extra"],
        &["greet"],
        &["greet", "http://example.com"],
        &[
            "greet",
            "tapio://server@127.0.0.1:7100/user/greeter",
            "ada",
            "extra",
        ],
    ];
    for args in cases {
        let (lines, status, stderr) = Process::node(&node, args).finish();
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(lines.is_empty(), "{args:?}: {lines:?}");
        assert!(
            stderr.starts_with("node: ") && stderr.contains("usage: node serve HOST:PORT"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let (lines, status, _) = Process::node(&node, &["--help"]).finish();
    assert!(status.success());
    assert!(
        lines[0].starts_with("usage: node serve HOST:PORT"),
        "{lines:?}"
    );
}

#[test]
fn the_command_line_is_read_as_the_usage_says() {
    let args = |args: &[&str]| parse(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    assert_eq!(args(&[]), Ok(NodeCommand::Both));
    assert_eq!(
        args(&["serve", "127.0.0.1:7100"]),
        Ok(NodeCommand::Serve {
            host: "127.0.0.1".into(),
            port: 7100
        })
    );
    assert_eq!(
        args(&["greet", "tapio://server@127.0.0.1:7100/user/greeter"]),
        Ok(NodeCommand::Greet {
            uri: "tapio://server@127.0.0.1:7100/user/greeter".into(),
            whom: "world".into()
        })
    );
    assert_eq!(
        args(&["greet", "tapio://server@127.0.0.1:7100/user/greeter", "ada"]),
        Ok(NodeCommand::Greet {
            uri: "tapio://server@127.0.0.1:7100/user/greeter".into(),
            whom: "ada".into()
        })
    );
    assert_eq!(
        args(&["serve", ":7100"]),
        Err("\":7100\" is not HOST:PORT".into())
    );
    assert_eq!(
        args(&["serve", "127.0.0.1:99999"]),
        Err("\"99999\" is not a port number".into())
    );
    assert_eq!(args(&["hello"]), Err("unknown command \"hello\"".into()));
}
