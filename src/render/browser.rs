//! The one headless Chromium: found on PATH (or at a configured path),
//! launched on first use, relaunched when it died or its process tree grew
//! past the memory cap. Its resident memory and CPU time are read from
//! `/proc` (Linux; elsewhere they read as zero and the cap is not enforced).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use chromiumoxide::browser::{Browser, BrowserConfig};
use futures_util::StreamExt as _;

use super::RenderError;

/// Names tried on PATH when `crawl.render.browser` is the default.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// The browser binary: `name` as a path when it holds a `/`, otherwise
/// looked up on PATH (with the usual other names of Chromium for `chromium`).
pub fn find(name: &str) -> Result<PathBuf, RenderError> {
    let missing = || {
        RenderError::Missing(format!(
            "rendering needs Chromium, and `{name}` was not found{}: install it (Debian/Ubuntu: \
             `apt-get install chromium`) or set crawl.render.browser to its path",
            if name.contains('/') { "" } else { " on PATH" }
        ))
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return if p.is_file() { Ok(p) } else { Err(missing()) };
    }
    let names: Vec<&str> = if name == "chromium" {
        NAMES.to_vec()
    } else {
        vec![name]
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    for n in names {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(missing())
}

/// A running browser.
pub struct Live {
    pub browser: Browser,
    /// The main process (its children are the renderers, GPU and utility processes).
    pub pid: Option<u32>,
    /// The DevTools connection closed: the browser died or was closed.
    pub dead: Arc<AtomicBool>,
    handler: tokio::task::JoinHandle<()>,
    profile: PathBuf,
}

impl Drop for Live {
    fn drop(&mut self) {
        // The browser is killed now (were it left to kill-on-drop, it would
        // still be writing its profile); the throwaway profile is removed
        // once the process is gone.
        self.handler.abort();
        if let Some(c) = self.browser.get_mut_child() {
            let _ = c.as_mut_inner().start_kill();
        }
        let (pid, profile) = (self.pid, self.profile.clone());
        if pid.is_none_or(exited) {
            let _ = std::fs::remove_dir_all(&profile);
            return;
        }
        std::thread::spawn(move || {
            for _ in 0..60 {
                if pid.is_none_or(exited) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = std::fs::remove_dir_all(&profile);
        });
    }
}

impl Live {
    /// The DevTools connection closed, or the main process exited (a zombie
    /// counts as gone; `/proc` is read on Linux, elsewhere the connection alone tells).
    pub(crate) fn is_dead(&self) -> bool {
        if self.dead.load(Ordering::SeqCst) {
            return true;
        }
        self.pid.is_some_and(exited)
    }
}

/// The process ended (gone, or a zombie not yet reaped); `false` where
/// `/proc` cannot tell.
fn exited(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => text
            .rfind(')')
            .and_then(|i| text[i + 1..].split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
        Err(_) => true,
    }
}

/// Launches made by this process, for distinct profile folders.
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// Launch `exe` headless. The browser never reaches the network by itself:
/// every request of a page is answered by the crawler (`intercept`), and a
/// black-hole proxy catches anything that would slip past.
pub async fn launch(exe: &Path, max_memory: u64) -> Result<Live, RenderError> {
    let n = LAUNCHES.fetch_add(1, Ordering::SeqCst);
    let profile = std::env::temp_dir().join(format!("scraper-chromium-{}-{n}", std::process::id()));
    // A V8 heap cap per renderer: a quarter of the cap, at least 64 MB.
    let heap_mb = ((max_memory / 4) >> 20).max(64);
    let mut cfg = BrowserConfig::builder()
        .chrome_executable(exe)
        .user_data_dir(&profile)
        .launch_timeout(std::time::Duration::from_secs(20))
        .args([
            "disable-gpu",
            "disable-extensions",
            "disable-component-update",
            "disable-domain-reliability",
            "no-pings",
            "mute-audio",
            "hide-scrollbars",
            "blink-settings=imagesEnabled=false",
            "proxy-server=http://127.0.0.1:9",
            "proxy-bypass-list=<-loopback>",
        ])
        .arg(format!("js-flags=--max-old-space-size={heap_mb}"));
    // The sandbox cannot start as root (CI containers): only then is it off.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        cfg = cfg.no_sandbox();
    }
    let cfg = cfg.build().map_err(RenderError::Launch)?;
    let (mut browser, mut handler) = Browser::launch(cfg)
        .await
        .map_err(|e| RenderError::Launch(format!("cannot start {}: {e}", exe.display())))?;
    let pid = browser.get_mut_child().and_then(|c| c.as_mut_inner().id());
    let dead = Arc::new(AtomicBool::new(false));
    let flag = dead.clone();
    let handler = tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            if let Err(e) = event {
                tracing::trace!(error = %e, "browser connection");
            }
        }
        flag.store(true, Ordering::SeqCst);
    });
    tracing::info!(browser = %exe.display(), pid, "browser started");
    Ok(Live {
        browser,
        pid,
        dead,
        handler,
        profile,
    })
}

/// Memory (proportional set size, bytes) and CPU milliseconds of `pid` and all its descendants.
pub fn tree_usage(pid: Option<u32>) -> (u64, u64) {
    let Some(root) = pid else { return (0, 0) };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    // (pid, parent, rss pages, cpu ticks) of every process.
    let mut procs: Vec<(u32, u32, u64, u64)> = Vec::new();
    for e in dir.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(s) = stat(p) {
            procs.push(s);
        }
    }
    let mut tree = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (p, parent, _, _) in &procs {
            if tree.contains(parent) && !tree.contains(p) {
                tree.push(*p);
                grew = true;
            }
        }
    }
    // SAFETY: sysconf has no preconditions.
    let (page, ticks) = unsafe {
        (
            libc::sysconf(libc::_SC_PAGESIZE).max(1) as u64,
            libc::sysconf(libc::_SC_CLK_TCK).max(1) as u64,
        )
    };
    // Proportional set sizes: the processes share most of their pages, so
    // summing resident sizes would count the shared libraries once each.
    procs
        .iter()
        .filter(|(p, ..)| tree.contains(p))
        .fold((0, 0), |(mem, cpu), (p, _, r, t)| {
            let own = pss(*p).unwrap_or(r * page);
            (mem + own, cpu + t * 1000 / ticks)
        })
}

/// The proportional set size of `pid` in bytes (`/proc/<pid>/smaps_rollup`).
fn pss(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Pss:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb << 10)
}

/// `(pid, ppid, rss pages, CPU ticks: its own and its waited-for children's)` from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, u32, u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last `)`.
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13)
    // cstime(14) ... rss(21). The children's times count the processes that
    // already ended (a closed tab's renderer) and were waited for.
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let cpu = num(11)? + num(12)? + num(13)? + num(14)?;
    Some((pid, num(1)? as u32, num(21)?, cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_browser_names_what_to_install() {
        let e = find("no-such-browser-here").unwrap_err().to_string();
        assert!(e.contains("apt-get install chromium"), "{e}");
        assert!(e.contains("crawl.render.browser"), "{e}");
        let e = find("/nowhere/chromium").unwrap_err().to_string();
        assert!(e.contains("/nowhere/chromium"), "{e}");
    }

    #[test]
    fn this_process_has_memory_and_cpu() {
        let (rss, _) = tree_usage(Some(std::process::id()));
        assert!(rss > 1 << 20, "{rss}");
        assert_eq!(tree_usage(None), (0, 0));
    }
}
