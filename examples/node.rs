//! One program, started twice: two operating-system processes talking over TCP.
//!
//! Concepts: a system that listens on a port you choose (`RemoteSettings::bind`), a
//! URI as the only thing one process needs to know about the other, `ask_with`
//! across a real socket, and stopping a server on SIGINT or SIGTERM.
//!
//! Every other remoting example runs both systems in one process. This one does not
//! have to: start the server in one terminal and greet it from another.
//!
//! ```sh
//! cargo run --example node -- serve 127.0.0.1:7100
//! cargo run --example node -- greet tapio://server@127.0.0.1:7100/user/greeter ada
//! ```
//!
//! The server prints the URI of its greeter; the client needs nothing else. The
//! client is a system too, listening on a loopback port the OS picks, because the
//! answer comes back to it over a link of its own. Both stay on loopback, the one
//! place a system may listen without a shared secret. Stop the server with Ctrl-C.
//!
//! What to watch in the output: the server's `hello` line is printed in the server's
//! terminal, and the client's answer in the client's. Nothing but bytes on a socket
//! connects them. Greet a server that is not running, and the client says so at
//! once instead of waiting out its deadline.
//!
//! Without arguments it runs both ends in this one process, as the tour does.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio_examples::support::{self, ExampleError, Lines};
// The same two messages as `two_nodes`: both ends run this program, so both
// register them under the same keys.
use tapio_examples::two_nodes_messages::{Greet, Greeted};

/// How `node` is used.
pub const USAGE: &str = "\
usage: node serve HOST:PORT     listen at HOST:PORT and greet whoever asks, until Ctrl-C
       node greet URI [NAME]    ask the greeter at URI (as `serve` prints it) to greet NAME
       node                     both ends in this one process";

/// How long the client waits for its answer.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Listen at `host:port` and greet whoever asks.
    Serve {
        /// The host to listen on.
        host: String,
        /// The port (0: the OS picks).
        port: u16,
    },
    /// Ask the greeter at `uri` to greet `whom`.
    Greet {
        /// The greeter's URI, as the server prints it.
        uri: String,
        /// Who to greet.
        whom: String,
    },
    /// Both ends, in this one process.
    Both,
}

/// Read the arguments (without the program's name).
///
/// # Errors
///
/// What is wrong with them, to print above [`USAGE`].
pub fn parse(args: &[String]) -> Result<Command, String> {
    match args {
        [] => Ok(Command::Both),
        [serve, address] if serve == "serve" => {
            let (host, port) = address
                .rsplit_once(':')
                .filter(|(host, _)| !host.is_empty())
                .ok_or_else(|| format!("{address:?} is not HOST:PORT"))?;
            let port = port
                .parse::<u16>()
                .map_err(|_| format!("{port:?} is not a port number"))?;
            Ok(Command::Serve {
                host: host.to_owned(),
                port,
            })
        }
        [greet, uri, rest @ ..] if greet == "greet" && rest.len() <= 1 => {
            if !uri.starts_with("tapio://") {
                return Err(format!(
                    "{uri:?} is not an actor URI (tapio://system@host:port/user/name)"
                ));
            }
            Ok(Command::Greet {
                uri: uri.clone(),
                whom: rest.first().cloned().unwrap_or_else(|| "world".to_owned()),
            })
        }
        [command, ..] if command == "serve" || command == "greet" => {
            Err(format!("wrong arguments for `{command}`"))
        }
        [other, ..] => Err(format!("unknown command {other:?}")),
    }
}

/// Where a role writes its lines: printed as they happen by the program, collected
/// by [`run`].
pub type Out = Arc<dyn Fn(String) + Send + Sync>;

/// Print each line at once: a server runs until it is stopped.
pub fn printing() -> Out {
    Arc::new(|line| support::print(&[line]))
}

/// Collect each line in `lines`.
pub fn recording(lines: Lines) -> Out {
    Arc::new(move |line| lines.push(line))
}

/// The greeter, exactly as in `two_nodes`.
fn greeter(out: Out) -> Behavior<Greet> {
    Behaviors::receive_message(move |greet: Greet| {
        out(format!("server: hello, {}!", greet.whom));
        greet.reply_to.tell(Greeted { whom: greet.whom });
    })
    .into()
}

/// The server: a system named `server` with a greeter at `/user/greeter`.
#[derive(Debug)]
pub struct Server {
    system: ActorSystem,
    greeter: ActorRef<Greet>,
}

