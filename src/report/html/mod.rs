//! One self-contained HTML page: the verdicts, plots (inline SVG) and the facts behind them.
//! Nothing is fetched: no script, font, image or style sheet outside the page, and a
//! Content-Security-Policy that forbids them. Every text taken from a result is escaped.
//!
//! Uses the report's `groups`, `plots` and `ReportError`, the verdicts, and the results.
//! `markup` holds the shared elements; each other file draws one kind of section, and `page`
//! puts them together.

mod canary;
mod explain;
mod facts;
mod figures;
mod markup;
mod page;
mod summary;
mod sweep;
mod timeline;
mod verdicts;

pub use page::render_html;

#[cfg(test)]
mod summary_tests;
#[cfg(test)]
mod tests;
