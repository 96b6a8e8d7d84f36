//! Web Bot Auth: requests signed with the operator's Ed25519 key (HTTP
//! Message Signatures, RFC 9421, as draft-ietf-webbotauth-httpsig-protocol-01
//! profiles them), so a publisher can verify the crawler without IP
//! allow-lists.
//!
//! Each signed request carries three headers, made right before it is sent
//! (so `created` is fresh for every request and redirect hop). In the
//! dictionary form (`signature_agent_form: dictionary`, the default, as the
//! working group's draft writes it):
//!
//! ```text
//! Signature-Agent: sig1="https://bot.example.org"
//! Signature-Input: sig1=("@authority" "signature-agent";key="sig1");created=1767225600;
//!     expires=1767225660;keyid="<JWK thumbprint>";alg="ed25519";nonce="<random>";tag="web-bot-auth"
//! Signature: sig1=:<base64 Ed25519 signature of the signature base>:
//! ```
//!
//! In the string form (`signature_agent_form: string`, the earlier draft's,
//! which the largest verifier in production still checks and whose
//! JavaScript library cannot select a dictionary member),
//! `Signature-Agent: "https://bot.example.org"` is covered whole as
//! `"signature-agent"`. Pick the form that verifies where it matters.
//!
//! `sign: always` (default) signs every request; `sign: when_asked` signs a
//! host's requests only once one of its answers carried `Accept-Signature`
//! (RFC 9421 5.1), for the rest of the run.
//!
//! `keyid` is the RFC 7638 SHA-256 thumbprint (base64url) of the public key's
//! JWK, which the operator publishes in the key directory ([`Signer::directory`],
//! `scraper keys`) at `/.well-known/http-message-signatures-directory` of the
//! `signature_agent` URL, served with the signature [`Signer::directory_headers`]
//! makes (`scraper keys --response`), and described by a Signature Agent
//! Card (`scraper keys --card`). Keys are read from PEM PKCS#8 (`-----BEGIN
//! PRIVATE KEY-----`, as `openssl genpkey -algorithm ed25519` writes them);
//! ring does the cryptography. The private key is never logged, written to
//! state or archived: `Signer`'s `Debug` shows only the keyid.
//!
//! Key rotation: make a new key (`scraper keys --generate NEW.pem`), publish
//! a directory holding both (`scraper keys --also NEW.pem --response`), switch
//! `key_file` to the new key, and once the old key's last signatures have
//! expired (a minute) publish the directory of the new key alone.
//!
//! The key is read when a `Net` is built (crawl, check-url, probe), never by
//! commands that do not fetch, so a build without the secret still runs.
//! Signing happens inside `Net::send`, after the politeness gate.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde::{Deserialize, Serialize};

use crate::url::Url;

/// `crawl.web_bot_auth`: the operator's signing key and where its public
/// half is published (signed as this module describes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebBotAuth {
    /// Ed25519 private key, PEM PKCS#8; relative to the config file's folder.
    /// May be left out when `SCRAPER_WEB_BOT_AUTH_KEY` holds the PEM.
    #[serde(default)]
    pub key_file: Option<PathBuf>,
    /// URL of the operator's key directory (sent as `Signature-Agent`).
    pub signature_agent: String,
    /// How `Signature-Agent` is written: `dictionary` (`sig1="https://..."`,
    /// covered as `"signature-agent";key="sig1"`) or `string` (`"https://..."`).
    #[serde(default)]
    pub signature_agent_form: AgentForm,
    /// `always`, or `when_asked` (a host's requests once it sent `Accept-Signature`).
    #[serde(default)]
    pub sign: SignWhen,
    /// A contact for publishers (mail or URL), shown in the Signature Agent Card.
    #[serde(default)]
    pub contact: Option<String>,
}

/// How `Signature-Agent` is written and covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentForm {
    /// `sig1="https://..."`, covered as `"signature-agent";key="sig1"`
    /// (draft-ietf-webbotauth-httpsig-protocol-01).
    #[default]
    Dictionary,
    /// `"https://..."`, covered as `"signature-agent"` (the earlier form).
    String,
}

/// Which requests are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignWhen {
    #[default]
    Always,
    /// Only a host's requests after it sent `Accept-Signature`.
    WhenAsked,
}

