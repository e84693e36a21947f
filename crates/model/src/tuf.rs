//! Time-utility functions (TUFs; ChronOS §3.2, Jensen's benefit functions as used by Locke's
//! LBESA and Clark's DASA): the utility a job accrues as a function of *when it completes*,
//! measured from its release. Accrued utility is the TUF at completion; an aborted or
//! unfinished job accrues 0. The *possible* utility of a job is the TUF's maximum, so the
//! accrued utility ratio AUR = accrued / possible is 1 when every job completes at its best.
//!
//! Shapes (all 0 after the termination time X, relative to the release):
//! - `step`: U until X (the default, with U = 1 and X = the deadline: AUR is then the DSR
//!   weighted by utility);
//! - `linear`: from U at release down to 0 at X;
//! - `quadratic`: U·(1 − (t/X)²), flat at release and falling faster towards X;
//! - `piecewise`: straight lines through points (t, u) given in increasing t; before the first
//!   point the first point's utility, after the last point 0 (X = the last point's time).
//!
//! Utilities are `f64` (the papers draw them at random); times are integer nanoseconds.

use crate::time::Time;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum Tuf {
    Step { utility: f64, termination: Time },
    Linear { utility: f64, termination: Time },
    Quadratic { utility: f64, termination: Time },
    Piecewise { points: Vec<(Time, f64)> },
}

impl Tuf {
    /// The default TUF of a task with relative deadline `deadline`: 1 until the deadline.
    pub fn unit_step(deadline: Time) -> Tuf {
        Tuf::Step {
            utility: 1.0,
            termination: deadline,
        }
    }

    /// The utility of completing `t` ns after the release.
    #[inline]
    pub fn at(&self, t: Time) -> f64 {
        match *self {
            Tuf::Step {
                utility,
                termination,
            } => {
                if t <= termination {
                    utility
                } else {
                    0.0
                }
            }
            Tuf::Linear {
                utility,
                termination,
            } => {
                if t >= termination {
                    0.0
                } else {
                    utility * (1.0 - t as f64 / termination as f64)
                }
            }
            Tuf::Quadratic {
                utility,
                termination,
            } => {
                if t >= termination {
                    0.0
                } else {
                    let x = t as f64 / termination as f64;
                    utility * (1.0 - x * x)
                }
            }
            Tuf::Piecewise { ref points } => piecewise_at(points, t),
        }
    }

    /// The most a job can accrue: the TUF's maximum (its possible utility).
    pub fn max(&self) -> f64 {
        match self {
            Tuf::Step { utility, .. }
            | Tuf::Linear { utility, .. }
            | Tuf::Quadratic { utility, .. } => *utility,
            Tuf::Piecewise { points } => points.iter().map(|p| p.1).fold(0.0, f64::max),
        }
    }

    /// After this time (relative to the release) the TUF is 0: completing later is worthless.
    pub fn termination(&self) -> Time {
        match self {
            Tuf::Step { termination, .. }
            | Tuf::Linear { termination, .. }
            | Tuf::Quadratic { termination, .. } => *termination,
            Tuf::Piecewise { points } => points.last().map_or(0, |p| p.0),
        }
    }

    /// Whether the TUF never increases with time (what DASA, LBESA and the GUA family assume:
    /// finishing earlier is never worse). Every built-in shape is; a piecewise TUF may not be.
    pub fn is_non_increasing(&self) -> bool {
        match self {
            Tuf::Piecewise { points } => points.windows(2).all(|w| w[1].1 <= w[0].1),
            _ => true,
        }
    }

    /// Short label for tables and messages (`step`, `linear`, ...).
    pub fn shape(&self) -> &'static str {
        match self {
            Tuf::Step { .. } => "step",
            Tuf::Linear { .. } => "linear",
            Tuf::Quadratic { .. } => "quadratic",
            Tuf::Piecewise { .. } => "piecewise",
        }
    }
}

fn piecewise_at(points: &[(Time, f64)], t: Time) -> f64 {
    let Some(&(t0, u0)) = points.first() else {
        return 0.0;
    };
    if t <= t0 {
        return u0;
    }
    for w in points.windows(2) {
        let ((a, ua), (b, ub)) = (w[0], w[1]);
        if t <= b {
            if b == a {
                return ub;
            }
            return ua + (ub - ua) * ((t - a) as f64 / (b - a) as f64);
        }
    }
    0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_at_their_landmarks() {
        let s = Tuf::Step {
            utility: 5.0,
            termination: 100,
        };
        assert_eq!(
            (s.at(0), s.at(100), s.at(101), s.max()),
            (5.0, 5.0, 0.0, 5.0)
        );
        let l = Tuf::Linear {
            utility: 8.0,
            termination: 100,
        };
        assert_eq!(
            (l.at(0), l.at(25), l.at(100), l.at(500)),
            (8.0, 6.0, 0.0, 0.0)
        );
        let q = Tuf::Quadratic {
            utility: 4.0,
            termination: 100,
        };
        assert_eq!((q.at(0), q.at(50), q.at(100)), (4.0, 3.0, 0.0));
        let p = Tuf::Piecewise {
            points: vec![(10, 6.0), (20, 6.0), (40, 2.0)],
        };
        assert_eq!(
            (p.at(0), p.at(15), p.at(30), p.at(40), p.at(41)),
            (6.0, 6.0, 4.0, 2.0, 0.0)
        );
        assert_eq!((p.max(), p.termination()), (6.0, 40));
        assert!(p.is_non_increasing());
        assert!(!Tuf::Piecewise {
            points: vec![(0, 1.0), (10, 3.0)]
        }
        .is_non_increasing());
    }
}
