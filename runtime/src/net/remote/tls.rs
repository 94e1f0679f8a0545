//! Mutual TLS for links (S38's optional TLS): each system shows a certificate chain
//! signed by a CA the other trusts, and checks the other's.
//!
//! The listener requires a client certificate and verifies it against the CA roots;
//! the dialer verifies the listener's certificate against the same roots, for the
//! host of the address it dials (an IP address or a DNS name, which the certificate
//! must name). TLS 1.3 only, with the `ring` provider, passed explicitly: nothing
//! depends on a process-wide default provider.
//!
//! The shared-secret handshake then runs inside the TLS session, bound to it: 32
//! bytes of keying material exported from the session are mixed into both of its
//! tags, so a handshake relayed from another TLS session fails.
//!
//! `TlsSettings` turns the PEM chain, key and roots into a rustls `ServerConfig` and
//! `ClientConfig` when it is made; its `Debug` prints counts, never the key.
//! `accepted` and `dialled` wrap a `TcpStream` (or leave it as it is without TLS) into a
//! `LinkStream` (`Box<dyn LinkIo>`), which is what the transport reads and writes either
//! way, and return the binding for the handshake.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::net::remote::RemoteError;

/// The label under which a link's keying material is exported (RFC 5705 / 8446).
const BINDING_LABEL: &[u8] = b"tapio link handshake";

/// The certificates and key a system shows its peers, and the CAs it trusts for
/// theirs: mutual TLS on every link.
///
/// Every system of the cluster needs a certificate chain signed by a CA the others
/// trust, naming the host it listens on (as an IP address or a DNS name in its
/// subject alternative names), and usable for both server and client
/// authentication: a system accepts links and dials them.
///
/// The settings are checked when they are made (the PEM parses, the key matches the
/// certificate, there is at least one CA root), and are cheap to clone. Their
/// `Debug` never shows key material.
///
/// # Examples
///
/// ```no_run
/// use tapio::remote::{RemoteSettings, TlsSettings};
///
/// # fn main() -> Result<(), tapio::remote::RemoteError> {
/// let tls = TlsSettings::from_pem_files("node.pem", "node.key", "ca.pem")?;
/// let settings = RemoteSettings::bind("10.0.0.7", 25520)
///     .secret(*b"sixteen or more bytes, the same everywhere")
///     .tls(tls);
/// # let _ = settings;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TlsSettings {
    /// What the listener uses: the node's chain and key, and a verifier that
    /// requires a client certificate signed by one of the roots.
    server: Arc<ServerConfig>,
    /// What the dialer uses: the roots for the listener's certificate, and the
    /// node's chain and key for its own.
    client: Arc<ClientConfig>,
    /// How many certificates the node's chain has (for `Debug`).
    chain_len: usize,
    /// How many CA roots are trusted (for `Debug`).
    roots_len: usize,
}

impl TlsSettings {
    /// Read the settings from three PEM files: the node's certificate chain (its own
    /// certificate first, then any intermediates), its private key (PKCS#8, PKCS#1
    /// or SEC1), and the CA certificates it trusts for its peers.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Tls`] when a file cannot be read, or its contents are refused
    /// as [`TlsSettings::from_pem`] refuses them.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        private_key: impl AsRef<Path>,
        ca_roots: impl AsRef<Path>,
    ) -> Result<Self, RemoteError> {
        let read = |path: &Path, what: &str| {
            std::fs::read(path).map_err(|error| RemoteError::Tls {
                reason: format!("cannot read the {what} from {}: {error}", path.display()),
            })
        };
        let cert_chain = read(cert_chain.as_ref(), "certificate chain")?;
        let private_key = read(private_key.as_ref(), "private key")?;
        let ca_roots = read(ca_roots.as_ref(), "CA roots")?;
        Self::from_pem(&cert_chain, &private_key, &ca_roots)
    }

    /// Make the settings from PEM text in memory: the node's certificate chain (its
    /// own certificate first), its private key, and the CA certificates it trusts
    /// for its peers.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Tls`] when a part holds no PEM section of its kind or a
    /// malformed one, when a CA certificate is not one, or when the key does not
    /// belong to the certificate.
    pub fn from_pem(
        cert_chain: &[u8],
        private_key: &[u8],
        ca_roots: &[u8],
    ) -> Result<Self, RemoteError> {
        let chain = certificates(cert_chain, "certificate chain")?;
        let key = PrivateKeyDer::from_pem_slice(private_key).map_err(|error| {
            tls_error(format!(
                "the private key is not a PEM private key (PKCS#8, PKCS#1 or SEC1): {error}"
            ))
        })?;
        let mut roots = RootCertStore::empty();
        for root in certificates(ca_roots, "CA roots")? {
            roots
                .add(root)
                .map_err(|error| tls_error(format!("a CA root cannot be used: {error}")))?;
        }
        let (chain_len, roots_len) = (chain.len(), roots.len());
        let roots = Arc::new(roots);
        let provider = Arc::new(rustls::crypto::ring::default_provider());

        let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(|error| tls_error(format!("the CA roots cannot verify peers: {error}")))?;
        let server = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(provider_error)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain.clone(), key.clone_key())
            .map_err(key_error)?;
        let client = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(provider_error)?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(key_error)?;
        Ok(Self {
            server: Arc::new(server),
            client: Arc::new(client),
            chain_len,
            roots_len,
        })
    }
}

