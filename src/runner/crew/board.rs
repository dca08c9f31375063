//! The board: where the client processes of a run exchange orders and replies, a directory
//! (processes on one machine) or a ConfigMap (the pods of an Indexed Job). Each key is written
//! by one process only, so writers never race.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams, PostParams};

pub use crate::contract::names::JOB_UID_ENV;

/// A place every client process can read and write small JSON values.
#[derive(Clone)]
pub enum Board {
    /// One file per key in a directory (processes on one machine).
    Dir(PathBuf),
    /// One data key per key of a ConfigMap (pods of a Job).
    ConfigMap(Box<ConfigMapBoard>),
}

/// Where the pods of a Job coordinate: a ConfigMap created by the coordinator and owned by
/// `owner`. Keys carry `prefix` (the Job's uid): what the pods of an earlier Job of the same
/// name left is never read.
#[derive(Clone)]
pub struct ConfigMapBoard {
    pub api: Api<ConfigMap>,
    pub name: String,
    pub prefix: String,
    pub owner: Option<OwnerReference>,
}

impl Board {
    /// How often a waiting process looks at the board.
    pub(super) fn poll(&self) -> Duration {
        match self {
            Board::Dir(_) => Duration::from_millis(50),
            Board::ConfigMap(_) => Duration::from_millis(400),
        }
    }

    /// How far ahead of now a common start time is set: every process must have seen the
    /// order by then.
    pub(super) fn lead(&self) -> Duration {
        match self {
            Board::Dir(_) => Duration::from_millis(500),
            Board::ConfigMap(_) => Duration::from_secs(3),
        }
    }

    /// Creates the board if it does not exist (the coordinator, at start).
    pub async fn create(&self) -> Result<(), String> {
        match self {
            Board::Dir(dir) => std::fs::create_dir_all(dir)
                .map_err(|e| format!("creating the board {}: {e}", dir.display())),
            Board::ConfigMap(board) => {
                let ConfigMapBoard {
                    api, name, owner, ..
                } = &**board;
                let cm = ConfigMap {
                    metadata: kube::api::ObjectMeta {
                        name: Some(name.clone()),
                        owner_references: owner.clone().map(|o| vec![o]),
                        ..Default::default()
                    },
                    ..ConfigMap::default()
                };
                match api.create(&PostParams::default(), &cm).await {
                    Ok(_) => Ok(()),
                    Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
                    Err(e) => Err(format!("creating the board ConfigMap {name}: {e}")),
                }
            }
        }
    }

    /// Every key and value on the board (empty before it exists).
    pub async fn read(&self) -> Result<BTreeMap<String, String>, String> {
        match self {
            Board::Dir(dir) => {
                let mut out = BTreeMap::new();
                let entries = match std::fs::read_dir(dir) {
                    Ok(e) => e,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
                    Err(e) => return Err(format!("reading the board {}: {e}", dir.display())),
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') {
                        continue;
                    }
                    if let Ok(text) = std::fs::read_to_string(entry.path()) {
                        out.insert(name, text);
                    }
                }
                Ok(out)
            }
            Board::ConfigMap(board) => match board.api.get_opt(&board.name).await {
                Ok(cm) => Ok(cm
                    .and_then(|c| c.data)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_prefix(board.prefix.as_str())?.to_owned(), v))
                    })
                    .collect()),
                Err(e) => Err(format!("reading the board ConfigMap {}: {e}", board.name)),
            },
        }
    }

    /// Sets one key (each key has one writer).
    pub async fn write(&self, key: &str, value: String) -> Result<(), String> {
        match self {
            Board::Dir(dir) => {
                // Written aside and renamed, so a reader never sees half a value.
                let aside = dir.join(format!(".{key}"));
                std::fs::write(&aside, value)
                    .and_then(|()| std::fs::rename(&aside, dir.join(key)))
                    .map_err(|e| format!("writing {key} on the board {}: {e}", dir.display()))
            }
            Board::ConfigMap(board) => {
                let ConfigMapBoard {
                    api, name, prefix, ..
                } = &**board;
                let patch = serde_json::json!({"data": {format!("{prefix}{key}"): value}});
                api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("writing {key} on the board ConfigMap {name}: {e}"))
            }
        }
    }
}
