//! Frames: a length prefix, a header, a payload.
//!
//! The length is a big-endian `u32`, checked against `WireLimits::max_frame` first. The
//! `FrameHeader` (borrowed strings) is written and read by hand (`header_buffer`,
//! `read_header`) in exactly postcard's bytes for the struct (property tests hold the
//! two together): serde cost more than the copying on every frame. The payload is
//! postcard through the `Appending` flavor (one copy per string) and must be consumed
//! exactly (`TrailingBytes`). `peek_tell` reads a tell's header strings as bytes, for
//! `deliver_to_known`.

use serde::{Deserialize, Serialize};

use crate::net::wire::{WireLimits, WireProblem};

/// What a frame says before its payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameHeader<'a> {
    /// The payload's wire key.
    pub key: &'a str,
    /// The recipient's path, such as `/user/orders`.
    pub recipient: &'a str,
    /// The recipient's incarnation uid; 0 for whichever incarnation lives there.
    pub uid: u64,
    /// The full URI of where a request's answer goes, if it is a request.
    pub reply_to: Option<&'a str>,
}

/// The length prefix: a big-endian `u32`.
const PREFIX: usize = 4;

/// A frame: the prefix, the header, then `payload`.
///
/// # Errors
///
/// [`WireProblem::FrameTooLarge`] when the frame would be over `limits.max_frame`
/// (nobody would accept it), or [`WireProblem::Unencodable`] when the header
/// cannot be encoded.
pub fn encode_frame(
    header: &FrameHeader<'_>,
    payload: &[u8],
    limits: &WireLimits,
) -> Result<Vec<u8>, WireProblem> {
    let mut frame = header_buffer(header, payload.len());
    frame.extend_from_slice(payload);
    finish_frame(frame, limits)
}

/// A frame of `message` to `header`'s recipient, encoded straight into the frame's
/// buffer (one allocation, where [`encode_frame`] of an
/// [`encode_payload`](crate::net::wire::encode_payload) takes two and a copy).
///
/// # Errors
///
/// As [`encode_frame`]; a message serde cannot encode is
/// [`WireProblem::Unencodable`] (naming its key).
pub fn encode_message_frame<M: crate::net::wire::WireMessage>(
    header: &FrameHeader<'_>,
    message: &M,
    limits: &WireLimits,
) -> Result<Vec<u8>, WireProblem> {
    // Room for a typical message; a larger one grows the buffer once or twice.
    let frame = header_buffer(header, 240);
    let frame = append(message, frame).map_err(|error| WireProblem::Unencodable {
        key: header.key.to_owned(),
        error: error.to_string(),
    })?;
    finish_frame(frame, limits)
}

/// A buffer holding room for the prefix, then the header, with room for `payload`
/// more bytes.
///
/// The header is written by hand, in exactly the bytes postcard gives
/// `FrameHeader` (each string a varint length and its bytes, the uid a varint, the
/// answer's URI an option tag, 0 or 1, before it): it is on every frame, and through
/// serde it cost more than the strings it copies. A test holds the two to the same
/// bytes.
fn header_buffer(header: &FrameHeader<'_>, payload: usize) -> Vec<u8> {
    // Each string's length prefix is at most 10 bytes, the uid's too.
    let estimate = PREFIX
        + header.key.len()
        + header.recipient.len()
        + header.reply_to.map_or(0, str::len)
        + 32
        + payload;
    let mut frame = Vec::with_capacity(estimate);
    frame.extend_from_slice(&[0; PREFIX]);
    put_str(&mut frame, header.key);
    put_str(&mut frame, header.recipient);
    put_varint(&mut frame, header.uid);
    match header.reply_to {
        None => frame.push(0),
        Some(reply_to) => {
            frame.push(1);
            put_str(&mut frame, reply_to);
        }
    }
    frame
}

/// `text` as postcard writes a string: its length as a varint, then its bytes.
fn put_str(frame: &mut Vec<u8>, text: &str) {
    put_varint(frame, text.len() as u64);
    frame.extend_from_slice(text.as_bytes());
}

/// `n` as a postcard varint: seven bits a byte, lowest first, the top bit set on
/// every byte but the last.
fn put_varint(frame: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        frame.push((n as u8) | 0x80);
        n >>= 7;
    }
    frame.push(n as u8);
}

/// `value` encoded at the end of `frame`.
fn append<T: Serialize + ?Sized>(value: &T, frame: Vec<u8>) -> postcard::Result<Vec<u8>> {
    postcard::serialize_with_flavor(value, Appending(frame))
}

/// postcard's output into a `Vec` that already holds the start of a frame: each
/// string or byte run is copied in one go (`postcard::to_extend` goes byte by
/// byte through an iterator).
struct Appending(Vec<u8>);

