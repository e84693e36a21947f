//! Generators asked for absurd sizes (what `rtsched gen` and a sweep spec pass them) refuse at
//! once with the parameter and the limit in the message; nothing is allocated first. Each case
//! here used to allocate until the machine ran out of memory, loop for hours, or wrap around.

use rtsched_analysis::gen::{by_name, Params, MAX_CPUS, MAX_TASKS};
use std::time::{Duration, Instant};

fn gen(name: &str, params: &str) -> Result<usize, String> {
    by_name(name, &Params::parse(params).unwrap(), 1).map(|g| g.taskset.tasks.len())
}

/// The error for `name params`, got within a second.
fn refused(name: &str, params: &str) -> String {
    let t = Instant::now();
    let e = gen(name, params).expect_err(params);
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "{name} {params}: {:?}",
        t.elapsed()
    );
    e
}

#[test]
fn a_billion_tasks_are_refused_naming_n() {
    for g in ["uunifast", "uunifast-discard", "randfixedsum"] {
        let e = refused(g, "n=1000000000,U=2,m=4");
        assert!(
            e.contains("parameter n=1000000000: at most 100000 tasks") && e.contains("256.0 GB"),
            "{g}: {e}"
        );
    }
    let e = refused("chronos2011", "n=1000000000");
    assert!(e.contains("n=1000000000: at most 100000 tasks"), "{e}");
    assert_eq!(MAX_TASKS, 100_000);
}

#[test]
fn ten_million_cpus_are_refused_naming_m() {
    for (g, p) in [
        ("uunifast", "n=4,U=2,"),
        ("lelli2011", ""),
        ("chronos2011", ""),
        ("paws2013", ""),
        ("mwl", ""),
    ] {
        let e = refused(g, &format!("{p}m=10000000"));
        assert!(
            e.contains("parameter m=10000000: the number of CPUs must be between 1 and 65536"),
            "{g}: {e}"
        );
    }
    // 2^32 + 1 CPUs used to wrap to 1 CPU when narrowed to u32.
    let e = refused("lelli2011", "m=4294967297");
    assert!(e.contains("m=4294967297"), "{e}");
    assert_eq!(MAX_CPUS, 65_536);
    assert!(refused("uunifast", "n=4,U=2,m=0").contains("between 1 and 65536"));
}

#[test]
fn randfixedsum_is_capped_by_its_quadratic_tables() {
    // 100,000 tasks: two 100,000² tables of f64, 160 GB.
    let e = refused("randfixedsum", "n=100000,U=2,m=4");
    assert!(
        e.contains("n=100000: 160.0 GB") && e.contains("at most 2000 tasks"),
        "{e}"
    );
    // lelli2011 draws N = x·m tasks by RandFixedSum: x = 10^18 used to overflow the product.
    let e = refused("lelli2011", "m=64,x=1000000000000000000");
    assert_eq!(e, "x=1000000000000000000 and m=64 give N = x·m = 64000000000000000000 tasks; RandFixedSum draws at most 2000");
    assert_eq!(gen("randfixedsum", "n=2000,U=100,m=128").unwrap(), 2000);
}

#[test]
fn large_but_allowed_sets_are_made_quickly() {
    let t = Instant::now();
    assert_eq!(
        gen("uunifast-discard", "n=100000,U=50,m=64").unwrap(),
        100_000
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn rejection_loops_are_bounded_by_draws_not_only_tries() {
    // UUniFast-Discard on 100,000 tasks whose bounds almost never hold: 100,000 tries of
    // 100,000 draws each was 10^10 draws (hours); now at most 10^8.
    let t = Instant::now();
    let e = gen("uunifast-discard", "n=100000,U=99999,u_min=0.99999,u_max=1").unwrap_err();
    assert!(e.contains("in 1000 tries"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    // PAWS's window with a tiny u_min: tasks are added until the window is reached.
    let e = refused(
        "paws2013",
        "m=65536,u_min=0.000001,u_max=0.000002,absolute=1,U_min=60000,U_max=60001",
    );
    assert!(e.contains("needs more than 100000 tasks"), "{e}");
    // Many CPUs: up to 3m threads per task in the parallel regions.
    let e = refused("paws2013", "m=4096");
    assert!(
        e.contains("threads in all, more than the limit of 1000000"),
        "{e}"
    );
    assert!(gen("paws2013", "m=4096,parallel=0").is_ok());
    // An LWFG cap that takes millions of tasks.
    let e = refused("mlu", "m=65536,U=65536");
    assert!(e.contains("needs more than 100000 tasks"), "{e}");
}
