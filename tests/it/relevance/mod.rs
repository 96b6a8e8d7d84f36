//! Relevance: the judgement on the labelled pages, in English and in the
//! page's own language, and the fitted model's weights.

mod fit;
mod labelled;
mod languages;
