//! Frames: a length prefix, a header, a payload.

use serde::{Deserialize, Serialize};

use crate::wire::WireProblem;

/// The limits a system holds what arrives to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireLimits {
    /// The most bytes a frame may announce after its prefix; a larger announcement is
    /// refused before anything is read or allocated.
    pub max_frame: usize,
    /// The deepest a payload may nest (a recursive message type, a list of lists);
    /// deeper is refused before it can exhaust the stack.
    pub max_depth: usize,
}

impl WireLimits {
    /// 1 MiB frames, payloads nested at most 128 levels.
    pub const DEFAULT: Self = Self {
        max_frame: 1 << 20,
        max_depth: crate::wire::depth::DEFAULT_MAX_DEPTH,
    };
}

impl Default for WireLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

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
    let mut frame = header_buffer(header, payload.len())?;
    frame.extend_from_slice(payload);
    finish_frame(frame, limits)
}

/// A frame of `message` to `header`'s recipient, encoded straight into the frame's
/// buffer (one allocation, where [`encode_frame`] of an
/// [`encode_payload`](crate::wire::encode_payload) takes two and a copy).
///
/// # Errors
///
/// As [`encode_frame`]; a message serde cannot encode is
/// [`WireProblem::Unencodable`] (naming its key).
pub fn encode_message_frame<M: crate::wire::WireMessage>(
    header: &FrameHeader<'_>,
    message: &M,
    limits: &WireLimits,
) -> Result<Vec<u8>, WireProblem> {
    // Room for a typical message; a larger one grows the buffer once or twice.
    let frame = header_buffer(header, 240)?;
    let frame = append(message, frame).map_err(|error| WireProblem::Unencodable {
        key: header.key.to_owned(),
        error: error.to_string(),
    })?;
    finish_frame(frame, limits)
}

/// A buffer holding room for the prefix, then the header, with room for `payload`
/// more bytes.
fn header_buffer(header: &FrameHeader<'_>, payload: usize) -> Result<Vec<u8>, WireProblem> {
    // Each string's length prefix is at most 5 bytes, the uid's at most 10.
    let estimate = PREFIX
        + header.key.len()
        + header.recipient.len()
        + header.reply_to.map_or(0, str::len)
        + 32
        + payload;
    let mut frame = Vec::with_capacity(estimate);
    frame.extend_from_slice(&[0; PREFIX]);
    append(header, frame).map_err(|error| WireProblem::Unencodable {
        key: header.key.to_owned(),
        error: error.to_string(),
    })
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
    postcard::take_from_bytes::<FrameHeader<'a>>(rest)
        .map_err(|error| WireProblem::UnreadableHeader(error.to_string()))
}

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
