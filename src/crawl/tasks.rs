//! The worker tasks in flight: a `JoinSet` that remembers which host and URL
//! each task holds a slot for, so that a task that panicked (or was
//! abandoned) still gives its host's slot back and is logged with its cause.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::{Id, JoinSet};

use super::worker::{self, Ctx, Done, Job, panic_message};
use crate::url::Url;

/// A task that ended without a [`Done`].
#[derive(Debug)]
pub(crate) struct Lost {
    pub host: String,
    pub url: Url,
    /// The panic's message, or `None` when the task was aborted.
    pub panic: Option<String>,
}

#[derive(Default)]
pub(crate) struct Tasks {
    set: JoinSet<Done>,
    jobs: HashMap<Id, (String, Url)>,
}

impl Tasks {
    pub(crate) fn len(&self) -> usize {
        self.set.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Start a fetch.
    pub(crate) fn spawn(&mut self, ctx: Arc<Ctx>, job: Job) {
        let key = (job.host.clone(), job.url.clone());
        let handle = self.set.spawn(worker::work(ctx, job));
        self.jobs.insert(handle.id(), key);
    }

    /// The next task to end; `None` when none is in flight.
    pub(crate) async fn next(&mut self) -> Option<Result<Done, Lost>> {
        let ended = self.set.join_next_with_id().await?;
        Some(match ended {
            Ok((id, done)) => {
                self.jobs.remove(&id);
                Ok(done)
            }
            Err(e) => {
                let (host, url) = self.jobs.remove(&e.id()).unwrap_or_else(|| {
                    // Invariant: every spawned task's id is recorded in `spawn`.
                    unreachable!("a worker task ended that was never started")
                });
                Err(Lost {
                    host,
                    url,
                    panic: panic_message(e),
                })
            }
        })
    }

    /// Abandon every task in flight (they end as [`Lost`] without a panic).
    pub(crate) fn abort_all(&mut self) {
        self.set.abort_all();
    }
}