impl fmt::Debug for TlsSettings {
    /// The number of certificates and roots; never the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("cert_chain", &self.chain_len)
            .field("private_key", &"<set>")
            .field("ca_roots", &self.roots_len)
            .finish()
    }
}

fn tls_error(reason: String) -> RemoteError {
    RemoteError::Tls { reason }
}

fn provider_error(error: rustls::Error) -> RemoteError {
    tls_error(format!("the ring provider cannot speak TLS 1.3: {error}"))
}

fn key_error(error: rustls::Error) -> RemoteError {
    tls_error(format!(
        "the private key cannot be used with the certificate chain: {error}"
    ))
}

/// Every certificate in `pem`, in order; at least one.
fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, RemoteError> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| tls_error(format!("the {what} is not valid PEM: {error}")))?;
    if certificates.is_empty() {
        return Err(tls_error(format!(
            "the {what} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certificates)
}

/// The byte stream of a link: TCP, or TLS over TCP. The rest of the transport reads
/// and writes it the same way.
pub(crate) trait LinkIo: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> LinkIo for T {}

/// A link's stream, whichever it is.
pub(crate) type LinkStream = Box<dyn LinkIo>;

/// The listening side of a link: TLS over `stream` when `tls` is set (the peer's
/// certificate verified), else `stream` itself. Returns the stream and the bytes
/// the link's handshake is bound to: 32 bytes of the TLS session's keying material,
/// or none without TLS.
pub(crate) async fn accepted(
    tls: Option<&TlsSettings>,
    stream: TcpStream,
) -> std::io::Result<(LinkStream, Vec<u8>)> {
    let Some(tls) = tls else {
        return Ok((Box::new(stream), Vec::new()));
    };
    let stream = TlsAcceptor::from(tls.server.clone()).accept(stream).await?;
    let binding = stream
        .get_ref()
        .1
        .export_keying_material(vec![0; 32], BINDING_LABEL, None)
        .map_err(std::io::Error::other)?;
    Ok((Box::new(stream), binding))
}

/// The dialling side of a link to `host`: TLS over `stream` when `tls` is set (the
/// listener's certificate verified for `host`), else `stream` itself. Returns what
/// [`accepted`] returns.
pub(crate) async fn dialled(
    tls: Option<&TlsSettings>,
    stream: TcpStream,
    host: &str,
) -> std::io::Result<(LinkStream, Vec<u8>)> {
    let Some(tls) = tls else {
        return Ok((Box::new(stream), Vec::new()));
    };
    let name = host
        .strip_prefix('[')
        .and_then(|host| host.strip_suffix(']'))
        .unwrap_or(host);
    let name = ServerName::try_from(name.to_owned()).map_err(|error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{host:?} is neither an IP address nor a DNS name: {error}"),
        )
    })?;
    let stream = TlsConnector::from(tls.client.clone())
        .connect(name, stream)
        .await?;
    let binding = stream
        .get_ref()
        .1
        .export_keying_material(vec![0; 32], BINDING_LABEL, None)
        .map_err(std::io::Error::other)?;
    Ok((Box::new(stream), binding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_pem_is_a_tls_error_that_says_which_part() {
        let error = TlsSettings::from_pem(b"not pem", b"", b"").err();
        assert!(matches!(
            &error,
            Some(RemoteError::Tls { reason }) if reason.contains("certificate chain")
        ));
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let error = TlsSettings::from_pem_files("/nonexistent/node.pem", "k", "c").err();
        assert!(matches!(
            &error,
            Some(RemoteError::Tls { reason }) if reason.contains("/nonexistent/node.pem")
        ));
    }
}
