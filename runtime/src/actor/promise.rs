//! The target of an ask: a ref that takes exactly one answer and hands it to whoever
//! awaits the ask.

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::oneshot;

use crate::actor::{ActorPath, Address, CellCore, LocalCell, Parent};
use crate::events::DeadLetterReason;
use crate::mailbox::UserLane;
use crate::message::Message;
use crate::system::SystemShared;

/// One pending answer. No registry knows of it: it lives as long as a ref to it
/// does (in the request, in the answering actor, in a dead letter).
pub(crate) struct Promise<R: Message> {
    answer: Mutex<Option<oneshot::Sender<R>>>,
    uid: u64,
    system: Arc<SystemShared>,
    /// A cell with no task and closed lanes, made only when the promise is named (its
    /// path printed, its ref erased): what it is as an actor.
    shadow: OnceLock<Arc<LocalCell<R>>>,
}

impl<R: Message> Promise<R> {
    /// A promise, and the receiving end of its answer.
    pub(crate) fn new(system: &Arc<SystemShared>) -> (Arc<Self>, oneshot::Receiver<R>) {
        let (sender, receiver) = oneshot::channel();
        system.promise_created();
        let promise = Arc::new(Self {
            answer: Mutex::new(Some(sender)),
            uid: system.next_uid(),
            system: system.clone(),
            shadow: OnceLock::new(),
        });
        (promise, receiver)
    }

    pub(crate) fn uid(&self) -> u64 {
        self.uid
    }

    /// The promise as an actor: `/system/promises/{uid}`, stopped from the start, so
    /// watching it reports `Terminated` at once.
    pub(crate) fn shadow(&self) -> &Arc<LocalCell<R>> {
        self.shadow.get_or_init(|| {
            let path = ActorPath::root(Address::local(self.system.name()))
                .child("system")
                .child("promises")
                .child(&self.uid.to_string());
            let core = CellCore::new(path, self.uid, self.system.clone(), Parent::System);
            let cell = Arc::new(LocalCell {
                core,
                user: UserLane::new(),
            });
            cell.core.set_stopping();
            cell.core.lane().close();
            let _ = cell.user.close();
            cell
        })
    }

    pub(crate) fn core(&self) -> &CellCore {
        &self.shadow().core
    }

    /// Hand the answer to the asker. An answer nobody waits for any more (the ask
    /// timed out, or was dropped), or a second answer, is a dead letter.
    pub(crate) fn deliver(&self, answer: R) {
        let sender = self
            .answer
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        let (answer, reason) = match sender {
            Some(sender) => match sender.send(answer) {
                Ok(()) => return,
                Err(answer) => (answer, DeadLetterReason::AskEnded),
            },
            None => (answer, DeadLetterReason::AlreadyAnswered),
        };
        self.system
            .dead_letter(answer.into_payload(), self.core().path(), reason);
    }
}

impl<R: Message> Drop for Promise<R> {
    fn drop(&mut self) {
        self.system.promise_dropped();
    }
}
