//! What a runner Job is doing right now, as it publishes it for the operator: one ConfigMap per
//! benchmark × platform ([`names::activity_name`]), its data a versioned [`Activity`]. The
//! operator names the running cell in `status.progress` and in events from it.

use std::collections::BTreeMap;

use super::step::RunnerStep;

/// The version of the activity's data this code writes and reads; an activity of another
/// version is ignored (the operator then shows no activity rather than a wrong one).
pub const ACTIVITY_VERSION: u32 = 1;

const VERSION_KEY: &str = "version";

/// One activity of a runner: seeding a target to a size, or a phase of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub target: String,
    pub size: String,
    /// The cell, for the phases of a cell (none while seeding or bringing up).
    pub cell: Option<String>,
    pub phase: RunnerStep,
}

impl Activity {
    /// The ConfigMap data of this activity.
    pub fn into_data(self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::from([
            (VERSION_KEY.to_owned(), ACTIVITY_VERSION.to_string()),
            ("target".to_owned(), self.target),
            ("size".to_owned(), self.size),
            ("phase".to_owned(), self.phase.to_string()),
        ]);
        if let Some(cell) = self.cell {
            data.insert("cell".to_owned(), cell);
        }
        data
    }

    /// The activity a ConfigMap's data holds, if it is complete and of [`ACTIVITY_VERSION`].
    pub fn from_data(data: &BTreeMap<String, String>) -> Option<Activity> {
        if data.get(VERSION_KEY)?.parse::<u32>().ok()? != ACTIVITY_VERSION {
            return None;
        }
        Some(Activity {
            target: data.get("target")?.clone(),
            size: data.get("size")?.clone(),
            cell: data.get("cell").cloned(),
            phase: data.get("phase")?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::step::CellStep;

    #[test]
    fn an_activity_round_trips_through_its_data_and_other_versions_are_ignored() {
        for (cell, phase) in [
            (None, RunnerStep::Seeding),
            (
                Some("a.x86.1k.r2".to_owned()),
                RunnerStep::Cell(CellStep::Measuring),
            ),
        ] {
            let a = Activity {
                target: "a".into(),
                size: "1k".into(),
                cell,
                phase,
            };
            assert_eq!(Activity::from_data(&a.clone().into_data()), Some(a));
        }
        let mut data = Activity {
            target: "a".into(),
            size: "1k".into(),
            cell: None,
            phase: RunnerStep::Seeding,
        }
        .into_data();
        assert_eq!(data["version"], "1");
        data.insert("version".into(), "2".into());
        assert_eq!(Activity::from_data(&data), None);
        data.remove("version");
        assert_eq!(Activity::from_data(&data), None);
        assert_eq!(Activity::from_data(&BTreeMap::new()), None);
    }
}
