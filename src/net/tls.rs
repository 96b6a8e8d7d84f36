//! The TLS settings of the client: reqwest's own (TLS 1.2 and 1.3 through
//! ring, SNI, ALPN `h2` then `http/1.1`, the platform's certificate
//! verifier), with one change: the verifier, which reads every root
//! certificate of the system when made (milliseconds, most of a one-URL
//! `check-url`'s start), is made at the first HTTPS handshake, so a run or
//! a command that asks only `http://` URLs never pays for it.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

/// The client's TLS configuration, for `tls_backend_preconfigured`.
pub(super) fn client_config() -> anyhow::Result<ClientConfig> {
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(LazyVerifier {
            provider,
            inner: OnceLock::new(),
        }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The platform verifier, made when first needed.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    inner: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl LazyVerifier {
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.inner
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new(self.provider.clone()).inspect_err(|e| {
                    tracing::error!(error = %e, "no certificate verifier: every HTTPS request fails");
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    /// What the platform verifier answers, without making it: the
    /// provider's signature schemes.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_is_made_only_when_a_certificate_is_checked() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let provider = CryptoProvider::get_default().cloned().unwrap();
        let lazy = LazyVerifier {
            provider: provider.clone(),
            inner: OnceLock::new(),
        };
        let made = rustls_platform_verifier::Verifier::new(provider).unwrap();
        assert_eq!(
            lazy.supported_verify_schemes(),
            made.supported_verify_schemes()
        );
        assert!(lazy.inner.get().is_none());
        let config = client_config().unwrap();
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        assert!(config.enable_sni);
    }
}