impl WebBotAuth {
    /// `crawl.web_bot_auth`'s own checks (run when `config.yml` loads).
    pub(crate) fn validate(&self) -> Result<(), String> {
        let name = "crawl.web_bot_auth.signature_agent";
        crate::url::check_http_url(&self.signature_agent).map_err(|e| format!("{name}: {e}"))?;
        if !self.signature_agent.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "{name}: expected a URL of printable ASCII (no spaces), got `{}`",
                self.signature_agent
            ));
        }
        Ok(())
    }
}

/// The environment variable that may hold the PEM key instead of `key_file`.
pub(crate) const KEY_ENV: &str = "SCRAPER_WEB_BOT_AUTH_KEY";

/// How long a signature stays valid after `created`.
const VALIDITY_SECS: u64 = 60;

/// The signature's label in the three headers.
const LABEL: &str = "sig1";

/// DER of a PKCS#8 v1 Ed25519 key up to its 32-byte seed (RFC 8410 7):
/// version 0, algorithm id-Ed25519, an OCTET STRING holding an OCTET STRING.
/// ring's v2 form starts the same but for the version byte.
const PKCS8_V1_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

const PEM_BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
const PEM_END: &str = "-----END PRIVATE KEY-----";

/// Why the Web Bot Auth key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("crawl.web_bot_auth.key_file `{path}`: cannot read it: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "{from}: not an Ed25519 private key in PEM PKCS#8 (expected `{PEM_BEGIN}`, as `scraper keys --generate FILE` or `openssl genpkey -algorithm ed25519` writes): {why}"
    )]
    Bad { from: String, why: String },
    #[error(
        "crawl.web_bot_auth: no key: set `key_file`, or put the PEM key in the {KEY_ENV} environment variable"
    )]
    Missing,
    #[error("cannot write a new key to `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// The operator's key and the headers that name it.
pub struct Signer {
    key: Ed25519KeyPair,
    /// JWK thumbprint of the public key.
    keyid: String,
    /// `"https://..."`: the `signature_agent` URL as a Structured Fields String.
    agent: String,
    /// The `signature_agent` URL as configured.
    agent_url: String,
    form: AgentForm,
    when: SignWhen,
    /// Hosts that asked for a signature (`Accept-Signature`), under `when_asked`.
    asked: std::sync::Mutex<std::collections::HashSet<String>>,
    rng: SystemRandom,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("keyid", &self.keyid)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// The key of `crawl.web_bot_auth`: the PEM in [`KEY_ENV`] when that is
    /// set and not empty, else `key_file`.
    pub fn from_config(cfg: &WebBotAuth) -> Result<Signer, KeyError> {
        if let Some(pem) = std::env::var(KEY_ENV).ok().filter(|v| !v.trim().is_empty()) {
            return Ok(Signer::from_pem(&pem, KEY_ENV, &cfg.signature_agent)?
                .with(cfg.signature_agent_form, cfg.sign));
        }
        let path = cfg.key_file.as_deref().ok_or(KeyError::Missing)?;
        let pem = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let from = format!("crawl.web_bot_auth.key_file `{}`", path.display());
        Ok(Signer::from_pem(&pem, &from, &cfg.signature_agent)?
            .with(cfg.signature_agent_form, cfg.sign))
    }

    /// A key from PEM text; `from` names where it came from, for errors.
    pub fn from_pem(pem: &str, from: &str, signature_agent: &str) -> Result<Signer, KeyError> {
        let bad = |why: String| KeyError::Bad {
            from: from.to_string(),
            why,
        };
        let der = pem_body(pem).map_err(bad)?;
        let key = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
            .map_err(|e| bad(format!("the key was rejected ({e})")))?;
        let keyid = thumbprint(&public_x(&key));
        Ok(Signer {
            key,
            keyid,
            agent: sf_string(signature_agent),
            agent_url: signature_agent.to_string(),
            form: AgentForm::Dictionary,
            when: SignWhen::Always,
            asked: std::sync::Mutex::new(std::collections::HashSet::new()),
            rng: SystemRandom::new(),
        })
    }

    /// The same key, writing `Signature-Agent` in `form` and signing `when`.
    pub fn with(mut self, form: AgentForm, when: SignWhen) -> Signer {
        self.form = form;
        self.when = when;
        self
    }

    /// Should a request to `host` (`host[:port]`) be signed?
    pub(crate) fn signs_for(&self, host: &str) -> bool {
        self.when == SignWhen::Always
            || self
                .asked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(host)
    }

