//! Tests of the event stream: subscriptions, capacity and loss.
use super::*;

#[test]
fn each_subscriber_of_a_type_gets_each_event_and_others_do_not() {
    let stream = EventStream::default();
    let mut a = stream.subscribe::<u32>();
    let mut b = stream.subscribe::<u32>();
    let mut other = stream.subscribe::<String>();
    assert_eq!(stream.publish(7_u32), 2);
    assert_eq!(a.try_recv(), Some(7));
    assert_eq!(b.try_recv(), Some(7));
    assert_eq!(other.try_recv(), None);
}

#[test]
fn a_dropped_or_unsubscribed_subscription_receives_nothing_more() {
    let stream = EventStream::default();
    let a = stream.subscribe::<u32>();
    let b = stream.subscribe::<u32>();
    assert_eq!(stream.subscriber_count::<u32>(), 2);
    a.unsubscribe();
    drop(b);
    assert_eq!(stream.subscriber_count::<u32>(), 0);
    assert_eq!(stream.publish(1_u32), 0);
}

#[tokio::test]
async fn a_loss_is_reported_where_it_happened_and_recv_skips_it() {
    let stream = EventStream::default();
    let mut gaps = stream.subscribe_with_capacity::<u32>(2).unwrap();
    let mut plain = stream.subscribe_with_capacity::<u32>(2).unwrap();
    assert_eq!(stream.publish(1_u32), 2);
    assert_eq!(stream.publish(2_u32), 2);
    assert_eq!(stream.publish(3_u32), 0);
    assert_eq!((gaps.lost(), plain.lost()), (1, 1));
    assert_eq!(gaps.recv_with_loss().await, Some(Received::Event(1)));
    assert_eq!(plain.recv().await, Some(1));
    assert_eq!(stream.publish(4_u32), 2);
    assert_eq!(gaps.recv_with_loss().await, Some(Received::Event(2)));
    assert_eq!(gaps.recv_with_loss().await, Some(Received::Lost(1)));
    assert_eq!(gaps.buffered(), 1);
    assert_eq!(gaps.recv_with_loss().await, Some(Received::Event(4)));
    assert_eq!(gaps.try_recv(), None);
    assert_eq!(plain.recv().await, Some(2));
    assert_eq!(plain.recv().await, Some(4));
    assert_eq!(plain.try_recv(), None);
    assert_eq!((gaps.lost(), plain.lost()), (1, 1));
}

#[tokio::test]
async fn a_loss_at_the_end_is_reported_before_the_stream_closes() {
    let stream = EventStream::default();
    let mut sub = stream.subscribe_with_capacity::<u32>(1).unwrap();
    stream.publish(1_u32);
    stream.publish(2_u32);
    stream.publish(3_u32);
    drop(stream);
    assert_eq!(sub.recv_with_loss().await, Some(Received::Event(1)));
    assert_eq!(sub.recv_with_loss().await, Some(Received::Lost(2)));
    assert_eq!(sub.recv_with_loss().await, None);
    assert_eq!(sub.lost(), 2);
}

#[test]
fn a_capacity_out_of_range_is_refused_and_nothing_is_subscribed() {
    let stream = EventStream::default();
    assert_eq!(
        stream.subscribe_with_capacity::<u32>(0).err(),
        Some(CapacityError::Zero)
    );
    assert_eq!(
        stream
            .subscribe_with_capacity::<u32>(MAX_CAPACITY + 1)
            .err(),
        Some(CapacityError::TooLarge {
            requested: MAX_CAPACITY + 1
        })
    );
    assert_eq!(stream.subscriber_count::<u32>(), 0);
    let sub = stream.subscribe::<u32>();
    assert_eq!(sub.capacity(), DEFAULT_CAPACITY);
    assert_eq!(sub.buffered(), 0);
}

#[test]
fn the_count_of_open_subscriptions_follows_every_type() {
    let stream = EventStream::default();
    let letters = stream.subscribe::<DeadLetter>();
    let numbers = stream.subscribe::<u32>();
    let words = stream.subscribe::<String>();
    assert_eq!(stream.shared.others_open.load(Ordering::Acquire), 2);
    assert_eq!(stream.subscriber_count::<DeadLetter>(), 1);
    drop((letters, numbers));
    assert_eq!(stream.shared.others_open.load(Ordering::Acquire), 1);
    assert_eq!(stream.subscriber_count::<DeadLetter>(), 0);
    words.unsubscribe();
    assert_eq!(stream.shared.others_open.load(Ordering::Acquire), 0);
}

/// An event whose `Clone` publishes another event.
struct Echo(EventStream);

impl Clone for Echo {
    fn clone(&self) -> Self {
        self.0.publish(7_u8);
        Self(self.0.clone())
    }
}

#[test]
fn an_event_may_publish_and_subscribe_while_it_is_cloned() {
    let stream = EventStream::default();
    let mut echoes = stream.subscribe::<Echo>();
    let mut bytes = stream.subscribe::<u8>();
    assert_eq!(stream.publish(Echo(stream.clone())), 1);
    assert!(echoes.try_recv().is_some());
    assert_eq!(bytes.try_recv(), Some(7));
}
