// Messages of every shape compile, with their typed helpers: unit, empty braced, enums
// with discriminants, an empty enum, a generic request with a default and a where
// clause, a const generic, raw identifiers as fields, patterns as parameters.
#![deny(warnings)]
use tapio::prelude::*;

/// A unit struct.
#[message]
pub struct Unit;
/// An empty braced struct.
#[message]
pub struct Braced {}
/// An enum with discriminants.
#[message]
#[derive(Clone, Copy)]
pub enum Level {
    Low = 1,
    High = 10,
}
/// An empty enum.
#[message]
pub enum Never {}
/// A generic message with a where clause and a default.
#[message(reply = T)]
pub struct Echo<T = u64>
where
    T: Message + Clone,
{
    pub value: T,
}
/// A const generic.
#[message]
pub struct Buf<const N: usize>(pub [u8; N]);
/// Raw identifiers as fields.
#[message]
pub struct Typed {
    pub r#type: u64,
    pub r#match: String,
}
/// A plain message, for an async handler taking the context.
#[message]
pub struct Pending {
    pub count: u64,
}

#[derive(Clone, Default)]
pub struct Shapes {
    pub seen: u64,
}

#[actor(helpers)]
impl Shapes {
    /// Doc comment on a handler.
    fn unit(&mut self, _: Unit) {
        self.seen += 1;
    }
    fn braced(&mut self, Braced {}: Braced) {}
    fn level(&mut self, level: Level) {
        self.seen += level as u64;
    }
    #[handler(no_helper)]
    fn never(&mut self, never: Never) {
        match never {}
    }
    fn echo(&mut self, Echo { value }: Echo<u64>) -> u64 {
        value
    }
    fn buf(&mut self, _: Buf<4>) {}
    fn typed(&mut self, Typed { r#type, r#match }: Typed) {
        let _ = (r#type, r#match);
    }
    async fn pending(&mut self, ctx: &mut Ctx<Self>, _: Pending) {
        let _ = ctx;
    }
}

#[tapio::test]
async fn all(system: ActorSystem) {
    let r = system.spawn(Shapes::default(), "shapes").unwrap();
    r.unit();
    r.braced();
    r.level(Level::High);
    assert_eq!(r.echo(7).await.unwrap(), 7);
    r.buf([1, 2, 3, 4]);
    r.typed(1, String::new());
    r.pending(3);
}

fn main() {}
