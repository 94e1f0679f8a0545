//! Links between systems over TCP: the accept loop, one outbound connection per
//! peer dialled on first use, the handshake on both, and frames in both directions.
//!
//! An association with a peer is the connection this system dialled (what it sends
//! travels there, in order, through a bounded outbound queue) and the connection
//! the peer dialled (what it sends arrives there, into `deliver_frame`). Two systems
//! that dial each other at once end with one association each way, not two: each
//! sends only over the connection it dialled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::actor::Address;
use crate::events::DeadLetterReason;
use crate::remote::handshake;
use crate::system::SystemShared;

/// How long a handshake may take, from connect to the last message.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The size of a connection's read and write buffers.
const BUFFER: usize = 64 * 1024;

/// The frames queued for one peer's connection, at most this many.
pub(crate) const OUTBOUND_CAPACITY: usize = 1024;

/// The links of one system.
pub(crate) struct Transport {
    me: Address,
    secret: Vec<u8>,
    /// The queue to each peer's outbound connection.
    outbound: Mutex<HashMap<Address, mpsc::Sender<Vec<u8>>>>,
    /// The tasks to stop when the system terminates.
    tasks: Mutex<Vec<AbortHandle>>,
}

/// Why a frame for a peer was not queued.
pub(crate) enum NotSent {
    /// The outbound queue is full.
    Full,
    /// The system is terminating.
    Closed,
}

impl Transport {
    /// The transport of the system `system`, accepting links on `listener`.
    pub(crate) fn start(
        system: &Arc<SystemShared>,
        listener: std::net::TcpListener,
        secret: Vec<u8>,
    ) -> std::io::Result<Arc<Self>> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let transport = Arc::new(Self {
            me: system.address().clone(),
            secret,
            outbound: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
        });
        let accepting = tokio::spawn(accept_loop(
            listener,
            Arc::downgrade(system),
            Arc::downgrade(&transport),
        ));
        transport.keep(accepting.abort_handle());
        Ok(transport)
    }

    fn keep(&self, task: AbortHandle) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }

    /// Queue `frame` for `peer`, dialling it first if there is no connection yet.
    pub(crate) fn send(
        self: &Arc<Self>,
        system: &Arc<SystemShared>,
        peer: &Address,
        frame: Vec<u8>,
    ) -> Result<(), NotSent> {
        if system.is_terminating() {
            return Err(NotSent::Closed);
        }
        let mut outbound = self.outbound.lock().unwrap_or_else(|p| p.into_inner());
        let queue = outbound.entry(peer.clone()).or_insert_with(|| {
            let (queue, frames) = mpsc::channel(OUTBOUND_CAPACITY);
            let task = tokio::spawn(dial(
                peer.clone(),
                frames,
                Arc::downgrade(system),
                Arc::downgrade(self),
            ));
            self.keep(task.abort_handle());
            queue
        });
        queue.try_send(frame).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => NotSent::Full,
            mpsc::error::TrySendError::Closed(_) => NotSent::Closed,
        })
    }

    /// The connection to `peer` ended (or never came): the next send dials again.
    fn forget(&self, peer: &Address) {
        self.outbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(peer);
    }

    /// Stop every link: the system has terminated.
    pub(crate) fn stop(&self) {
        self.outbound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            task.abort();
        }
    }
}

/// Accept links, each handshaken and then read in a task of its own.
async fn accept_loop(
    listener: TcpListener,
    system: Weak<SystemShared>,
    transport: Weak<Transport>,
) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let Some(links) = transport.upgrade() else {
            return;
        };
        let system = system.clone();
        let (secret, me) = (links.secret.clone(), links.me.clone());
        let reading = tokio::spawn(async move {
            let handshake = tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                handshake::accept(&mut stream, &secret, &me),
            )
            .await;
            match handshake {
                Ok(Ok(peer)) => read_frames(stream, peer, system).await,
                Ok(Err(error)) => tracing::debug!(%error, "link refused"),
                Err(_) => tracing::debug!("link refused: the handshake timed out"),
            }
        });
        links.keep(reading.abort_handle());
    }
}

