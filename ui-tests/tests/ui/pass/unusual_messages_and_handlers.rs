// Valid shapes a user may reach for: a const-generic message and one with a where
// clause, both with typed helpers; a request answered with itself; handlers that
// are `pub`, async with a context, or take `&self`; a request with a unit reply.
#![deny(warnings)]

use tapio::prelude::*;

#[message]
pub struct Buf<const N: usize>(pub [u8; N]);

#[message]
pub struct Tagged<T>
where
    T: Clone,
{
    pub tag: T,
}

#[message(reply = Echo)]
pub struct Echo {
    pub n: u32,
}

#[message(reply = ())]
pub struct Flush;

#[derive(Default)]
pub struct Store {
    seen: usize,
}

#[actor(helpers)]
impl Store {
    pub fn buf(&mut self, Buf(bytes): Buf<4>) {
        self.seen += bytes.len();
    }

    pub(crate) async fn tagged(&mut self, ctx: &mut Ctx<Self>, message: Tagged<String>) {
        let _ = ctx;
        self.seen += message.tag.len();
    }

    fn echo(&self, message: Echo) -> Echo {
        message
    }

    fn flush(&mut self, _: Flush) {
        self.seen = 0;
    }
}

fn main() {
    let _ = |store: ActorRef<StoreMsg>| async move {
        store.buf([1, 2, 3, 4]);
        store.tagged(String::from("x"));
        let echoed: Echo = store.echo(7).await?;
        store.flush().await?;
        Ok::<u32, tapio::AskError>(echoed.n)
    };
}
