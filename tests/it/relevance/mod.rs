//! Relevance: the judgement on the labelled pages, in English and in the
//! page's own language.

mod labelled;
mod languages;
