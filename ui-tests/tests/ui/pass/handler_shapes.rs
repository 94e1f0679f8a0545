// Handler shapes that compile: `&self`, a `Result` with a boxed error for a request,
// `&mut ActorContext<P>` as the context, a pattern as the message, a where clause on
// the block, a handler under `cfg` whose message does not exist, a signal handler.
#![deny(warnings)]
use tapio::prelude::*;
#[message(reply = u64)]
pub struct Get;
#[message(reply = u64)]
pub struct TryGet;
#[message]
pub struct Ping;
pub struct P {
    n: u64,
}
#[actor]
impl P
where
    Self: Sized,
{
    fn get(&self, _: Get) -> u64 {
        self.n
    }
    fn try_get(&mut self, _: TryGet) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.n)
    }
    async fn ping(&mut self, ctx: &mut ActorContext<PMsg>, Ping: Ping) {
        let _ = ctx;
        self.n += 1;
    }
    #[cfg(any())]
    fn gone(&mut self, _: DoesNotExist) {}
    #[signal]
    fn on_signal(&mut self, _: &Signal) {}
}
fn main() {}