/// Read frames from `peer` and deliver them, until the connection ends. A frame
/// that announces more than the system's limit ends the connection: what follows
/// its prefix cannot be framed any more.
async fn read_frames(stream: TcpStream, peer: Address, system: Weak<SystemShared>) {
    // Frames are read out of a buffer: many small frames cost one read.
    let mut stream = BufReader::with_capacity(BUFFER, stream);
    loop {
        let mut prefix = [0; 4];
        if stream.read_exact(&mut prefix).await.is_err() {
            return;
        }
        let Some(shared) = system.upgrade() else {
            return;
        };
        let limits = shared.wire_limits();
        let length = u32::from_be_bytes(prefix) as usize;
        if length > limits.max_frame {
            // Refused as a frame, and the connection with it.
            let _ = crate::wire::deliver_frame(&shared, &peer, &prefix);
            return;
        }
        let mut frame = vec![0; 4 + length];
        frame[..4].copy_from_slice(&prefix);
        if stream.read_exact(&mut frame[4..]).await.is_err() {
            return;
        }
        // Every problem is a dead letter naming the peer; the link goes on.
        let _ = crate::wire::deliver_frame(&shared, &peer, &frame);
    }
}

/// Dial `peer`, handshake, then write what is queued for it, in order. When the
/// peer cannot be reached, what is queued becomes dead letters naming it.
async fn dial(
    peer: Address,
    mut frames: mpsc::Receiver<Vec<u8>>,
    system: Weak<SystemShared>,
    transport: Weak<Transport>,
) {
    let connected = async {
        let (host, port) = peer
            .host_port()
            .ok_or_else(|| "it has no host and port".to_owned())?;
        let mut stream = TcpStream::connect((host, port))
            .await
            .map_err(|error| error.to_string())?;
        let links = transport
            .upgrade()
            .ok_or_else(|| "the system has terminated".to_owned())?;
        handshake::dial(&mut stream, &links.secret, &links.me)
            .await
            .map_err(|error| error.to_string())?;
        Ok::<_, String>(stream)
    };
    let stream = tokio::time::timeout(HANDSHAKE_TIMEOUT, connected)
        .await
        .unwrap_or_else(|_| Err("the handshake timed out".into()));
    let mut stream = match stream {
        Ok(stream) => stream,
        Err(error) => {
            tracing::debug!(%peer, %error, "cannot link");
            if let Some(links) = transport.upgrade() {
                links.forget(&peer);
            }
            give_up(frames, &system, || DeadLetterReason::Unreachable {
                peer: peer.clone(),
            })
            .await;
            return;
        }
    };
    // Frames queued together go out in one write: a burst costs a few syscalls,
    // not one per message.
    let mut out = BufWriter::with_capacity(BUFFER, &mut stream);
    while let Some(frame) = frames.recv().await {
        let mut written = out.write_all(&frame).await;
        while written.is_ok()
            && let Ok(next) = frames.try_recv()
        {
            written = out.write_all(&next).await;
        }
        if written.is_err() || out.flush().await.is_err() {
            if let Some(shared) = system.upgrade() {
                lost(
                    &shared,
                    DeadLetterReason::ConnectionLost { peer: peer.clone() },
                );
            }
            break;
        }
    }
    // The next send dials again.
    if let Some(links) = transport.upgrade() {
        links.forget(&peer);
    }
    give_up(frames, &system, || DeadLetterReason::ConnectionLost {
        peer: peer.clone(),
    })
    .await;
}

/// What was queued for a peer that cannot be reached, or whose connection broke:
/// dead letters naming it, with `reason`.
async fn give_up(
    mut frames: mpsc::Receiver<Vec<u8>>,
    system: &Weak<SystemShared>,
    reason: impl Fn() -> DeadLetterReason,
) {
    frames.close();
    while let Some(_frame) = frames.recv().await {
        if let Some(shared) = system.upgrade() {
            lost(&shared, reason());
        }
    }
}

/// A frame for a peer that went nowhere, for `reason` (which names the peer).
fn lost(system: &SystemShared, reason: DeadLetterReason) {
    system.dead_letter_of_type("frame", &system.root_path(), reason);
}
