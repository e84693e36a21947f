//! Execution-time and arrival models. Each task draws from its own seeded ChaCha stream, so a
//! job's demand depends only on (seed, task, job index): every scheduler compared on the same
//! task set and seed sees exactly the same jobs.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{Behaviour, ExecModel, Program, Task, Time, FOREVER};

/// Job `job`'s demand when its task replays measured execution times (`Task::execution_times`,
/// sequential tasks only): the times in turn, from the first again after the last. Appends it
/// to `out` and returns it.
#[cold]
#[inline(never)]
pub fn replayed(times: &[Time], job: u64, out: &mut Vec<Time>) -> Time {
    let d = times[(job % times.len() as u64) as usize].max(1);
    out.push(d);
    d
}

pub struct TaskStreams {
    demand: ChaCha8Rng,
    arrival: ChaCha8Rng,
    /// A best-effort task's behaviour (kept here, beside the streams the release reads anyway,
    /// so a real-time release does not reach for the task's class).
    pub fair: Option<Behaviour>,
}

impl TaskStreams {
    pub fn new(seed: u64, task: u32) -> Self {
        TaskStreams::from_seeded(&TaskStreams::seeded(seed), task)
    }

    /// The generator every stream of a run starts from, before its stream is set.
    pub fn seeded(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    /// [`TaskStreams::new`] from the run seed's generator, seeded once (`seed_from_u64(seed)`)
    /// and cloned for every stream of every task: the same streams without seeding each anew.
    pub fn from_seeded(seeded: &ChaCha8Rng, task: u32) -> Self {
        let mut demand = seeded.clone();
        demand.set_stream(2 * task as u64);
        let mut arrival = seeded.clone();
        arrival.set_stream(2 * task as u64 + 1);
        TaskStreams {
            demand,
            arrival,
            fair: None,
        }
    }

    /// The actual execution demand of the next job (>= 1 ns).
    pub fn demand(&mut self, model: &ExecModel, wcet: Time) -> Time {
        let d = match *model {
            ExecModel::Wcet => wcet,
            ExecModel::Uniform { min, max } => {
                let f = if max > min {
                    self.demand.random_range(min..=max)
                } else {
                    min
                };
                (wcet as f64 * f).round() as Time
            }
            ExecModel::Overrun { ratio, probability } => {
                if self.demand.random::<f64>() < probability {
                    (wcet as f64 * ratio).round() as Time
                } else {
                    wcet
                }
            }
        };
        d.max(1)
    }

    /// The actual demand of every thread of the next job, in region then thread order
    /// (docs/semantics.md "Demand"): one draw per thread. For a sequential task this is the
    /// one draw [`TaskStreams::demand`] makes, so adding structure changes nothing else.
    /// Appends to `out`; returns the job's total demand.
    #[inline]
    pub fn job_demands(
        &mut self,
        model: &ExecModel,
        program: &Program,
        out: &mut Vec<Time>,
    ) -> Time {
        if let [region] = &program.regions[..] {
            if let [t] = &region[..] {
                // A sequential job (most of them): its one draw, without walking the lists.
                let d = self.demand(model, t.wcet);
                out.push(d);
                return d;
            }
        }
        let mut total = 0;
        for region in &program.regions {
            for t in region {
                let d = self.demand(model, t.wcet);
                out.push(d);
                total += d;
            }
        }
        total
    }

    /// Time from this release to the next one.
    pub fn interarrival(&mut self, t: &Task) -> Time {
        match t.max_interarrival {
            Some(max) if max > t.period => self.arrival.random_range(t.period..=max),
            _ => t.period,
        }
    }

    /// A best-effort task's next burst, pushed onto `out` and returned.
    #[inline(never)]
    pub fn fair_burst(&mut self, out: &mut Vec<Time>) -> Time {
        let b = self.fair.expect("a best-effort task");
        let d = self.burst(&b);
        out.push(d);
        d
    }

    /// A best-effort burst's CPU demand (its own stream: the execution model does not apply).
    pub fn burst(&mut self, b: &Behaviour) -> Time {
        match *b {
            Behaviour::Hog => FOREVER,
            Behaviour::Sleeper { run, .. } => run,
            Behaviour::Bursty { run: (lo, hi), .. } => self.demand.random_range(lo..=hi).max(1),
        }
    }

    /// A best-effort task's sleep after a burst.
    pub fn sleep(&mut self, b: &Behaviour) -> Time {
        match *b {
            Behaviour::Hog => 0,
            Behaviour::Sleeper { sleep, .. } => sleep,
            Behaviour::Bursty {
                sleep: (lo, hi), ..
            } => self.arrival.random_range(lo..=hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_from_one_seeded_generator_draw_what_streams_seeded_each_anew_draw() {
        for seed in [0, 1, 0x9E37_79B9_7F4A_7C15] {
            let seeded = TaskStreams::seeded(seed);
            for task in [0, 1, 7] {
                let mut s = TaskStreams::from_seeded(&seeded, task);
                for (stream, rng) in [
                    (2 * task as u64, &mut s.demand),
                    (2 * task as u64 + 1, &mut s.arrival),
                ] {
                    let mut alone = ChaCha8Rng::seed_from_u64(seed);
                    alone.set_stream(stream);
                    let want: Vec<u64> = (0..40).map(|_| alone.next_u64()).collect();
                    let got: Vec<u64> = (0..40).map(|_| rng.next_u64()).collect();
                    assert_eq!(got, want, "seed {seed} task {task} stream {stream}");
                }
            }
        }
    }
}
