//! The total order on entities. Every policy maps an entity to a [`Key`]; a smaller key is
//! more urgent, and keys of distinct entities are never equal (the last fields are the task
//! index, job index and thread index), so no decision ever depends on hash or arrival order.

use crate::policy::EntityInfo;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Key {
    /// The policy's criterion (absolute deadline for EDF, inverted priority for FP, ...).
    pub primary: u64,
    /// The policy's first tie-break (release time for EDF and FP).
    pub secondary: u64,
    pub task: u32,
    pub job: u64,
    pub thread: u32,
}

impl Key {
    #[inline]
    pub fn new(primary: u64, secondary: u64, e: &EntityInfo) -> Key {
        Key {
            primary,
            secondary,
            task: e.task,
            job: e.job,
            thread: e.thread,
        }
    }

    /// The key just before this one in the total order (its lexicographic predecessor): an
    /// entity keyed so is more urgent than this one and than nothing this one is not. How a
    /// partitioned domain places MrsP's helper in the place of the spinner it stands in for
    /// ([`Policy::place`](crate::Policy::place)).
    #[inline]
    pub fn before(self) -> Key {
        let mut k = self;
        if k.thread > 0 {
            k.thread -= 1;
            return k;
        }
        k.thread = u32::MAX;
        if k.job > 0 {
            k.job -= 1;
            return k;
        }
        k.job = u64::MAX;
        if k.task > 0 {
            k.task -= 1;
            return k;
        }
        k.task = u32::MAX;
        if k.secondary > 0 {
            k.secondary -= 1;
            return k;
        }
        k.secondary = u64::MAX;
        k.primary = k.primary.saturating_sub(1);
        k
    }
}

/// A policy's comparator, as a function from entity to key.
pub trait Order: Send + 'static {
    fn key(&self, e: &EntityInfo) -> Key;
}

/// `own` ordered as a locking protocol lends it `to`'s criterion and first tie-break, its own
/// task, job and thread still breaking ties (the rule of [`Policy::boost`](crate::Policy::boost)).
#[inline]
pub fn boosted(own: Key, to: Option<crate::policy::Urgency>) -> Key {
    match to {
        Some((primary, secondary)) => Key {
            primary,
            secondary,
            ..own
        },
        None => own,
    }
}

#[cfg(test)]
mod tests {
    use super::Key;

    /// `before` is the lexicographic predecessor, each field borrowing from the one before.
    #[test]
    fn before_is_the_predecessor() {
        let k = |primary, secondary, task, job, thread| Key {
            primary,
            secondary,
            task,
            job,
            thread,
        };
        assert_eq!(k(5, 7, 2, 3, 1).before(), k(5, 7, 2, 3, 0));
        assert_eq!(k(5, 7, 2, 3, 0).before(), k(5, 7, 2, 2, u32::MAX));
        assert_eq!(k(5, 7, 2, 0, 0).before(), k(5, 7, 1, u64::MAX, u32::MAX));
        assert_eq!(
            k(5, 7, 0, 0, 0).before(),
            k(5, 6, u32::MAX, u64::MAX, u32::MAX)
        );
        assert_eq!(
            k(5, 0, 0, 0, 0).before(),
            k(4, u64::MAX, u32::MAX, u64::MAX, u32::MAX)
        );
        for x in [k(5, 7, 2, 3, 1), k(5, 7, 0, 0, 0), k(5, 0, 0, 0, 0)] {
            assert!(x.before() < x);
        }
    }
}
