//! The target of an ask: a cell with no task, whose lane takes exactly one answer and
//! hands it to whoever awaits the ask.

use std::sync::Arc;

use tokio::sync::oneshot;

use crate::actor::{CellCore, LocalCell, Parent};
use crate::mailbox::{AnswerSlot, UserLane};
use crate::message::Message;
use crate::system::SystemShared;

/// A promise at `/system/promises/{uid}`, and the receiving end of its answer.
///
/// No registry knows of it: it lives as long as a ref to it does (in the request, in
/// the answering actor, in a dead letter). Its system lane is closed from the start,
/// so it counts as stopped: watching it reports `Terminated` at once. An answer nobody
/// waits for any more, or a second answer, becomes a dead letter.
pub(crate) fn promise<R: Message>(
    system: &Arc<SystemShared>,
) -> (Arc<LocalCell<R>>, oneshot::Receiver<R>) {
    let (sender, receiver) = oneshot::channel();
    let uid = system.next_uid();
    let path = system.promises_path().child(&uid.to_string());
    let core = CellCore::new(path, uid, system.clone(), Parent::System);
    core.set_stopping();
    core.lane().close();
    let cell = Arc::new(LocalCell {
        core,
        user: UserLane::answer(AnswerSlot::new(sender, system.clone())),
    });
    (cell, receiver)
}
