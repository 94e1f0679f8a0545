//! The body of a frame a peer sent, once its length prefix has been read: read
//! whole, or, for a frame over the limit, read through and dropped.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest frame over the limit that is read through and dropped, keeping the
/// connection; a larger announcement ends it (reading through it would be a peer's
/// way to keep the reader busy).
const SKIP_AT_MOST: usize = 64 * 1024 * 1024;

/// Frames up to this size are read into a buffer of their announced size; a larger
/// one grows its buffer as its bytes arrive, so a peer that announces a large frame
/// and stalls holds no more memory than it has sent.
const READ_WHOLE: usize = 64 * 1024;

/// The frame whose length `prefix` announces (checked against the limit already),
/// prefix included.
pub(super) async fn read_body<R: AsyncRead + Unpin>(
    stream: &mut R,
    prefix: [u8; 4],
) -> std::io::Result<Vec<u8>> {
    let length = u32::from_be_bytes(prefix) as usize;
    if length <= READ_WHOLE {
        let mut frame = vec![0; 4 + length];
        frame[..4].copy_from_slice(&prefix);
        stream.read_exact(&mut frame[4..]).await?;
        return Ok(frame);
    }
    let mut frame = Vec::with_capacity(4 + READ_WHOLE);
    frame.extend_from_slice(&prefix);
    stream.take(length as u64).read_to_end(&mut frame).await?;
    if frame.len() < 4 + length {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(frame)
}

/// Read through and drop the `length` bytes of a frame over the limit, so that the
/// frames behind it can still be read; an error, without reading anything, past
/// `SKIP_AT_MOST`.
pub(super) async fn skip_body<R: AsyncRead + Unpin>(
    stream: &mut R,
    length: usize,
) -> std::io::Result<()> {
    if length > SKIP_AT_MOST {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let skipped = tokio::io::copy(&mut stream.take(length as u64), &mut tokio::io::sink()).await?;
    if skipped < length as u64 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}