impl Server {
    /// Listen at `host:port` (port 0: the OS picks) and start the greeter, which
    /// writes to `out`.
    ///
    /// # Errors
    ///
    /// When the system cannot listen there: the port is taken, or the host is not
    /// loopback (beyond loopback a shared secret is needed, and this example sets
    /// none).
    pub fn start(host: &str, port: u16, out: Out) -> Result<Self, ExampleError> {
        let system = ActorSystem::builder("server")
            .remote(RemoteSettings::bind(host, port))
            .build()?;
        let greeter = system.spawn(greeter(out), "greeter")?;
        Ok(Self { system, greeter })
    }

    /// The URI a client greets.
    pub fn greeter_uri(&self) -> String {
        self.greeter.path().to_uri()
    }

    /// Say where the server listens, and what to greet.
    pub fn announce(&self, out: &Out) {
        out(format!("server: listening at {}", self.system.address()));
        out(format!("server: the greeter is {}", self.greeter_uri()));
    }

    /// Stop the server.
    pub async fn stop(self) {
        self.system.terminate().await;
    }
}

/// Serve until SIGINT or SIGTERM, printing as it goes.
///
/// # Errors
///
/// As [`Server::start`], and when the signal handlers cannot be installed.
pub async fn serve(host: &str, port: u16) -> Result<(), ExampleError> {
    let out = printing();
    let server = Server::start(host, port, out.clone())?;
    // Installed before the address is printed, so a signal sent by whoever read
    // it is not missed.
    let signals = server.system.shutdown_on_signals()?;
    server.announce(&out);
    let signal = signals.wait().await;
    out(format!("server: stopped by {signal}"));
    Ok(())
}

/// Ask the greeter at `uri` to greet `whom`, from a client system of its own.
///
/// # Errors
///
/// When the URI does not name an actor, and when no answer comes: the server is not
/// there (at once), or does not answer within [`PATIENCE`].
pub async fn greet(uri: &str, whom: &str, out: Out) -> Result<(), ExampleError> {
    // The client listens too, on a port the OS picks: the answer comes back over a
    // link the server dials to it.
    let client = ActorSystem::builder("client")
        .remote(RemoteSettings::loopback())
        .build()?;
    let asked = ask(&client, uri, whom, &out).await;
    client.terminate().await;
    asked
}

async fn ask(client: &ActorSystem, uri: &str, whom: &str, out: &Out) -> Result<(), ExampleError> {
    let greeter = client.resolve::<Greet>(uri)?;
    let server = greeter.path().address().system().to_owned();
    out(format!("client: asking {uri} to greet {whom}"));
    // When nobody listens there, the ask fails at once: the link gave its request
    // up (`AskError::Unreachable`), long before the deadline.
    let answer = greeter
        .ask_with(|reply_to| Greet {
            whom: whom.to_owned(),
            reply_to,
        })
        .timeout(PATIENCE)
        .await;
    match answer {
        Ok(greeted) => {
            out(format!(
                "client: {} has been greeted by {server}",
                greeted.whom
            ));
            Ok(())
        }
        Err(tapio::AskError::Unreachable { .. }) => Err(format!(
            "cannot greet at {uri}: {server} could not be reached; is `node serve` running there?"
        )
        .into()),
        Err(error) => Err(error.into()),
    }
}

/// Run both ends in this one process, the server on a loopback port the OS picks:
/// the lines both wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let out = recording(lines.clone());
    let server = Server::start("127.0.0.1", 0, out.clone())?;
    server.announce(&out);
    greet(&server.greeter_uri(), "ada", out).await?;
    server.stop().await;
    Ok(lines.snapshot())
}

/// Do what the command line asks; print the usage and exit with 2 when it makes no
/// sense, and exit with 1 when what it asks for fails.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> ExitCode {
    support::init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if matches!(args.first().map(String::as_str), Some("-h" | "--help")) {
        support::print(&[USAGE.to_owned()]);
        return ExitCode::SUCCESS;
    }
    let command = match parse(&args) {
        Ok(command) => command,
        Err(why) => {
            eprintln!("node: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let done = match command {
        Command::Both => run().await.map(|lines| support::print(&lines)),
        Command::Serve { host, port } => serve(&host, port).await,
        Command::Greet { uri, whom } => greet(&uri, &whom, printing()).await,
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("node: {error}");
            ExitCode::FAILURE
        }
    }
}