impl postcard::ser_flavors::Flavor for Appending {
    type Output = Vec<u8>;

    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        Ok(self.0)
    }
}

/// Write the length prefix of `frame`, checked against the limit.
fn finish_frame(mut frame: Vec<u8>, limits: &WireLimits) -> Result<Vec<u8>, WireProblem> {
    let length = frame.len() - PREFIX;
    let announced = u32::try_from(length)
        .ok()
        .filter(|_| length <= limits.max_frame)
        .ok_or(WireProblem::FrameTooLarge {
            announced: length as u64,
            max: limits.max_frame,
        })?;
    frame[..PREFIX].copy_from_slice(&announced.to_be_bytes());
    Ok(frame)
}

/// The header and the payload of `frame`, checked against `limits`: the prefix
/// first, before anything else is read.
pub(crate) fn decode_frame<'a>(
    frame: &'a [u8],
    limits: &WireLimits,
) -> Result<(FrameHeader<'a>, &'a [u8]), WireProblem> {
    let Some((prefix, rest)) = frame.split_first_chunk::<PREFIX>() else {
        return Err(WireProblem::BadLength {
            announced: 0,
            received: frame.len(),
        });
    };
    let announced = u32::from_be_bytes(*prefix);
    let announced_len = usize::try_from(announced).unwrap_or(usize::MAX);
    if announced_len > limits.max_frame {
        return Err(WireProblem::FrameTooLarge {
            announced: u64::from(announced),
            max: limits.max_frame,
        });
    }
    if rest.len() != announced_len {
        return Err(WireProblem::BadLength {
            announced: u64::from(announced),
            received: rest.len(),
        });
    }
    read_header(rest).map_err(|problem| WireProblem::UnreadableHeader(problem.to_owned()))
}

/// The key and the recipient of a frame that carries no answer's address, as bytes
/// not checked as UTF-8, with its uid and payload: `None` for a frame that is not
/// that, or is not well formed, which `decode_frame` then reads (and refuses) whole.
/// A lookup that finds these bytes among text this system wrote needs no check.
pub(crate) fn peek_tell<'a>(frame: &'a [u8], limits: &WireLimits) -> Option<PeekedTell<'a>> {
    let (prefix, rest) = frame.split_first_chunk::<PREFIX>()?;
    let announced = usize::try_from(u32::from_be_bytes(*prefix)).ok()?;
    if announced > limits.max_frame || rest.len() != announced {
        return None;
    }
    let mut reader = Reader(rest);
    let key = reader.bytes().ok()?;
    let recipient = reader.bytes().ok()?;
    let uid = reader.varint().ok()?;
    if reader.byte().ok()? != 0 {
        return None;
    }
    Some(PeekedTell {
        key,
        recipient,
        uid,
        payload: reader.0,
    })
}

/// What `peek_tell` read.
pub(crate) struct PeekedTell<'a> {
    pub(crate) key: &'a [u8],
    pub(crate) recipient: &'a [u8],
    pub(crate) uid: u64,
    pub(crate) payload: &'a [u8],
}

/// The header at the start of `bytes`, read by hand as postcard would read it
/// (see `header_buffer`), and the payload after it.
fn read_header(bytes: &[u8]) -> Result<(FrameHeader<'_>, &[u8]), &'static str> {
    let mut reader = Reader(bytes);
    let key = reader.str()?;
    let recipient = reader.str()?;
    let uid = reader.varint()?;
    let reply_to = match reader.byte()? {
        0 => None,
        1 => Some(reader.str()?),
        _ => return Err("a bad option tag before the answer's address"),
    };
    let header = FrameHeader {
        key,
        recipient,
        uid,
        reply_to,
    };
    Ok((header, reader.0))
}

/// What is left of a header being read.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, &'static str> {
        let (&first, rest) = self.0.split_first().ok_or(UNEXPECTED_END)?;
        self.0 = rest;
        Ok(first)
    }

    /// A varint of at most ten bytes whose value fits in 64 bits.
    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut value = 0_u64;
        for at in 0..10 {
            let byte = self.byte()?;
            // The tenth byte holds the 64th bit only.
            if at == 9 && byte > 1 {
                return Err(BAD_VARINT);
            }
            value |= u64::from(byte & 0x7f) << (7 * at);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(BAD_VARINT)
    }

    /// A string: its length, then as many bytes of UTF-8.
    fn str(&mut self) -> Result<&'a str, &'static str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "a string that is not UTF-8")
    }

    /// A string's bytes, not checked as UTF-8.
    fn bytes(&mut self) -> Result<&'a [u8], &'static str> {
        let len = usize::try_from(self.varint()?).map_err(|_| UNEXPECTED_END)?;
        if len > self.0.len() {
            return Err(UNEXPECTED_END);
        }
        let (text, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(text)
    }
}