    /// `host` answered with `Accept-Signature`: under `when_asked`, its
    /// requests are signed from now on.
    pub(crate) fn asked_by(&self, host: &str) {
        if self.when == SignWhen::WhenAsked {
            let new = self
                .asked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(host.to_string());
            if new {
                tracing::info!(%host, "web bot auth: the host asked for signatures (Accept-Signature); its requests are signed from now on");
            }
        }
    }

    /// The JWK thumbprint that requests carry as `keyid`.
    pub fn keyid(&self) -> &str {
        &self.keyid
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, and `kid` = the thumbprint).
    pub fn jwk(&self) -> serde_json::Value {
        serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": public_x(&self.key),
            "kid": self.keyid,
        })
    }

    /// The key directory to publish at
    /// `<signature_agent>/.well-known/http-message-signatures-directory`.
    pub fn directory(&self) -> serde_json::Value {
        serde_json::json!({ "keys": [self.jwk()] })
    }

    /// Add `Signature-Agent`, `Signature-Input` and `Signature` for a request
    /// to `url`, created at `now`.
    pub fn sign(&self, url: &Url, headers: &mut HeaderMap, now: SystemTime) {
        let created = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut nonce = [0u8; 64];
        // A failing system RNG leaves the nonce zero; the signature still holds.
        let _ = self.rng.fill(&mut nonce);
        let (agent_header, agent_component) = match self.form {
            AgentForm::Dictionary => (
                format!("{LABEL}={}", self.agent),
                format!("\"signature-agent\";key=\"{LABEL}\""),
            ),
            AgentForm::String => (self.agent.clone(), "\"signature-agent\"".to_string()),
        };
        let params = format!(
            "(\"@authority\" {agent_component});created={created};expires={};keyid=\"{}\";alg=\"ed25519\";nonce=\"{}\";tag=\"web-bot-auth\"",
            created + VALIDITY_SECS,
            self.keyid,
            STANDARD.encode(nonce),
        );
        let base = format!(
            "\"@authority\": {}\n{agent_component}: {}\n\"@signature-params\": {params}",
            authority(url),
            self.agent
        );
        let signature = STANDARD.encode(self.key.sign(base.as_bytes()).as_ref());
        let values = [
            ("signature-agent", agent_header),
            ("signature-input", format!("{LABEL}={params}")),
            ("signature", format!("{LABEL}=:{signature}:")),
        ];
        for (name, value) in values {
            // Invariant: every value is printable ASCII (the agent URL is
            // checked on load, the rest is ours).
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), v);
            }
        }
    }

    /// The `Signature-Input` and `Signature` values that sign the key
    /// directory's response, one member per signer (`binding0`, ...): each
    /// covers `"@authority";req` (the `signature_agent` URL's authority), with
    /// `tag="http-message-signatures-directory"`, valid from `now` for `valid`.
    pub fn directory_headers(
        signers: &[&Signer],
        now: SystemTime,
        valid: std::time::Duration,
    ) -> (String, String) {
        let created = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut inputs = Vec::new();
        let mut signatures = Vec::new();
        for (i, s) in signers.iter().enumerate() {
            let authority = crate::url::parse(&s.agent_url)
                .map(|u| authority(&u))
                .unwrap_or_default();
            let params = format!(
                "(\"@authority\";req);created={created};expires={};keyid=\"{}\";alg=\"ed25519\";tag=\"http-message-signatures-directory\"",
                created + valid.as_secs(),
                s.keyid
            );
            let base = format!("\"@authority\";req: {authority}\n\"@signature-params\": {params}");
            let sig = STANDARD.encode(s.key.sign(base.as_bytes()).as_ref());
            inputs.push(format!("binding{i}={params}"));
            signatures.push(format!("binding{i}=:{sig}:"));
        }
        (inputs.join(", "), signatures.join(", "))
    }
}

/// `@authority` (RFC 9421 2.2.3): the host, lower-cased, with the port only
/// when it is not the scheme's default, as the `Host` header carries it.
fn authority(url: &Url) -> String {
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

/// A Structured Fields String: quoted, `\` and `"` escaped.
fn sf_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn public_x(key: &Ed25519KeyPair) -> String {
    URL_SAFE_NO_PAD.encode(key.public_key().as_ref())
}

/// RFC 7638 thumbprint of an Ed25519 JWK: SHA-256 of its required members
/// in lexical order, without spaces, base64url.
fn thumbprint(x: &str) -> String {
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        canonical.as_bytes(),
    ))
}

