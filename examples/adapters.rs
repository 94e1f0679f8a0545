//! Talking to a service that speaks its own protocol, through a message adapter.
//!
//! Concepts: `ctx.try_message_adapter`, a reply ref of a foreign message type, and a
//! translation that fails as the failure of the actor doing the translating.
//!
//! The price service answers every quote with a `Price`, in its own vocabulary: the
//! symbol and the price as text. The portfolio does not want `Price` in its protocol:
//! widening it would let anyone send a portfolio a price. So the portfolio hands the
//! service an adapter, a ref of type `ActorRef<Price>` whose messages come back to the
//! portfolio translated into its own `Priced`. The translation runs inside the
//! portfolio, in order with the rest of its messages, so a price that cannot be read
//! is the portfolio's failure, not the service's: the portfolio's supervision
//! restarts it, and the service never notices.
//!
//! What to watch in the output: the first quote is translated and valued. The second
//! is not a price at all; the portfolio says so, fails, and is restarted (a second
//! incarnation). The third quote, asked by the new incarnation through its own
//! adapter, is valued as the first was.
//!
//! Run it with `cargo run --example adapters`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// What the price service answers: its own protocol, not the portfolio's.
#[message]
pub struct Price {
    /// The symbol quoted.
    pub symbol: String,
    /// The price, as the service writes it: `"12.50"`, or `"n/a"`.
    pub text: String,
}

/// What the price service accepts.
#[message]
pub struct Quote {
    /// The symbol to quote.
    pub symbol: String,
    /// Where the `Price` goes.
    pub reply_to: ActorRef<Price>,
}

/// The portfolio's own protocol.
#[message]
pub enum Portfolio {
    /// Find out what a symbol is worth.
    Value(String),
    /// A price, translated from the service's `Price` by the adapter.
    Priced {
        /// The symbol.
        symbol: String,
        /// Its price in cents.
        cents: u64,
    },
}

/// A price the portfolio cannot read: the portfolio's failure.
#[derive(Debug)]
pub struct UnreadablePrice {
    /// The symbol quoted.
    pub symbol: String,
    /// What the service sent.
    pub text: String,
}

impl std::fmt::Display for UnreadablePrice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the quote for {} is not a price: {:?}",
            self.symbol, self.text
        )
    }
}

impl std::error::Error for UnreadablePrice {}

/// A price service, answering in its own vocabulary.
pub fn prices(lines: Lines) -> Behavior<Quote> {
    Behaviors::receive_message(move |quote: Quote| {
        lines.push(format!("prices: quoting {}", quote.symbol));
        let text = if quote.symbol == "ACME" {
            "12.50"
        } else {
            "n/a"
        };
        quote.reply_to.tell(Price {
            symbol: quote.symbol,
            text: text.into(),
        });
    })
    .into()
}

/// `"12.50"` in cents.
fn cents(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.')?;
    let whole: u64 = whole.parse().ok()?;
    let fraction: u64 = fraction.parse().ok()?;
    (fraction < 100).then(|| whole * 100 + fraction)
}

/// The portfolio: asks the service through an adapter, and is restarted when a
/// translation fails. `changed` is marked after each thing it says.
pub fn portfolio(service: ActorRef<Quote>, lines: Lines, changed: Tally) -> Behavior<Portfolio> {
    let incarnation = Arc::new(AtomicU32::new(0));
    let portfolio = Behaviors::setup(move |ctx| {
        let n = incarnation.fetch_add(1, Ordering::SeqCst) + 1;
        lines.push(format!("portfolio: ready (incarnation {n})"));
        changed.mark();
        let said = (lines.clone(), changed.clone());
        // Runs inside the portfolio, each time the service answers.
        let prices = ctx.try_message_adapter(move |price: Price| match cents(&price.text) {
            Some(cents) => Ok(Portfolio::Priced {
                symbol: price.symbol,
                cents,
            }),
            None => {
                said.0.push(format!(
                    "portfolio: cannot read the price of {} ({:?}), failing",
                    price.symbol, price.text
                ));
                Err(UnreadablePrice {
                    symbol: price.symbol,
                    text: price.text,
                })
            }
        });
        let service = service.clone();
        let lines = lines.clone();
        let changed = changed.clone();
        Behaviors::receive_message(move |message: Portfolio| match message {
            Portfolio::Value(symbol) => service.tell(Quote {
                symbol,
                reply_to: prices.clone(),
            }),
            Portfolio::Priced { symbol, cents } => {
                lines.push(format!("portfolio: {symbol} is worth {cents} cents"));
                changed.mark();
            }
        })
    });
    Behaviors::supervise(portfolio)
        .on_failure::<UnreadablePrice>(SupervisorStrategy::restart())
        .into()
}

/// Run the example: the lines the service and the portfolio wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let changed = Tally::default();
    let system = ActorSystem::new("adapters")?;
    let service = system.spawn(prices(lines.clone()), "prices")?;
    let holdings = system.spawn(
        portfolio(service, lines.clone(), changed.clone()),
        "portfolio",
    )?;
    changed.reached(1).await;
    for symbol in ["ACME", "JUNK", "ACME"] {
        holdings.tell(Portfolio::Value(symbol.into()));
        // Valued, or restarted: either way, one thing said.
        changed.reached(1).await;
    }
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
