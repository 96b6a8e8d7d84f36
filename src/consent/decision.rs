//! The one decision the crawl takes from a page's AI-use signals, under the
//! configured `ai_use_policy`.

use serde::{Deserialize, Serialize};

use super::{Signals, reserves_ai_training};

/// What to do with publishers' AI-use reservations (`crawl.ai_use_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AiUsePolicy {
    #[default]
    Respect,
    Record,
    Ignore,
}

/// What the crawl does with a relevant article, given its AI-use signals and
/// `ai_use_policy`: the one rule the worker's store decision and `check-url`
/// both follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AiDecision {
    /// No signal reserves AI training: stored.
    NoReservation,
    /// Reserved, `respect`: withheld (`withheld: ai-use`).
    Withhold,
    /// Reserved, `record`: stored and marked `ai_reserved`.
    StoreMarked,
    /// Reserved, `ignore`: stored.
    StoreAnyway,
}

impl AiDecision {
    pub fn new(signals: &Signals, policy: AiUsePolicy) -> AiDecision {
        if !reserves_ai_training(signals) {
            return AiDecision::NoReservation;
        }
        match policy {
            AiUsePolicy::Respect => AiDecision::Withhold,
            AiUsePolicy::Record => AiDecision::StoreMarked,
            AiUsePolicy::Ignore => AiDecision::StoreAnyway,
        }
    }

    /// Does the publisher reserve AI training?
    pub fn reserved(self) -> bool {
        self != AiDecision::NoReservation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_follows_the_reservation_and_the_policy() {
        let mut reserved = Signals::default();
        reserved.tdm_headers(Some("1"), None);
        let mut open = Signals::default();
        open.tdm_headers(Some("0"), None);
        for (signals, policy, want) in [
            (&open, AiUsePolicy::Respect, AiDecision::NoReservation),
            (&open, AiUsePolicy::Ignore, AiDecision::NoReservation),
            (
                &Signals::default(),
                AiUsePolicy::Record,
                AiDecision::NoReservation,
            ),
            (&reserved, AiUsePolicy::Respect, AiDecision::Withhold),
            (&reserved, AiUsePolicy::Record, AiDecision::StoreMarked),
            (&reserved, AiUsePolicy::Ignore, AiDecision::StoreAnyway),
        ] {
            let got = AiDecision::new(signals, policy);
            assert_eq!(got, want, "{:?} under {policy:?}", signals.labels());
            assert_eq!(got.reserved(), reserves_ai_training(signals));
        }
    }
}
