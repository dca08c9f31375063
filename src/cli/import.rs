//! `mongobench import plgm --collections FILE --queries FILE [--out FILE]`: turns plgm's workload
//! files into a custom workload document (docs/specs/custom.md §8), written to FILE or standard
//! output; the approximations go to standard error (they are also in the document's header).
//!
//! Exit code 0 when written, 2 when a file cannot be read or imported (one line naming the
//! file and the JSON path, or line and column).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::input::{MAX_MANIFEST_BYTES, invalid, label, read_text};
use crate::workload::plgm::{self, FileKind};

/// Arguments of `mongobench import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The tool whose files are imported.
    #[command(subcommand)]
    pub from: ImportFrom,
}

/// The tools `mongobench import` reads.
#[derive(Debug, clap::Subcommand)]
pub enum ImportFrom {
    /// plgm (percona-load-generator-mongodb): its collection and query JSON files.
    #[command(after_long_help = super::examples::IMPORT)]
    Plgm(PlgmArgs),
}

/// Arguments of `mongobench import plgm`.
#[derive(Debug, clap::Args)]
pub struct PlgmArgs {
    /// plgm's collection definitions (an array, or `{"collections": [...]}`).
    #[arg(long, value_name = "FILE")]
    pub collections: PathBuf,
    /// plgm's query definitions (an array).
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// Where to write the workload document (standard output when absent). `-o` is an output
    /// format elsewhere, so this flag has no short form.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs the subcommand: the document on `out` (unless `--out`), notes on `notes`.
///
/// # Errors
/// An [`Invalid`](super::input::Invalid) error naming the file when an input cannot be read
/// or imported; an error naming FILE when it cannot be written.
pub fn run(
    args: &ImportArgs,
    out: &mut impl Write,
    notes: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let ImportFrom::Plgm(args) = &args.from;
    let read = |path: &Path, what: &str| {
        read_text(path, MAX_MANIFEST_BYTES, what).map_err(|p| invalid(p.render(&label(path))))
    };
    let collections = read(&args.collections, "plgm collections file")?;
    let queries = read(&args.queries, "plgm queries file")?;
    let imported = plgm::import(&collections, &queries).map_err(|e| {
        let file = match e.kind() {
            FileKind::Collections => &args.collections,
            FileKind::Queries => &args.queries,
        };
        invalid(format!("{}: {e}", label(file)))
    })?;
    for note in &imported.notes {
        writeln!(notes, "note: {note}")?;
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, &imported.yaml)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            writeln!(notes, "wrote {}", path.display())?;
        }
        None => out.write_all(imported.yaml.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}
