//! The event log: `data/state/crawl.log`, JSON Lines, one [`Event`] per
//! thing that happens in a run (schema `v: 1`; the kinds and fields are
//! `crate::record::event`). The file is started afresh by each run; the
//! dashboard follows it and the last line of a finished run is a `done`
//! event naming what stopped it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::record::Event;

/// Schema version written into every event.
pub(crate) const SCHEMA: u32 = 1;

/// Appends events; write errors are reported once and then ignored (the log
/// is for watching a run, never a reason to stop it).
pub struct EventLog {
    out: Option<BufWriter<File>>,
    failed: bool,
}

impl EventLog {
    /// Start `path` afresh.
    pub fn create(path: &Path) -> EventLog {
        match File::create(path) {
            Ok(f) => EventLog {
                out: Some(BufWriter::new(f)),
                failed: false,
            },
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot write the event log");
                EventLog {
                    out: None,
                    failed: true,
                }
            }
        }
    }

    /// A log that writes nowhere (check-url, tests).
    pub fn none() -> EventLog {
        EventLog {
            out: None,
            failed: false,
        }
    }

    /// Write one event: `{"v":1,"t":"...","event":kind, ...fields}`.
    pub(crate) fn emit(&mut self, event: Event) {
        let Some(out) = self.out.as_mut() else { return };
        // Invariant: events hold strings, numbers and lists, which always serialise.
        let Ok(Value::Object(mut obj)) = serde_json::to_value(&event) else {
            unreachable!("an event serialises to a JSON object")
        };
        obj.insert("v".into(), json!(SCHEMA));
        obj.insert(
            "t".into(),
            json!(
                chrono::Utc::now()
                    .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string()
            ),
        );
        let line = Value::Object(obj);
        let res = serde_json::to_writer(&mut *out, &line)
            .map_err(std::io::Error::from)
            .and_then(|_| out.write_all(b"\n"));
        if let Err(e) = res
            && !self.failed
        {
            self.failed = true;
            tracing::warn!(error = %e, "cannot write the event log");
        }
    }

    /// Push buffered events to the file (done every flush tick and at the end).
    pub fn flush(&mut self) {
        if let Some(out) = self.out.as_mut() {
            let _ = out.flush();
        }
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.flush();
    }
}
