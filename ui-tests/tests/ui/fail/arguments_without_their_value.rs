// An argument written without its value (or with one where none goes) is refused on
// its name, saying how it is written and what it says; before, syn's bare
// "expected `=`" or "expected parentheses". Nothing follows from it: an actor with
// a refused argument, or a state whose policy is refused, is still generated.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct A;

#[actor(protocol)]
impl A {
    fn ping(&mut self, _: Ping) {}
}

pub struct B;

#[actor(vis)]
impl B {
    fn ping(&mut self, _: Ping) {}
}

pub struct C;

#[actor(helpers(CRef))]
impl C {
    fn ping(&mut self, _: Ping) {}
}

pub struct D;

#[actor(helpers)]
impl D {
    #[handler(helper)]
    fn ping(&mut self, _: Ping) {}
    #[handler(no_helper = true)]
    fn pong(&mut self, _: u64) {}
    #[handler(variant)]
    fn text(&mut self, _: String) {}
}

pub struct E;

#[actor(messages, states(Open))]
impl E {}

pub struct F;

#[actor(messages(Ping), states)]
impl F {}

pub struct G;

#[actor(messages(Ping), states(Waiting), stash_capacity)]
impl G {}

pub struct Waiting;

#[state(G, unhandled)]
impl Waiting {}

pub struct H;

#[actor(messages(Ping), states(Idle), stash_capacity = "16")]
impl H {}

pub struct Idle;

#[state(H)]
impl Idle {}

#[tapio::test(start_paused)]
async fn paused() {}

#[tapio::test(worker_threads)]
async fn threads() {}

#[tapio::test(shutdown_timeout_ms)]
async fn deadline() {}

fn main() {}
