//! [`Reply`]: what the fixture server answers, including the faults of a
//! hostile web (delays, drips, endless bodies, hangs, resets, gzip bombs).

use std::io::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[derive(Debug, Clone)]
pub(super) enum Body {
    Bytes(Arc<Vec<u8>>),
    /// `chunk` sent `times` times, or forever when `None`.
    Repeat {
        chunk: Arc<Vec<u8>>,
        times: Option<u64>,
    },
}

/// An answer, with the faults a hostile web can serve.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Body,
    pub(super) gzip: bool,
    pub(super) delay: Duration,
    pub(super) drip: Option<u64>,
    pub(super) reset_after: Option<usize>,
    pub(super) hang: bool,
    pub(super) close: bool,
}

impl Reply {
    /// A reply with this status and an empty body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Bytes(Arc::new(Vec::new())),
            gzip: false,
            delay: Duration::ZERO,
            drip: None,
            reset_after: None,
            hang: false,
            close: false,
        }
    }

    /// The status this reply answers with.
    pub fn status_code(&self) -> u16 {
        self.status
    }

    /// 200 with a body of this content type.
    pub fn bytes(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200)
            .header("content-type", content_type)
            .body(body)
    }

    pub fn html(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("text/html; charset=utf-8", body)
    }

    pub fn text(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("text/plain; charset=utf-8", body)
    }

    pub fn xml(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes("application/xml", body)
    }

    pub fn not_found() -> Reply {
        Reply::status(404).header("content-type", "text/plain")
    }

    /// A redirect (301, 302, 303, 307, 308) to `location` (absolute or relative).
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    /// Read the request, then never answer.
    /// Read the request, then close the connection without a word.
    pub fn close() -> Reply {
        Reply {
            close: true,
            ..Reply::status(200)
        }
    }

    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::status(200)
        }
    }

    /// 200 whose body never ends (no Content-Length, sent as fast as it is read).
    pub fn endless(content_type: &str) -> Reply {
        Reply::status(200)
            .header("content-type", content_type)
            .repeat(vec![b'a'; 16 * 1024], None)
    }

    /// A gzip body that decodes to `decoded` zero bytes (rounded up to MiB),
    /// built from repeated gzip members so that it costs nothing to serve.
    pub fn gzip_bomb(content_type: &str, decoded: u64) -> Reply {
        static MEMBER: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
        let member = MEMBER.get_or_init(|| Arc::new(gzip(&vec![0u8; 1 << 20])));
        let times = decoded.div_ceil(1 << 20);
        Reply {
            body: Body::Repeat {
                chunk: member.clone(),
                times: Some(times),
            },
            ..Reply::status(200)
                .header("content-type", content_type)
                .header("content-encoding", "gzip")
        }
    }

    /// Add a header (kept in order; duplicates allowed).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// Replace the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        self.body = Body::Bytes(Arc::new(body.into()));
        self
    }

    /// Body is `chunk` repeated `times` times (forever when `None`).
    pub fn repeat(mut self, chunk: Vec<u8>, times: Option<u64>) -> Reply {
        self.body = Body::Repeat {
            chunk: Arc::new(chunk),
            times,
        };
        self
    }

    /// gzip the body and say so in `Content-Encoding`.
    pub fn gzip(mut self) -> Reply {
        self.gzip = true;
        self
    }

    /// Wait this long after the request before sending the headers.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Send the body at this many bytes per second.
    pub fn drip(mut self, bytes_per_sec: u64) -> Reply {
        self.drip = Some(bytes_per_sec.max(1));
        self
    }

    /// Announce the full length, send `n` body bytes, then reset the connection.
    pub fn reset_after(mut self, n: usize) -> Reply {
        self.reset_after = Some(n);
        self
    }
}

/// gzip `data` in one member.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).expect("gzip into memory");
    enc.finish().expect("gzip into memory")
}
