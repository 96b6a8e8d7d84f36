//! TDMRep's `/.well-known/tdmrep.json`: its rules and the one that applies
//! to a path (fetched by [`crate::net`]).

use serde::Serialize;

use super::robots::location_matches;

/// One rule of `tdmrep.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TdmRule {
    /// Path pattern: a prefix, with `*` for any run of characters and a final `$` to anchor.
    pub location: String,
    pub reserved: bool,
    pub policy: Option<String>,
}

/// Parse `tdmrep.json`: an array of `{location, tdm-reservation, tdm-policy}`.
/// Entries without a location or a `0`/`1` reservation are skipped; `Err` when
/// the document is not a JSON array.
pub(crate) fn parse_tdmrep(body: &[u8]) -> Result<Vec<TdmRule>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let items = value
        .as_array()
        .ok_or_else(|| "not a JSON array".to_string())?;
    let mut rules = Vec::new();
    for item in items {
        let Some(location) = item.get("location").and_then(|l| l.as_str()) else {
            continue;
        };
        let reserved = match item.get("tdm-reservation") {
            Some(serde_json::Value::Number(n)) => match n.as_u64() {
                Some(1) => true,
                Some(0) => false,
                _ => continue,
            },
            Some(serde_json::Value::String(s)) => match tdm_value(s) {
                Some(r) => r,
                None => continue,
            },
            _ => continue,
        };
        let policy = item
            .get("tdm-policy")
            .and_then(|p| p.as_str())
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        rules.push(TdmRule {
            location: location.trim().to_string(),
            reserved,
            policy,
        });
    }
    Ok(rules)
}

/// The rule for `path` (path and query): the longest matching location; the first on a tie.
pub(crate) fn tdmrep_match<'a>(rules: &'a [TdmRule], path: &str) -> Option<&'a TdmRule> {
    let mut best: Option<&TdmRule> = None;
    for r in rules {
        if location_matches(&r.location, path)
            && best.is_none_or(|b| r.location.len() > b.location.len())
        {
            best = Some(r);
        }
    }
    best
}

/// A TDMRep `tdm-reservation` value: `1` reserved, `0` not; anything else is ignored.
pub(super) fn tdm_value(v: &str) -> Option<bool> {
    match v.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}
