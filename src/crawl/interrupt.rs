//! Requests from outside the loop to stop: Ctrl-C or SIGTERM, once
//! ([`Interrupt::Stop`]) or twice ([`Interrupt::Abort`]).

use tokio::sync::mpsc;

/// A request from outside the loop to stop.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Interrupt {
    /// First Ctrl-C / SIGTERM: finish in-flight fetches, save, exit.
    Stop,
    /// Second: abandon in-flight fetches, save, exit.
    Abort,
}

/// Ctrl-C or SIGTERM once: [`Interrupt::Stop`]; again: [`Interrupt::Abort`].
pub(super) fn listen() -> mpsc::UnboundedReceiver<Interrupt> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let mut count = 0;
        loop {
            #[cfg(unix)]
            let got = tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => true,
            };
            #[cfg(not(unix))]
            let got = tokio::signal::ctrl_c().await.is_ok();
            if !got {
                break;
            }
            count += 1;
            let sig = if count == 1 {
                Interrupt::Stop
            } else {
                Interrupt::Abort
            };
            if tx.send(sig).is_err() {
                break;
            }
        }
    });
    rx
}
