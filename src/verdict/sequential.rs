//! When a precision goal stops adding slots (docs/results.md, "Precision"): Stein's two-stage
//! design. The pilot's slots (the planned repetitions) measure the spread of each
//! comparison's per-slot log ratios; that spread alone decides how many slots the comparison
//! needs for its MDE to reach the goal, and the test then takes its spread, and its degrees of
//! freedom, from the pilot (`Delta::paired` with a pilot). Stopping when the MDE of the data
//! so far reaches the goal would stop preferentially on runs whose spread came out low, just
//! when the t statistic is too large: its false positives are well above the level
//! (`simulation`); the two-stage test's are not, at any number of slots.

use super::stats::{ALPHA, MIN_REPETITIONS, log_ratio_sd, paired_mde_percent, two_stage_pairs};

/// A precision goal as Stein's two-stage design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoStage {
    /// Slots of the pilot stage: the planned repetitions, at least [`MIN_REPETITIONS`].
    pub pilot: usize,
    /// The largest MDE any comparison may keep, percent.
    pub goal_percent: f64,
    /// The tests the verdict family will hold (declared metrics × comparisons): the MDE is
    /// stated at the family's first Holm level, ALPHA ÷ family.
    pub family: usize,
    /// Most slots.
    pub max_slots: usize,
}

/// Where one comparison stands against the goal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Need {
    /// Its pilot is not complete.
    Pilot {
        /// Valid pairs so far.
        pairs: usize,
    },
    /// Its pilot's spread asks for `slots` pairs.
    Slots {
        /// Pairs it needs.
        slots: usize,
        /// Pairs it has.
        pairs: usize,
        /// Its MDE at `pairs`, percent.
        mde_percent: f64,
    },
    /// Its pilot's spread asks for more than the most slots.
    Unreachable {
        /// Its MDE now, percent.
        mde_percent: f64,
    },
}

impl Need {
    /// Whether the comparison has what it needs.
    pub fn is_met(&self) -> bool {
        matches!(self, Need::Slots { slots, pairs, .. } if pairs >= slots)
    }

    /// Its MDE now, once the pilot is complete.
    pub fn mde_percent(&self) -> Option<f64> {
        match *self {
            Need::Pilot { .. } => None,
            Need::Slots { mde_percent, .. } | Need::Unreachable { mde_percent } => {
                Some(mde_percent)
            }
        }
    }

    /// How far it is from the goal, for choosing the comparison furthest from it.
    fn shortfall(&self) -> f64 {
        match *self {
            Need::Pilot { .. } => f64::INFINITY,
            Need::Unreachable { .. } => f64::MAX,
            Need::Slots { slots, pairs, .. } => slots as f64 - pairs as f64,
        }
    }
}

/// Where the comparisons of a size stand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Standing {
    /// Every comparison has the slots its pilot asked for.
    Reached {
        /// The widest MDE, percent.
        widest_mde_percent: f64,
    },
    /// A comparison needs more.
    Short {
        /// The comparison furthest from what it needs.
        index: usize,
        /// What it needs.
        need: Need,
    },
}

impl TwoStage {
    /// The design for a goal of `goal_percent` after `planned` slots, in a family of `family`
    /// tests, up to `max_slots` slots.
    pub fn new(planned: usize, goal_percent: f64, family: usize, max_slots: usize) -> TwoStage {
        TwoStage {
            pilot: planned.max(MIN_REPETITIONS),
            goal_percent,
            family: family.max(1),
            max_slots,
        }
    }

    /// The two-sided level the MDE is stated at: the family's first Holm level.
    pub fn level(&self) -> f64 {
        ALPHA / self.family as f64
    }

    /// Where one comparison stands with `pairs` (baseline, candidate, each positive) so far,
    /// in slot order.
    pub fn need(&self, pairs: &[(f64, f64)]) -> Need {
        if pairs.len() < self.pilot {
            return Need::Pilot { pairs: pairs.len() };
        }
        // The pilot's spread as the two-stage test takes it ([`Delta::paired`] with a pilot),
        // and the MDE that test states over the pairs so far.
        let sd = log_ratio_sd(&pairs[..self.pilot]);
        let df = (self.pilot - 1) as f64;
        let mde = paired_mde_percent(sd, pairs.len(), df, self.level());
        match two_stage_pairs(
            sd,
            self.pilot,
            self.goal_percent,
            self.level(),
            self.max_slots,
        ) {
            Some(slots) => Need::Slots {
                slots,
                pairs: pairs.len(),
                mde_percent: mde,
            },
            None => Need::Unreachable { mde_percent: mde },
        }
    }

    /// Where `comparisons` (each one's pairs so far, in slot order) stand together.
    pub fn standing(&self, comparisons: &[Vec<(f64, f64)>]) -> Standing {
        let needs: Vec<Need> = comparisons.iter().map(|p| self.need(p)).collect();
        if !needs.is_empty() && needs.iter().all(Need::is_met) {
            let widest = needs
                .iter()
                .filter_map(Need::mde_percent)
                .fold(0.0, f64::max);
            return Standing::Reached {
                widest_mde_percent: widest,
            };
        }
        let (index, need) = needs
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_met())
            .max_by(|a, b| a.1.shortfall().total_cmp(&b.1.shortfall()))
            .map_or((0, Need::Pilot { pairs: 0 }), |(i, n)| (i, *n));
        Standing::Short { index, need }
    }
}
