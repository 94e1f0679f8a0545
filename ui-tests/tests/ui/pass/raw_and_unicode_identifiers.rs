// Raw and non-ASCII identifiers as message, actor, field and handler names compile,
// with typed helpers.
#![deny(warnings)]
use tapio::prelude::*;

#[message]
pub struct Größe {
    pub wert: u64,
}

#[allow(non_camel_case_types)]
#[message]
pub struct r#type;

#[derive(Default)]
pub struct Zähler {
    pub stand: u64,
}

#[actor(helpers)]
impl Zähler {
    fn größe(&mut self, m: Größe) {
        self.stand += m.wert;
    }
    fn r#match(&mut self, _: r#type) {}
}

fn main() {
    let _ = |r: ActorRef<ZählerMsg>| {
        r.größe(1);
        r.r#match();
    };
}
