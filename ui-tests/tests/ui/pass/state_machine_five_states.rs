// A five-state protocol: states that carry data which is not `Clone` (a oneshot
// sender, a boxed buffer), a self-loop, a state that stashes, and two terminal
// paths (`Done` stops, `Failed` stays until told to stop). Compiles without warnings.
#![deny(warnings, unused_qualifications)]

use tapio::prelude::*;
use tokio::sync::oneshot;

#[message]
pub struct Begin(pub u32);
#[message]
pub struct Chunk(pub Vec<u8>);
#[message(reply = usize)]
pub struct Finish;
#[message]
pub struct Abort;

pub struct Upload {
    pub uploads: u32,
}

#[actor(
    messages(Begin, Chunk, Finish, Abort),
    states(
        Idle => Receiving | Failed,
        Receiving => Receiving | Sealing | Failed,
        Sealing => Done,
        Done,
        Failed,
    ),
    stash_capacity = 16
)]
impl Upload {}

pub struct Idle {
    pub announce: oneshot::Sender<u32>,
}

#[state(Upload)]
impl Idle {
    fn begin(self, upload: &mut Upload, message: Begin) -> Next<Self> {
        upload.uploads += 1;
        let _ = self.announce.send(message.0);
        Next::to(Receiving { buffer: Box::new(Vec::new()) })
    }

    fn abort(self, _: Abort) -> Next<Self> {
        Next::to(Failed)
    }
}

pub struct Receiving {
    pub buffer: Box<Vec<u8>>,
}

#[state(Upload)]
impl Receiving {
    // The self-loop: a switch to the same state, with the data moved along.
    fn chunk(mut self, message: Chunk) -> Next<Self> {
        self.buffer.extend(message.0);
        Next::to(self)
    }

    fn finish(self, ctx: &mut Ctx<Upload>, _: Finish) -> (usize, Next<Self>) {
        let _ = ctx.path();
        (self.buffer.len(), Next::to(Sealing { size: self.buffer.len() }))
    }

    fn abort(self, _: Abort) -> Result<Next<Self>, std::io::Error> {
        Ok(Next::to(Failed))
    }
}

pub struct Sealing {
    pub size: usize,
}

#[state(Upload, unhandled = stash)]
impl Sealing {
    #[on_entry]
    fn sealed(&mut self, ctx: &mut Ctx<Upload>) {
        ctx.self_ref().tell(Abort);
    }

    fn abort(self, _: Abort) -> Next<Self> {
        let _ = self.size;
        Next::to(Done)
    }
}

pub struct Done;

#[state(Upload)]
impl Done {
    #[on_entry]
    fn done(&mut self, ctx: &mut Ctx<Upload>) {
        ctx.self_ref().tell(Abort);
    }

    fn abort(self, _: Abort) -> Next<Self> {
        Next::stop()
    }
}

pub struct Failed;

#[state(Upload)]
impl Failed {
    async fn abort(self, _: Abort) -> Next<Self> {
        Next::stop()
    }

    #[otherwise]
    fn ignore(&mut self, message: UploadMsg) {
        let _ = message;
    }
}

fn main() {
    let (announce, _heard) = oneshot::channel();
    let _machine: Machine<Upload> = Machine::new(Upload { uploads: 0 }, Idle { announce });
    let _ = Upload::STATE_GRAPH_DOT;
}
