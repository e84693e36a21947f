//! One priority rule for the simulated and the real fixed-priority schedulers: `kernel:fifo`
//! (the kernel's SCHED_FIFO, `kernel/plan.rs`) gives every task of a set the priority `gfp`
//! (the simulator's policy, `rtsched_policies::ctx`) gives it, and refuses what `gfp` refuses
//! with the same message (both follow `rtsched_analysis::priority::assign`). Differential, on
//! generated sets (RandFixedSum, constrained deadlines) with priorities given to every task,
//! to none or to some, under each assignment named or none. No thread is started.

use proptest::prelude::*;
use rtsched_analysis::gen;
use rtsched_linux::kernel::{fifo_levels, KernelPlan, KernelPolicy};
use rtsched_linux::RunError;
use rtsched_model::TaskSet;
use rtsched_policies::ctx::BuildCtx;
use rtsched_policies::SchedulerSpec;

/// `gfp[:mode]`'s priorities and label as the policy builds them, or its refusal.
fn gfp(ts: &TaskSet, mode: Option<&str>) -> Result<(Vec<u32>, String), String> {
    let spec = SchedulerSpec::parse(&mode.map_or("gfp".into(), |m| format!("gfp:{m}"))).unwrap();
    let built = BuildCtx::new(ts).priorities(&spec, &["prio", "model", "mapper"]);
    // The registry's build agrees with the helper the policy calls.
    assert_eq!(
        rtsched_policies::build(&spec_text(mode), ts).map(|p| p.name()),
        built.clone().map(|(_, label)| label)
    );
    built
}

fn spec_text(mode: Option<&str>) -> String {
    mode.map_or("gfp".into(), |m| format!("gfp:{m}"))
}

/// `kernel:fifo[:mode]`'s SCHED_FIFO levels and label, or its refusal.
fn fifo(ts: &TaskSet, mode: Option<&str>) -> Result<(Vec<u32>, String), String> {
    let rest = mode.map_or("fifo".into(), |m| format!("fifo:{m}"));
    match KernelPlan::new(ts, &rest) {
        Ok(KernelPlan {
            policy: KernelPolicy::Fifo { prio, .. },
            label,
            ..
        }) => Ok((prio, label)),
        Ok(_) => panic!("kernel:{rest} is not SCHED_FIFO"),
        Err(RunError::Input(m)) => Err(m),
        Err(e) => panic!("kernel:{rest}: {e}"),
    }
}

/// A RandFixedSum set of `n` tasks on 2 CPUs, deadlines cut to `cut` (per mille of the
/// period, at least the WCET: DM orders otherwise than RM), priorities `given` (a task with
/// `None` has none).
fn set(seed: u64, n: usize, cut: &[u64], given: &[Option<u32>]) -> TaskSet {
    let n_text = n.to_string();
    let p = gen::Params::from_pairs(&[("n", &n_text), ("U", "1.2"), ("m", "2")]);
    let mut ts = gen::by_name("randfixedsum", &p, seed).unwrap().taskset;
    ts.source = "g.yaml".into();
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        t.deadline = (t.period * cut[i] / 1000).max(t.wcet);
        t.priority = given[i];
    }
    ts
}

fn compare(ts: &TaskSet, mode: Option<&str>) {
    match (gfp(ts, mode), fifo(ts, mode)) {
        (Ok((prio, gfp_label)), Ok((levels, fifo_label))) => {
            assert_eq!(levels, fifo_levels(&prio), "{mode:?}");
            let by = gfp_label.strip_prefix("gfp:").unwrap();
            assert!(
                fifo_label.starts_with(&format!("kernel:fifo:{by}")),
                "{gfp_label} vs {fifo_label}"
            );
        }
        (Err(g), Err(k)) => assert_eq!(
            g.replace("gfp", "kernel:fifo"),
            k,
            "the same refusal in the scheduler's words"
        ),
        (g, k) => panic!("{mode:?}: gfp {g:?}, kernel:fifo {k:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn kernel_fifo_and_gfp_assign_alike(
        seed in 0u64..1_000_000,
        n in 2usize..9,
        cut in prop::collection::vec(300u64..=1000, 8),
        values in prop::collection::vec(1u32..50, 8),
        pattern in 0u8..3,
        holes in prop::collection::vec(any::<bool>(), 8),
    ) {
        // Every task a priority, none, or some (at least one with and one without).
        let given: Vec<Option<u32>> = (0..n)
            .map(|i| match pattern {
                0 => Some(values[i]),
                1 => None,
                _ if i == 0 => Some(values[i]),
                _ if i == 1 => None,
                _ => (!holes[i]).then_some(values[i]),
            })
            .collect();
        let ts = set(seed, n, &cut, &given);
        for mode in [None, Some("rm"), Some("dm"), Some("file")] {
            compare(&ts, mode);
        }
    }
}

/// The set of the issue: one task with a priority, one without. `kernel:fifo` used RM on it
/// while `gfp` refused it; both refuse it now, naming the task and the field.
#[test]
fn a_partial_priority_set_is_refused_by_both() {
    let ts = set(1, 3, &[1000; 3], &[Some(5), None, Some(2)]);
    let g = gfp(&ts, None).unwrap_err();
    let k = fifo(&ts, None).unwrap_err();
    assert_eq!(
        k,
        "g.yaml: task 't1': field 'priority': missing, while other tasks have one; give every task a priority, or choose kernel:fifo:rm / kernel:fifo:dm"
    );
    assert_eq!(g.replace("gfp", "kernel:fifo"), k);
    // Naming an assignment settles it, for both.
    for mode in ["rm", "dm"] {
        assert!(gfp(&ts, Some(mode)).is_ok() && fifo(&ts, Some(mode)).is_ok());
    }
}