/// The DER inside the first `PRIVATE KEY` block of a PEM text.
fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let start = pem
        .find(PEM_BEGIN)
        .ok_or_else(|| format!("no `{PEM_BEGIN}` line"))?;
    let rest = &pem[start + PEM_BEGIN.len()..];
    let end = rest
        .find(PEM_END)
        .ok_or_else(|| format!("no `{PEM_END}` line"))?;
    let b64: String = rest[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    STANDARD
        .decode(b64)
        .map_err(|e| format!("the base64 between the lines is damaged ({e})"))
}

/// A new Ed25519 key as PEM PKCS#8, written to `path` (which must not exist;
/// readable by the owner only on Unix). Returns its signer for `signature_agent`.
pub fn generate(path: &Path, signature_agent: &str) -> Result<Signer, KeyError> {
    let write_err = |source| KeyError::Write {
        path: path.display().to_string(),
        source,
    };
    let rng = SystemRandom::new();
    let v2 = Ed25519KeyPair::generate_pkcs8(&rng)
        .map_err(|_| write_err(std::io::Error::other("the system random source failed")))?;
    // ring writes PKCS#8 v2 (with the public key), which OpenSSL does not
    // read; keep the seed in the v1 form OpenSSL writes.
    let seed = v2
        .as_ref()
        .get(PKCS8_V1_PREFIX.len()..PKCS8_V1_PREFIX.len() + 32)
        .ok_or_else(|| write_err(std::io::Error::other("an unexpected PKCS#8 form")))?;
    let der = [&PKCS8_V1_PREFIX[..], seed].concat();
    let b64 = STANDARD.encode(&der);
    let mut pem = String::from(PEM_BEGIN);
    pem.push('\n');
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(PEM_END);
    pem.push('\n');
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let mut file = open.open(path).map_err(write_err)?;
    std::io::Write::write_all(&mut file, pem.as_bytes()).map_err(write_err)?;
    Signer::from_pem(&pem, &path.display().to_string(), signature_agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8032 test 1 secret key, as PKCS#8 v1 (what OpenSSL writes).
    const RFC8032_PEM: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n-----END PRIVATE KEY-----\n";

    #[test]
    fn reads_a_pkcs8_v1_key_and_names_it_by_its_jwk_thumbprint() {
        let s = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example").unwrap();
        // RFC 8032 7.1 test 1 public key.
        assert_eq!(s.jwk()["x"], "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
        // RFC 8037 A.3 gives this thumbprint for that same key.
        assert_eq!(s.keyid(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
        assert_eq!(s.directory()["keys"][0]["kid"], s.keyid());
    }

    #[test]
    fn bad_keys_are_errors_that_say_what_is_wrong() {
        for (pem, want) in [
            ("", "no `-----BEGIN PRIVATE KEY-----` line"),
            ("-----BEGIN PRIVATE KEY-----\nAAAA", "no `-----END"),
            (
                "-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----",
                "base64",
            ),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
                "rejected",
            ),
        ] {
            let e = Signer::from_pem(pem, "keys/bot.pem", "https://b.test").unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("keys/bot.pem: not an Ed25519"), "{msg}");
            assert!(msg.contains(want), "{msg}");
        }
    }

    #[test]
    fn signs_the_authority_and_the_agent_with_fresh_parameters() {
        let s = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example").unwrap();
        let url = crate::url::parse("https://News.Example:8443/a?b=1").unwrap();
        let now = UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600);
        let mut h = HeaderMap::new();
        s.sign(&url, &mut h, now);
        assert_eq!(h["signature-agent"], "sig1=\"https://bot.example\"");
        let input = h["signature-input"].to_str().unwrap().to_string();
        assert!(input.starts_with("sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");created=1767225600;expires=1767225660;keyid=\"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k\";alg=\"ed25519\";nonce=\""), "{input}");
        assert!(input.ends_with(";tag=\"web-bot-auth\""), "{input}");
        // The signature verifies over the base rebuilt from the headers.
        let params = input.strip_prefix("sig1=").unwrap();
        let base = format!(
            "\"@authority\": news.example:8443\n\"signature-agent\";key=\"sig1\": \"https://bot.example\"\n\"@signature-params\": {params}"
        );
        let sig = h["signature"].to_str().unwrap();
        let raw = STANDARD
            .decode(
                sig.strip_prefix("sig1=:")
                    .unwrap()
                    .strip_suffix(':')
                    .unwrap(),
            )
            .unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ED25519,
            s.key.public_key().as_ref(),
        );
        assert!(public.verify(base.as_bytes(), &raw).is_ok());
        // A second request gets its own nonce, so its own signature.
        let mut h2 = HeaderMap::new();
        s.sign(&url, &mut h2, now);
        assert_ne!(h2["signature-input"], h["signature-input"]);
        // The default port is left out of @authority.
        assert_eq!(
            authority(&crate::url::parse("http://a.test:80/x").unwrap()),
            "a.test"
        );
        assert_eq!(sf_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }

    fn verifies(s: &Signer, base: &str, sig_header: &str, label: &str) -> bool {
        let raw = STANDARD
            .decode(
                sig_header
                    .strip_prefix(&format!("{label}=:"))
                    .unwrap()
                    .strip_suffix(':')
                    .unwrap(),
            )
            .unwrap();
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::ED25519,
            s.key.public_key().as_ref(),
        )
        .verify(base.as_bytes(), &raw)
        .is_ok()
    }

    #[test]
    fn the_string_form_covers_the_whole_header() {
        let s = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example")
            .unwrap()
            .with(AgentForm::String, SignWhen::Always);
        let url = crate::url::parse("http://a.test/x").unwrap();
        let mut h = HeaderMap::new();
        s.sign(
            &url,
            &mut h,
            UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600),
        );
        assert_eq!(h["signature-agent"], "\"https://bot.example\"");
        let input = h["signature-input"].to_str().unwrap();
        assert!(
            input.starts_with("sig1=(\"@authority\" \"signature-agent\");created=1767225600;"),
            "{input}"
        );
        let params = input.strip_prefix("sig1=").unwrap();
        let base = format!(
            "\"@authority\": a.test\n\"signature-agent\": \"https://bot.example\"\n\"@signature-params\": {params}"
        );
        assert!(verifies(
            &s,
            &base,
            h["signature"].to_str().unwrap(),
            "sig1"
        ));
        // A 64-byte nonce, as the architecture draft's verifiers expect.
        let nonce = params
            .split("nonce=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(STANDARD.decode(nonce).unwrap().len(), 64);
    }

    #[test]
    fn when_asked_signs_only_hosts_that_asked() {
        let s = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example")
            .unwrap()
            .with(AgentForm::Dictionary, SignWhen::WhenAsked);
        assert!(!s.signs_for("a.test"));
        s.asked_by("a.test");
        assert!(s.signs_for("a.test") && !s.signs_for("b.test"));
        let always = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example").unwrap();
        assert!(always.signs_for("b.test"));
    }

    #[test]
    fn the_directory_response_is_signed_by_each_key() {
        let s = Signer::from_pem(RFC8032_PEM, "test", "https://bot.example:8443/").unwrap();
        let now = UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600);
        let (input, sig) =
            Signer::directory_headers(&[&s], now, std::time::Duration::from_secs(86_400));
        assert_eq!(
            input,
            "binding0=(\"@authority\";req);created=1767225600;expires=1767312000;keyid=\"kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k\";alg=\"ed25519\";tag=\"http-message-signatures-directory\""
        );
        let params = input.strip_prefix("binding0=").unwrap();
        let base = format!("\"@authority\";req: bot.example:8443\n\"@signature-params\": {params}");
        assert!(verifies(&s, &base, &sig, "binding0"));
        // Debug never shows the key.
        let shown = format!("{s:?}");
        assert!(
            shown.contains("keyid") && !shown.contains("key:"),
            "{shown}"
        );
    }

    #[test]
    fn a_generated_key_reads_back_and_is_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bot.pem");
        let made = generate(&path, "https://b.test").unwrap();
        let cfg = WebBotAuth {
            key_file: Some(path.clone()),
            signature_agent: "https://b.test".into(),
            signature_agent_form: AgentForm::String,
            sign: SignWhen::Always,
            contact: None,
        };
        let read = Signer::from_config(&cfg).unwrap();
        assert_eq!(made.keyid(), read.keyid());
        assert!(matches!(
            generate(&path, "https://b.test"),
            Err(KeyError::Write { .. })
        ));
        let missing = WebBotAuth {
            key_file: Some(dir.path().join("nope.pem")),
            ..cfg
        };
        let e = Signer::from_config(&missing).unwrap_err().to_string();
        assert!(e.contains("nope.pem") && e.contains("cannot read"), "{e}");
    }
}
