//! A batch of sweep rows computed in one call, with no object per row: for each task set, make
//! it and run it under each of its schedulers ([`crate::row`]), the rows' columns collected as
//! they come. `_core.sweep_batch` hands them to Python as byte buffers.

use crate::row::{self, Note, Outcome, SetOptions, Status};
use rtsched_model::results::columns::{Column, Kind};
use rtsched_model::results::{Cell, TotalSink};
use std::collections::BTreeSet;

/// The values of one metric column ([`row::metric_columns`]), row by row: integers or floats
/// (the column's [`Kind`]), 0 where null.
pub enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

/// A metric column of the batch.
pub struct Metric {
    pub column: &'static Column,
    pub values: Values,
    /// Per row, whether the value is null: a row that did not run, a test's row, or a value
    /// its run did not measure.
    pub null: Vec<bool>,
}

impl Metric {
    fn new(column: &'static Column) -> Metric {
        let values = match column.kind {
            Kind::Int => Values::Int(Vec::new()),
            Kind::Float => Values::Float(Vec::new()),
            k => panic!("{}: a row's metric is a number, not {k:?}", column.name),
        };
        Metric {
            column,
            values,
            null: Vec::new(),
        }
    }

    fn push(&mut self, cell: Cell<'_>) {
        let (i, f) = match cell {
            Cell::Uint(v) => (v as i64, v as f64),
            Cell::Int(v) => (v, v as f64),
            Cell::Float(v) => (v as i64, v),
            Cell::Null => {
                self.push_null();
                return;
            }
            c => panic!(
                "{}: a row's metric is a number, not {c:?}",
                self.column.name
            ),
        };
        match &mut self.values {
            Values::Int(v) => v.push(i),
            Values::Float(v) => v.push(f),
        }
        self.null.push(false);
    }

    fn push_null(&mut self) {
        match &mut self.values {
            Values::Int(v) => v.push(0),
            Values::Float(v) => v.push(0.0),
        }
        self.null.push(true);
    }
}

/// The batch's columns, row by row (rows in set order, then in the order of the schedulers).
pub struct Batch {
    pub m: Vec<i64>,
    pub n: Vec<i64>,
    pub u: Vec<f64>,
    pub status: Vec<u8>,
    /// Per row: 0 / 1 a test's verdict false / true, [`VERDICT_INCONCLUSIVE`], or
    /// [`VERDICT_NONE`] (not a test's row, or a test that did not apply).
    pub verdict: Vec<u8>,
    pub metrics: Vec<Metric>,
    /// (row, message) of each row that did not run.
    pub errors: Vec<(usize, String)>,
    /// What the batch's runs warn about, each once.
    pub notes: BTreeSet<Note>,
}

/// `verdict` codes besides false (0) and true (1).
pub const VERDICT_INCONCLUSIVE: u8 = 2;
pub const VERDICT_NONE: u8 = 3;

impl Batch {
    fn new() -> Batch {
        Batch {
            m: Vec::new(),
            n: Vec::new(),
            u: Vec::new(),
            status: Vec::new(),
            verdict: Vec::new(),
            metrics: row::metric_columns()
                .iter()
                .map(|c| Metric::new(c))
                .collect(),
            errors: Vec::new(),
            notes: BTreeSet::new(),
        }
    }

    /// The rows so far.
    pub fn rows(&self) -> usize {
        self.status.len()
    }

    /// One row's outcome: its status, verdict and metrics.
    fn push(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Ran(r) => {
                self.status.push(Status::Ok as u8);
                self.verdict.push(VERDICT_NONE);
                for m in &mut self.metrics {
                    m.push(r.cell(m.column));
                }
            }
            Outcome::Tested(v) => {
                self.status.push(Status::Ok as u8);
                self.verdict.push(v.map_or(VERDICT_INCONCLUSIVE, u8::from));
                self.metrics.iter_mut().for_each(Metric::push_null);
            }
            Outcome::NotRun(status, e) => {
                self.status.push(status as u8);
                self.verdict.push(VERDICT_NONE);
                self.metrics.iter_mut().for_each(Metric::push_null);
                self.errors.push((self.status.len() - 1, e));
            }
        }
    }
}

/// The rows of a batch. Task set `s` is generator `generators[set_gen[s]]` with parameters
/// `set_params[s]` ("k=v,k=v") and seed `set_seed[s]`; it runs under scheduler `j` when
/// `todo[s * schedulers.len() + j]` is non-zero. A scheduler written `SCHEDULER@PROTOCOL`
/// (a spec's `locking` axis, [`row::split_locking`]) runs the set with `run.locking` set to
/// the protocol. An error (a generator's, the options') is the
/// message a user reads; nothing is returned for the batch then.
pub fn run_sets(
    schedulers: &[String],
    generators: &[String],
    o: &SetOptions<'_>,
    set_gen: &[u32],
    set_params: &[String],
    set_seed: &[u64],
    todo: &[u8],
) -> Result<Batch, String> {
    let k = schedulers.len();
    let mut out = Batch::new();
    // One summary and one set of simulator buffers for every run of the batch, reused: a
    // run holding its records allocates them anew each time, which costs half as much again
    // where malloc gives freed memory back early (Dask's workers: MALLOC_TRIM_THRESHOLD_=65536).
    let mut total = TotalSink::default();
    let mut scratch = rtsched_sim::SimScratch::default();
    for (s, params) in set_params.iter().enumerate() {
        let mut ts = row::make_set(&generators[set_gen[s] as usize], params, set_seed[s], o)?;
        let own = ts.run.locking;
        let cycle = ts.lock_order_cycle();
        let (m, n, u) = (
            ts.platform.cpus as i64,
            ts.tasks.len() as i64,
            ts.utilization(),
        );
        for (j, entry) in schedulers.iter().enumerate() {
            if todo[s * k + j] == 0 {
                continue;
            }
            out.m.push(m);
            out.n.push(n);
            out.u.push(u);
            // A `locking` axis's entry (`SCHEDULER@PROTOCOL`) runs the set under its protocol.
            let (sched, locking) = match row::split_locking(entry) {
                Ok(x) => x,
                Err(e) => {
                    out.push(Outcome::NotRun(Status::NotApplicable, e));
                    continue;
                }
            };
            ts.run.locking = locking.unwrap_or(own);
            row::notes(&ts, cycle.as_deref(), sched, &mut out.notes);
            out.push(row::run(&ts, sched, &mut total, &mut scratch));
        }
    }
    Ok(out)
}
