//! The HTTP/1.1 side of the fixture server: accept, parse request heads
//! (absolute-URI or `Host`), log, and write replies with their faults.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::reply::{Body, Reply, gzip};
use super::{Handler, Req};

pub(super) async fn accept_loop(
    listener: TcpListener,
    handler: Arc<Handler>,
    log: Arc<Mutex<Vec<Req>>>,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve(stream, handler.clone(), log.clone()));
    }
}

/// Serve one connection: requests in sequence (keep-alive) until close.
async fn serve(mut stream: TcpStream, handler: Arc<Handler>, log: Arc<Mutex<Vec<Req>>>) {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let Some(req) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        log.lock().expect("log lock").push(req.clone());
        let reply = handler(&req);
        if reply.close {
            return;
        }
        if reply.hang {
            std::future::pending::<()>().await;
        }
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        match write_reply(&mut stream, &req, reply).await {
            Ok(true) => continue,
            _ => return,
        }
    }
}

/// Read one request head; `None` at end of stream or on garbage.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Req> {
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 || buf.first().is_some_and(|b| !b.is_ascii_uppercase()) {
            // Not HTTP (a TLS ClientHello, say): answer in plain HTTP and close.
            let _ = stream
                .write_all(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n")
                .await;
            return None;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    buf.drain(..end + 4);
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    // Discard a request body, if any.
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < len {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    buf.drain(..len);

    let (authority, path_query) = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => match rest.find('/') {
            Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
            None => (rest.to_string(), "/".to_string()),
        },
        None => {
            let host = headers
                .iter()
                .find(|(k, _)| k == "host")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            (host, target.clone())
        }
    };
    let mut host = authority.to_ascii_lowercase();
    if let Some(h) = host.strip_suffix(":80") {
        host = h.to_string();
    }
    let (path, query) = match path_query.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (path_query, None),
    };
    Some(Req {
        method,
        host,
        path,
        query,
        headers,
        at: Instant::now(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Write one reply. `Ok(true)` when the connection may serve another request.
async fn write_reply(stream: &mut TcpStream, req: &Req, reply: Reply) -> std::io::Result<bool> {
    let Reply {
        status,
        mut headers,
        body,
        gzip: compress,
        drip,
        reset_after,
        ..
    } = reply;
    let body = match body {
        Body::Bytes(b) if compress => {
            headers.push(("content-encoding".into(), "gzip".into()));
            Body::Bytes(Arc::new(gzip(&b)))
        }
        other => other,
    };
    let no_body = req.method == "HEAD" || status == 304 || status == 204;
    let length: Option<u64> = match &body {
        Body::Bytes(b) => Some(b.len() as u64),
        Body::Repeat { chunk, times } => times.map(|t| t * chunk.len() as u64),
    };
    let keep_alive = length.is_some() && reset_after.is_none();
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in &headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(len) = length {
        head.push_str(&format!("content-length: {len}\r\n"));
    }
    if !keep_alive {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    if no_body {
        stream.flush().await?;
        return Ok(keep_alive);
    }

    let mut sent = 0usize;
    let limit = reset_after.unwrap_or(usize::MAX);
    let mut send = |piece: &[u8]| -> Option<Vec<u8>> {
        // Returns the part of `piece` to send, None once the reset point is reached.
        if sent >= limit {
            return None;
        }
        let take = piece.len().min(limit - sent);
        sent += take;
        Some(piece[..take].to_vec())
    };
    match &body {
        Body::Bytes(b) => {
            if let Some(part) = send(b) {
                write_paced(stream, &part, drip).await?;
            }
        }
        Body::Repeat { chunk, times } => {
            let mut i = 0u64;
            while times.is_none_or(|t| i < t) {
                let Some(part) = send(chunk) else { break };
                write_paced(stream, &part, drip).await?;
                i += 1;
            }
        }
    }
    stream.flush().await?;
    if reset_after.is_some() {
        // RST instead of FIN: the client sees a connection reset mid-body.
        let _ = stream.set_zero_linger();
        return Ok(false);
    }
    Ok(keep_alive)
}

/// Write `data`, at `drip` bytes per second when set.
async fn write_paced(
    stream: &mut TcpStream,
    data: &[u8],
    drip: Option<u64>,
) -> std::io::Result<()> {
    match drip {
        None => stream.write_all(data).await,
        Some(bps) => {
            // Send in pieces of about 1/20 s worth of bytes (at least one byte).
            let piece = (bps / 20).max(1) as usize;
            let pause = Duration::from_secs_f64(piece as f64 / bps as f64);
            for part in data.chunks(piece) {
                stream.write_all(part).await?;
                stream.flush().await?;
                tokio::time::sleep(pause).await;
            }
            Ok(())
        }
    }
}
