//! Fixed-priority assignment. Priorities follow Linux `SCHED_FIFO`: a larger number is more
//! urgent. Ties (equal periods or deadlines) go to the task that comes first in the file.

use rtsched_model::Task;

/// Rate monotonic (Liu & Layland 1973): the shorter the period, the higher the priority.
pub fn rate_monotonic(tasks: &[Task]) -> Vec<u32> {
    by_key(tasks, |t| t.period)
}

/// Deadline monotonic (Leung & Whitehead 1982): the shorter the relative deadline, the higher.
pub fn deadline_monotonic(tasks: &[Task]) -> Vec<u32> {
    by_key(tasks, |t| t.deadline)
}

/// Priorities n..1 in increasing order of `key` (stable, so file order breaks ties).
fn by_key(tasks: &[Task], key: impl Fn(&Task) -> u64) -> Vec<u32> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| (key(&tasks[i]), i));
    let mut prio = vec![0u32; tasks.len()];
    for (rank, &i) in order.iter().enumerate() {
        prio[i] = (tasks.len() - rank) as u32;
    }
    prio
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rm_and_dm_by_hand() {
        let mut ts = vec![
            Task::periodic("a", 20, 1),
            Task::periodic("b", 5, 1),
            Task::periodic("c", 10, 1),
            Task::periodic("d", 10, 1),
        ];
        assert_eq!(rate_monotonic(&ts), vec![1, 4, 3, 2]);
        ts[0].deadline = 2;
        assert_eq!(deadline_monotonic(&ts), vec![4, 3, 2, 1]);
    }
}