const UNEXPECTED_END: &str = "it ends before its last field";
const BAD_VARINT: &str = "a number longer than 64 bits";

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> FrameHeader<'static> {
        FrameHeader {
            key: "test.ping",
            recipient: "/user/pinger",
            uid: 7,
            reply_to: None,
        }
    }

    #[test]
    fn a_frame_round_trips_and_its_length_is_checked_first() {
        let limits = WireLimits::DEFAULT;
        let frame = encode_frame(&header(), &[1, 2, 3], &limits).expect("a frame");
        let (decoded, payload) = decode_frame(&frame, &limits).expect("decoded");
        assert_eq!(decoded, header());
        assert_eq!(payload, [1, 2, 3]);

        let mut short = frame.clone();
        short.pop();
        assert!(matches!(
            decode_frame(&short, &limits),
            Err(WireProblem::BadLength { .. })
        ));
        let mut huge = frame.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            decode_frame(&huge, &limits),
            Err(WireProblem::FrameTooLarge {
                announced: u64::from(u32::MAX),
                max: limits.max_frame
            })
        );
        assert!(matches!(
            decode_frame(&[0, 0], &limits),
            Err(WireProblem::BadLength { .. })
        ));
    }

    use proptest::prelude::*;

    fn any_header() -> impl Strategy<Value = (String, String, u64, Option<String>)> {
        (
            ".{0,40}",
            ".{0,200}",
            prop_oneof![Just(0), Just(u64::MAX), any::<u64>(), 0..300_u64],
            proptest::option::of(".{0,300}"),
        )
    }

    proptest! {
        // The hand-written header is postcard's, byte for byte, and reads back the
        // same, with the payload after it untouched.
        #[test]
        fn the_header_is_written_as_postcard_writes_it(
            (key, recipient, uid, reply_to) in any_header(),
            payload in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let header = FrameHeader {
                key: &key,
                recipient: &recipient,
                uid,
                reply_to: reply_to.as_deref(),
            };
            let written = header_buffer(&header, 0);
            let by_postcard = postcard::to_allocvec(&header).expect("encodable");
            prop_assert_eq!(&written[PREFIX..], &by_postcard[..]);
            let mut bytes = by_postcard.clone();
            bytes.extend_from_slice(&payload);
            let (read, rest) = read_header(&bytes).expect("readable");
            prop_assert_eq!(read, header);
            prop_assert_eq!(rest, &payload[..]);
        }

        // On any bytes at all, the reader accepts what postcard accepts, with the
        // same header and the same rest, and refuses what it refuses.
        #[test]
        fn the_header_reader_agrees_with_postcard(
            bytes in prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..64),
                proptest::collection::vec(prop_oneof![Just(0x80_u8), Just(0xff), Just(0x01), Just(0x00), any::<u8>()], 0..24),
            ],
        ) {
            let ours = read_header(&bytes).ok();
            let theirs = postcard::take_from_bytes::<FrameHeader<'_>>(&bytes).ok();
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn edge_varints_are_read_as_postcard_reads_them() {
        // Two empty strings, then the uid: u64::MAX is ten bytes, the last one 0x01;
        // 0x02 there overflows; an eleventh byte never comes. Then no answer URI.
        let mut max = vec![0, 0];
        max.extend([0xff; 9]);
        max.extend([0x01, 0]);
        let mut over = max.clone();
        over[11] = 0x02;
        let mut endless = vec![0, 0];
        endless.extend([0x80; 11]);
        assert_eq!(read_header(&max).map(|(h, _)| h.uid), Ok(u64::MAX));
        assert_eq!(read_header(&over).err(), Some(BAD_VARINT));
        assert_eq!(read_header(&endless).err(), Some(BAD_VARINT));
        for bytes in [max, over, endless] {
            let ours = read_header(&bytes).ok();
            let theirs = postcard::take_from_bytes::<FrameHeader<'_>>(&bytes).ok();
            assert_eq!(ours, theirs, "{bytes:?}");
        }
    }

    #[test]
    fn the_limit_is_inclusive() {
        let body = encode_frame(&header(), &[], &WireLimits::DEFAULT).expect("a frame");
        let exact = WireLimits {
            max_frame: body.len() - PREFIX,
            ..WireLimits::DEFAULT
        };
        assert!(decode_frame(&body, &exact).is_ok());
        let under = WireLimits {
            max_frame: body.len() - PREFIX - 1,
            ..WireLimits::DEFAULT
        };
        assert!(matches!(
            decode_frame(&body, &under),
            Err(WireProblem::FrameTooLarge { .. })
        ));
        assert!(matches!(
            encode_frame(&header(), &[], &under),
            Err(WireProblem::FrameTooLarge { .. })
        ));
    }
}
