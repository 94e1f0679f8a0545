//! The messages of the `remote_ask` example, registered for the wire once (see
//! `two_nodes_messages`).

use tapio::prelude::*;

/// What the oracle says.
#[message(remote = "example.remote_ask.answer.v1")]
pub struct Answer {
    /// The question answered.
    pub question: String,
    /// The answer.
    pub answer: String,
}

/// A question, and the ref the answer goes to. `ask_with` fills `reply_to` in with
/// a promise on the asking node, exported while the asker waits so that an answer
/// coming back over the link finds it.
#[message(remote = "example.remote_ask.question.v1")]
pub struct Question {
    /// The question.
    pub text: String,
    /// Where the answer goes.
    pub reply_to: ActorRef<Answer>,
}
