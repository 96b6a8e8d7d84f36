//! robots.txt as the AI-use signals read it: the grouping rule shared by
//! `Content-Signal` (`content_signal.rs`), `Content-Usage` (`aipref.rs`)
//! and `License` (`rsl.rs`) lines, robots-style
//! path patterns, and the one reading of a product token ([`agent_token`]).
//! A leaf: it imports no other file of `consent`.

/// The product token of the crawler's `user_agent` (`scraper/0.1 (+url)`
/// gives `scraper`), which robots.txt groups, Content-Signal and
/// Content-Usage lines and `X-Robots-Tag` prefixes are matched against; `*`
/// when it has none.
pub fn agent_token(user_agent: &str) -> String {
    let t = token_of(user_agent, false);
    if t.is_empty() { "*".to_string() } else { t }
}

/// The product token of a robots.txt `User-agent:` line, where `*` names every crawler.
pub(super) fn token(v: &str) -> String {
    token_of(v, true)
}

/// The leading letters, digits, `-` and `_` (and `*` with `wildcard`) of
/// `v`, lower-cased: the one reading of a product token.
fn token_of(v: &str, wildcard: bool) -> String {
    let t: String = v
        .trim()
        .chars()
        .take_while(|c| {
            c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || (wildcard && *c == '*')
        })
        .collect();
    t.to_ascii_lowercase()
}

/// The values of a robots.txt body's `field` lines (lower-case name) that
/// apply to `agent`: those of every group naming `agent`, or else of every
/// `*` group (a group that names us without such lines gives none); and,
/// apart, those outside any group. Comments are cut.
pub(super) fn robots_lines(
    robots_txt: &[u8],
    agent: &str,
    field: &str,
) -> (Vec<String>, Vec<String>) {
    struct Group {
        agents: Vec<String>,
        lines: Vec<String>,
    }
    let text = String::from_utf8_lossy(robots_txt);
    let mut groups: Vec<Group> = Vec::new();
    let mut global: Vec<String> = Vec::new();
    let mut in_agents = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key == "user-agent" {
            if !in_agents {
                groups.push(Group {
                    agents: Vec::new(),
                    lines: Vec::new(),
                });
            }
            in_agents = true;
            if let Some(g) = groups.last_mut() {
                g.agents.push(token(value));
            }
            continue;
        }
        if key == "sitemap" {
            continue; // not a group member; does not end the agent lines either way
        }
        in_agents = false;
        if key == field {
            match groups.last_mut() {
                Some(g) => g.lines.push(value.to_string()),
                None => global.push(value.to_string()),
            }
        }
    }
    let agent = agent.to_ascii_lowercase();
    let pick = |name: &str| -> Option<Vec<String>> {
        let mut named = groups
            .iter()
            .filter(|g| g.agents.iter().any(|a| a == name))
            .peekable();
        named.peek()?;
        Some(named.flat_map(|g| g.lines.iter().cloned()).collect())
    };
    let group = pick(&agent).or_else(|| pick("*")).unwrap_or_default();
    (group, global)
}

/// Robots-style pattern match: `*` any run, a final `$` anchors, otherwise a prefix.
pub(super) fn location_matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut pos = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !path.starts_with(part) {
                return false;
            }
            pos = part.len();
            continue;
        }
        let last = i == parts.len() - 1;
        if last && anchored {
            return path.len() >= pos + part.len() && path.ends_with(part);
        }
        match path[pos..].find(part) {
            Some(at) => pos += at + part.len(),
            None => return false,
        }
    }
    !anchored || pos == path.len()
}
