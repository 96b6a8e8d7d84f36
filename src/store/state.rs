//! Small state files under `data/state/`: `next_id`, `last_run.json`,
//! `frontier.jsonl`, `validators.json`; written atomically (write, fsync, rename).
//!
//! OWNER: store work (part of issue 2). Interface; bodies are placeholders.
