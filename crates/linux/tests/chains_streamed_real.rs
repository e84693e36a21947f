//! A real run's chain records stream like its job records (docs/chains.md "Long runs"): on
//! the testbed (the ledger's records, handed over beside the job records) and under
//! `kernel:fifo` (made on the main thread from the merged job records as they pass), a streamed
//! run hands its sink every chain record as it is made, and they are the records a held run
//! makes of the same jobs (the chain rule replayed over the run's job records, as a held kernel
//! run does; on the testbed, below, but for the implicit reads' instants), the summaries are
//! theirs, and the `--chains-csv` lines written as they came are the file written from the
//! same records held, byte for byte.
//!
//! One run of 300 ms per backend (more only when a late job makes the comparison moot, below);
//! needs real-time privilege (without it the test says so and passes).

use rtsched_linux::{run_streamed, sys, RunOptions};
use rtsched_model::results::{
    chain_summaries, write_chains_csv, ChainRecord, ChainsCsvWriter, JobRecord, JobSink, RunResult,
};
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_runtime::chains::chain_records;

/// An event chain (a, and b it triggers), an implicit and a LET chain from f to g, on CPU 0.
const SET: &str = "platform: {cpus: 1}
run: {duration: 300ms}
tasks:
  - {name: a, period: 10ms, wcet: 2ms, priority: 5, cpu: 0}
  - {name: b, trigger: a, deadline: 10ms, wcet: 1ms, priority: 4, cpu: 0}
  - {name: f, period: 5ms, wcet: 1ms, priority: 6, cpu: 0}
  - {name: g, period: 20ms, wcet: 1ms, priority: 3, cpu: 0}
chains:
  - {name: ab, tasks: [a, b]}
  - {name: fg, tasks: [f, g], communication: implicit}
  - {name: fg_let, tasks: [f, g], communication: let}
";

fn privileged() -> bool {
    match sys::check_rt_privilege() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("real-run test not run: {e}");
            false
        }
    }
}

/// What a streamed run hands its sink: job records, chain records, and the chain records'
/// CSV lines as they come.
struct Keep {
    jobs: Vec<JobRecord>,
    chains: Vec<ChainRecord>,
    csv: ChainsCsvWriter<Vec<u8>>,
}

impl JobSink for Keep {
    fn job(&mut self, rec: &JobRecord, _end: Time) {
        self.jobs.push(rec.clone());
    }
    fn takes_chains(&self) -> bool {
        true
    }
    fn chain(&mut self, rec: &ChainRecord) {
        self.chains.push(*rec);
        self.csv.chain(rec);
    }
}

/// One streamed run of `ts` on `backend`: None when a job of `a` finished past the window
/// (the job of `b` it released is then not one of the run's job records, so the held rule
/// cannot be replayed from them alone), else the run and what its sink got.
fn streamed(ts: &TaskSet, backend: &str) -> Option<(RunResult, Keep)> {
    let label = rtsched_linux::scheduler_label(ts, backend).unwrap();
    let mut keep = Keep {
        jobs: Vec::new(),
        chains: Vec::new(),
        csv: ChainsCsvWriter::new(Vec::new()).unwrap(),
    };
    keep.csv.begin_run(&label, &ts.chains);
    let r = run_streamed(ts, backend, &RunOptions::default(), Some(&mut keep))
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    let late = keep
        .jobs
        .iter()
        .any(|j| j.task == 0 && j.finish.is_none_or(|f| f >= ts.run.duration));
    (!late).then_some((r, keep))
}

#[test]
#[ignore = "real run: real-time threads on every CPU, alone on the machine (make test-real; cargo test -p rtsched-linux -- --ignored)"]
fn streamed_chain_records_are_the_held_ones() {
    if !privileged() {
        return;
    }
    let ts = parse_taskset(SET, Format::Yaml, "chains.yaml").unwrap();
    for backend in ["testbed:gfp:file", "kernel:fifo"] {
        let (r, keep) = (0..3)
            .find_map(|_| streamed(&ts, backend))
            .unwrap_or_else(|| panic!("{backend}: a's last job finished late in three runs"));
        assert!(
            r.chains.is_empty() && r.jobs.is_empty(),
            "{backend}: held records"
        );
        // Every chain has instances (30 of ab, one output of g per 20 ms for each f-g chain
        // but the implicit chain's first ones, before f published).
        for c in 0..3 {
            let n = keep.chains.iter().filter(|x| x.chain == c).count();
            assert!(n >= 14, "{backend}: chain {c}: {n} records");
        }
        // The held rule over the same run's jobs (those that ran), as a held kernel run makes
        // its records. The testbed's are its ledger's, made as the run went: the same but for
        // the implicit chain's reads, which the ledger takes at its dispatch decision and a job
        // record's start puts where the worker began; there, its instances and publications.
        let ran: Vec<JobRecord> = keep
            .jobs
            .iter()
            .filter(|j| j.start.is_some())
            .cloned()
            .collect();
        let held = chain_records(&ts, &ran);
        if backend.starts_with("kernel:") {
            assert_eq!(keep.chains, held, "{backend}");
        } else {
            let key = |v: &[ChainRecord], implicit: bool| -> Vec<_> {
                v.iter()
                    .filter(|x| (x.chain == 1) == implicit)
                    .map(|x| {
                        if implicit {
                            (x.chain, x.instance, 0, x.end)
                        } else {
                            (x.chain, x.instance, x.start, x.end)
                        }
                    })
                    .collect()
            };
            for implicit in [false, true] {
                assert_eq!(
                    key(&keep.chains, implicit),
                    key(&held, implicit),
                    "{backend}"
                );
            }
        }
        // What went into the summaries and the file is what the sink got, as held.
        assert_eq!(
            r.chain_summaries,
            Some(chain_summaries(&ts.chains, &keep.chains)),
            "{backend}"
        );
        let mut held_run = r.clone();
        held_run.chain_summaries = None;
        held_run.chains = keep.chains.clone();
        let mut want = Vec::new();
        write_chains_csv(&[&held_run], &mut want).unwrap();
        let got = keep.csv.finish().unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap(),
            "{backend}"
        );
    }
}
