use super::*;
use crate::program::Action;
use crate::task::*;
use crate::tuf::Tuf;

fn yaml(s: &str) -> Result<TaskSet, InputError> {
    parse_taskset(s, Format::Yaml, "ts.yaml")
}

#[test]
fn duplicate_keys_nan_infinity_and_negative_zero_are_named() {
    let msg = |t: &str| yaml(t).unwrap_err().to_string();
    let head = "platform: {cpus: 2}\ntasks:\n";
    assert_eq!(
        msg(&format!("{head}  - {{name: cam, period: 10, wcet: 1, period: 5}}\n")),
        "ts.yaml: task 'cam' (tasks[0]): field 'period': given twice in the same mapping (the second would silently replace the first)"
    );
    assert_eq!(
        msg(&format!("{head}  - {{name: a, period: 10, wcet: 1}}\n  - {{name: b, period: 10, wcet: .nan}}\n")),
        "ts.yaml: task 'b' (tasks[1]): field 'wcet': NaN (not a number) is not a value rtsched accepts"
    );
    assert_eq!(
        msg(&format!("{head}  - {{name: a, period: .inf, wcet: 1}}\n")),
        "ts.yaml: task 'a' (tasks[0]): field 'period': infinity is not a value rtsched accepts"
    );
    assert_eq!(
        msg(&format!("{head}  - {{name: a, period: 10, wcet: 1, offset: -0.0}}\n")),
        "ts.yaml: task 'a' (tasks[0]): field 'offset': negative zero (-0.0): write 0 if zero is meant"
    );
    assert_eq!(
        msg(&format!("{head}  - {{name: a, period: 10, regions: [1, [2, -.inf]]}}\n")),
        "ts.yaml: task 'a' (tasks[0]): field 'regions[1][1]': negative infinity is not a value rtsched accepts"
    );
    assert_eq!(msg("platform: {cpus: 2}\nplatform: {cpus: 4}\ntasks: []\n"), "ts.yaml: field 'platform': given twice in the same mapping (the second would silently replace the first)");
    let json = |t: &str| {
        parse_taskset(t, Format::Json, "ts.json")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        json(r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": NaN, "wcet": 1}]}"#),
        "ts.json: line 1 column 61: NaN is not a value rtsched accepts (JSON has no NaN; write a number)"
    );
    assert_eq!(
        json(r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "wcet": 1, "name": "b"}]}"#),
        "ts.json: task 'b' (tasks[0]): field 'name': given twice in the same mapping (the second would silently replace the first)"
    );
}

#[test]
fn issue_example_parses() {
    let ts = yaml(
        "platform: {cpus: 4}\nrun: {duration: 1000, seed: 1, on_miss: continue}\ntasks:\n  - {name: t0, period: 10, wcet: 2}\n  - {name: t1, period: \"25ms\", wcet: 5, deadline: 20, offset: 1, cpu: 1, priority: 3}\n",
    )
    .unwrap();
    assert_eq!(ts.platform.cpus, 4);
    assert_eq!(ts.run.duration, 1_000_000_000);
    assert_eq!(ts.tasks[0].deadline, 10_000_000);
    assert_eq!(ts.tasks[1].period, 25_000_000);
    assert_eq!(ts.tasks[1].deadline, 20_000_000);
    assert_eq!(ts.tasks[1].offset, 1_000_000);
    assert_eq!(ts.tasks[1].cpu, Some(1));
    assert_eq!(ts.tasks[1].priority, Some(3));
}

#[test]
fn json_equals_yaml() {
    let y = yaml("platform: {cpus: 2}\ntasks: [{name: a, period: 2.5, wcet: 0.1}]").unwrap();
    let j = parse_taskset(
        r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 2.5, "wcet": 0.1}]}"#,
        Format::Json,
        "ts.yaml",
    )
    .unwrap();
    assert_eq!(y, j);
    assert_eq!(y.tasks[0].wcet, 100_000);
}

fn expect_err(s: &str, needles: &[&str]) {
    let e = yaml(s).unwrap_err().to_string();
    for n in needles {
        assert!(e.contains(n), "error {e:?} lacks {n:?}");
    }
    assert!(e.starts_with("ts.yaml"), "{e}");
}

#[test]
fn threads_are_limited_per_task_and_per_set() {
    let p = "platform: {cpus: 2}\ntasks:\n";
    // 49 regions of 4,096 threads: 200,704 threads from 1.3 KB of text.
    let wide = vec!["{threads: 4096, wcet: 1us}"; 49].join(", ");
    expect_err(
        &format!("{p}  - {{name: a, period: 10, regions: [{wide}]}}\n"),
        &[
            "task 'a'",
            "'regions[48]'",
            "200704 threads",
            "limit of 200000 threads in a task",
        ],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, regions: [{{threads: 200001, wcet: 1us}}]}}\n"),
        &["'regions[0]'", "200001 threads"],
    );
    // At the limits: accepted.
    let at = yaml(&format!(
        "{p}  - {{name: a, period: 10, regions: [{{threads: 199998, wcet: 1ns}}, [1ns, 1ns]]}}\n"
    ))
    .unwrap();
    assert_eq!(
        at.tasks[0]
            .regions
            .iter()
            .map(|r| r.threads.len())
            .sum::<usize>(),
        200_000
    );
    // Ten tasks of 200,000 threads are the set's limit; an eleventh (even sequential) is over.
    let tasks: String = (0..10)
        .map(|i| {
            format!("  - {{name: t{i}, period: 10, regions: [{{threads: 200000, wcet: 1ns}}]}}\n")
        })
        .collect();
    assert!(yaml(&format!("{p}{tasks}")).is_ok());
    expect_err(
        &format!("{p}{tasks}  - {{name: s, period: 10, wcet: 1}}\n"),
        &[
            "task 's' (tasks[10])",
            "2000001 threads",
            "limit of 2000000 threads in a set",
        ],
    );
}

#[test]
fn bad_inputs_name_file_task_field() {
    let p = "platform: {cpus: 2}\ntasks:\n";
    expect_err(
        &format!("{p}  - {{name: t0, perod: 10, wcet: 2}}"),
        &["task 't0'", "'perod'", "did you mean 'period'"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, wcet: 2}}"),
        &["task 't0'", "'period'", "missing"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 0, wcet: 2}}"),
        &["'period'", "must be > 0"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: -3, wcet: 2}}"),
        &["'period'", "negative"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 0}}"),
        &["'wcet'", "> 0"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, deadline: 0}}"),
        &["'deadline'", "> 0"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, cpu: 2}}"),
        &["'cpu'", "out of range"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1}}\n  - {{name: t0, period: 5, wcet: 1}}"),
        &["tasks[1]", "duplicate", "tasks[0]"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: [1], wcet: 1}}"),
        &["'period'", "expected a duration"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: \"10 parsecs\", wcet: 1}}"),
        &["unknown unit"],
    );
    expect_err(
        "platform: {cpus: 2}\ntasks: [{name: t0, period: 10, wcet: 1}",
        &["line", "column", "malformed YAML"],
    );
    expect_err(
        "platform: {cpus: 0}\ntasks: [{name: t0, period: 10, wcet: 1}]",
        &["platform", "'cpus'"],
    );
    expect_err(
        "tasks: [{name: t0, period: 10, wcet: 1}]",
        &["'platform'", "missing"],
    );
    expect_err(
        "platform: {cpus: 1}\nrun: {on_miss: explode}\ntasks: [{name: t0, period: 10, wcet: 1}]",
        &["run", "'on_miss'"],
    );
    expect_err("platform: {cpus: 1}\ntasks: []", &["empty"]);
}

#[test]
fn wss_and_group() {
    let ts = yaml("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1, wss: \"64KiB\", group: 3}\n  - {name: b, period: 10, wcet: 1, wss: 4096}\n  - {name: c, period: 10, wcet: 1, wss: \"1.5MiB\"}").unwrap();
    assert_eq!(ts.tasks[0].wss, Some(65_536));
    assert_eq!(ts.tasks[0].group, Some(3));
    assert_eq!(ts.tasks[1].wss, Some(4096));
    assert_eq!(ts.tasks[1].group, None);
    assert_eq!(ts.tasks[2].wss, Some(1_572_864));
    let p = "platform: {cpus: 2}\ntasks:\n";
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: \"64kB\"}}"),
        &["task 't0'", "'wss'", "unknown size unit 'kB'"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: -5}}"),
        &["task 't0'", "'wss'", "whole number of bytes"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: \"0.5B\"}}"),
        &["'wss'", "whole number of bytes"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, group: -1}}"),
        &["task 't0'", "'group'", "non-negative integer"],
    );
    expect_err(
        &format!("{p}  - {{name: t0, period: 10, wcet: 1, group: x}}"),
        &["'group'"],
    );
}

#[test]
fn yaml_writer_round_trips() {
    let text = "platform: {cpus: 3}\nrun: {duration: 2500, seed: 9, on_miss: abort, execution: {model: overrun, ratio: 1.25, probability: 0.1}, overheads: {context_switch: \"3us\"}}\ntasks:\n  - {name: \"odd: name\", period: 10.000001, wcet: 0.5, deadline: 7, offset: 2, priority: 4, cpu: 2, wss: \"2MiB\", group: 1}\n  - {name: b, min_interarrival: 3, max_interarrival: 9, wcet: \"17ns\"}\n";
    let ts = yaml(text).unwrap();
    let out = to_yaml(&ts);
    let back = yaml(&out).unwrap();
    assert_eq!(back, ts, "{out}");
    assert!(out.contains("cpu: 2"), "{out}");
    assert!(out.contains("period: \"10000001ns\""), "{out}");
    let mut u = ts.clone();
    u.run.execution = ExecModel::Uniform {
        min: 0.1 + 0.2,
        max: 1.0,
    };
    assert_eq!(yaml(&to_yaml(&u)).unwrap(), u);
}

#[test]
fn annotated_yaml_reads_back_to_the_same_set() {
    let text = "platform: {cpus: 2}\nrun: {duration: 40.5}\ntasks:\n  - {name: job, period: 10, wcet: 1.1, priority: 20}\n  - {name: irq, min_interarrival: 0.5, wcet: 0.1, priority: 20, execution_times: [\"99us\", 0.1]}\n  - {name: bg, class: fair, nice: 0, behaviour: hog}\n";
    let ts = yaml(text).unwrap();
    let note = |comment: &str, sporadic| TaskNote {
        comment: comment.into(),
        sporadic,
    };
    let out = to_yaml_with(
        &ts,
        &[
            note("tid 5, periodic", false),
            note("tid 6\nsporadic", true),
        ],
    );
    assert_eq!(yaml(&out).unwrap(), ts, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        &lines[lines.len() - 3..],
        [
            "  - {name: \"job\", period: \"10ms\", wcet: \"1100us\", priority: 20}   # tid 5, periodic",
            "  - {name: \"irq\", min_interarrival: \"500us\", wcet: \"100us\", priority: 20, execution_times: [\"99us\", \"100us\"]}   # tid 6 sporadic",
            "  - {name: \"bg\", class: fair, nice: 0, behaviour: hog}",
        ],
        "{out}"
    );
    assert_eq!(to_yaml_with(&ts, &[]), to_yaml(&ts));
}

#[test]
fn regions_and_sections_parse_and_round_trip() {
    let text = "platform: {cpus: 4}\ntasks:\n  - name: fft\n    period: 40\n    regions: [2, [3, 1.5, \"500us\"], {threads: 3, wcet: 1}, 1]\n    sections:\n      - {resource: log, region: 1, thread: 2, start: 0.1, length: 0.2}\n      - {resource: bus, start: 0.5, length: 1}\n      - {resource: log, start: 0.5, length: 0.25}\n  - {name: b, period: 10, wcet: 2, sections: [{resource: bus, start: 0, length: 2}]}\n";
    let ts = yaml(text).unwrap();
    let t = &ts.tasks[0];
    assert_eq!(t.wcet, 2_000_000 + 5_000_000 + 3_000_000 + 1_000_000);
    assert_eq!(t.regions.len(), 4);
    assert_eq!(t.regions[2].threads, vec![1_000_000; 3]);
    assert!(t.is_parallel() && ts.has_structure());
    assert_eq!(ts.resources, vec!["log".to_string(), "bus".to_string()]);
    // Sorted by (region, thread, start, longest first): bus encloses log at 0.5 ms.
    assert_eq!(
        (
            t.sections[0].resource,
            t.sections[1].resource,
            t.sections[2].region
        ),
        (1, 0, 1)
    );
    let p = t.program();
    let cps: Vec<_> = p.regions[0][0]
        .checkpoints
        .iter()
        .map(|c| (c.at / 1000, c.action))
        .collect();
    assert_eq!(
        cps,
        vec![
            (500, Action::Acquire(1)),
            (500, Action::Acquire(0)),
            (750, Action::Release(0)),
            (1500, Action::Release(1))
        ]
    );
    assert_eq!((p.threads(), p.width()), (8, 3));
    let back = yaml(&to_yaml(&ts)).unwrap();
    assert_eq!(back.tasks, ts.tasks);
    assert_eq!(back.resources, ts.resources);
    // The scaled boundaries of a thread that ran 60% of its WCET.
    assert_eq!(
        crate::program::scale(1_500_000, 2_000_000, 1_200_000),
        900_000
    );
}

#[test]
fn bad_structure_is_named() {
    let p = "platform: {cpus: 2}\ntasks:\n";
    expect_err(
        &format!("{p}  - {{name: a, period: 10, wcet: 3, regions: [1, [1, 2]]}}\n"),
        &["task 'a'", "'wcet'", "sum to 4ms"],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, regions: [1, []]}}\n"),
        &["'regions[1]'", "at least one thread"],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, regions: [1, {{threads: 0, wcet: 1}}]}}\n"),
        &["regions[1]", "'threads'"],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, regions: [1, [1, -2]]}}\n"),
        &["'regions[1][1]'"],
    );
    expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 1, length: 2}}]}}\n"), &["sections[0]", "'length'", "after the thread's WCET 2ms"]);
    expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 0, length: 1, thread: 1}}]}}\n"), &["'thread'", "out of range"]);
    expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 0, lenght: 1}}]}}\n"), &["did you mean 'length'"]);
    expect_err(
        "platform: {cpus: 2}\nresources: [bus]\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: bsu, start: 0, length: 1}]}\n",
        &["'bsu' is not in the top-level 'resources'", "did you mean 'bus'"],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: r, start: 0, length: 2}}, {{resource: s, start: 1, length: 2}}]}}\n"),
        &["sections[1]", "overlaps sections[0]"],
    );
    expect_err(
        &format!("{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: r, start: 0, length: 3}}, {{resource: r, start: 1, length: 1}}]}}\n"),
        &["'resource'", "already holding it"],
    );
    // Nested sections in opposite orders load (the ledger detects the deadlock when it
    // happens), and the cycle is described for the CLI's warning.
    let ts = yaml(&format!(
        "{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: x, start: 0, length: 3}}, {{resource: y, start: 1, length: 1}}]}}\n  - {{name: b, period: 10, wcet: 5, sections: [{{resource: y, start: 0, length: 3}}, {{resource: x, start: 1, length: 1}}]}}\n"
    ))
    .unwrap();
    let c = ts.lock_order_cycle().expect("a cycle");
    for n in [
        "can deadlock",
        "task 'a' requests 'y' while holding 'x'",
        "task 'b' requests 'x' while holding 'y'",
    ] {
        assert!(c.contains(n), "{c}");
    }
}

#[test]
fn topologies_parse_validate_and_round_trip() {
    let t = |platform: &str| {
        yaml(&format!(
            "platform: {platform}\ntasks: [{{name: a, period: 10, wcet: 1}}]\n"
        ))
    };
    let opteron = t("{cpus: 48, topology: opteron6164x4}").unwrap();
    let topo = opteron.platform.topology.as_ref().unwrap();
    assert_eq!(
        (topo.caches.len(), topo.nodes.len(), topo.shared_level(0, 5)),
        (48 * 3 + 8, 4, Some(3))
    );
    assert_eq!(
        yaml(&to_yaml(&opteron)).unwrap().platform,
        opteron.platform,
        "a preset round-trips by name"
    );
    let written = t("{cpus: 4, topology: {caches: [{level: 1, type: data, size: 32KiB, ways: 8}, {level: 2, size: 1MiB, line: 64, ways: 16, shared_by: 2}, {level: 3, size: 8MiB, ways: 16, cpus: [\"0-3\"]}], nodes: [[0, 1], [2, 3]]}}").unwrap();
    let w = written.platform.topology.as_ref().unwrap();
    assert_eq!(w.caches.len(), 4 + 2 + 1);
    assert_eq!(
        (
            w.shared_level(0, 1),
            w.shared_level(1, 2),
            w.shared_level(2, 2)
        ),
        (Some(2), Some(3), Some(1))
    );
    assert_eq!((w.llc(3).unwrap().size, w.node_of(2)), (8 << 20, 1));
    assert_eq!(
        yaml(&to_yaml(&written)).unwrap().platform,
        written.platform,
        "written out, it round-trips"
    );
    let host = t("{cpus: 1, topology: host}").unwrap();
    let h = yaml(&to_yaml(&host)).unwrap().platform;
    assert_eq!(
        (
            h.topology.as_ref().unwrap().preset.clone(),
            &h.topology.as_ref().unwrap().caches
        ),
        (None, &host.platform.topology.as_ref().unwrap().caches),
        "host is written out"
    );
    let bad = |platform: &str, needles: &[&str]| {
        let e = t(platform).unwrap_err().to_string();
        for n in needles {
            assert!(e.contains(n), "{e:?} lacks {n:?}");
        }
    };
    bad(
        "{cpus: 4, topology: {caches: [{level: 2, size: 1MiB, cpus: [[0, 1], [2, 5]]}]}}",
        &[
            "platform",
            "'topology.caches[0].cpus[1]'",
            "CPU 5 does not exist",
        ],
    );
    bad(
        "{cpus: 2, topology: {caches: [{level: 1, size: 32, line: 64}]}}",
        &["'topology.caches[0].size'", "smaller than one line"],
    );
    bad("{cpus: 2, topology: {caches: [{level: 1, size: 4KiB}, {level: 1, size: 4KiB, shared_by: 2}]}}", &["'topology.caches[1].cpus'", "already has a level-1"]);
    bad(
        "{cpus: 2, topology: {caches: [{level: 1, size: 4KiB, type: victim}]}}",
        &["'topology.caches[0].type'", "victim"],
    );
    bad(
        "{cpus: 2, topology: {caches: [{size: 4KiB}]}}",
        &["'topology.caches[0].level'", "missing"],
    );
    bad(
        "{cpus: 2, topology: {caches: [{level: 1, size: 4KiB, shared_by: 3}]}}",
        &["'topology.caches[0].shared_by'"],
    );
    bad(
        "{cpus: 2, topology: {nodes: [[0], [0, 1]]}}",
        &["'topology.nodes[1]'", "two nodes"],
    );
    bad(
        "{cpus: 64, topology: opteron6164x4}",
        &["'topology'", "48 CPUs"],
    );
    bad(
        "{cpus: 2, topology: optron}",
        &["unknown topology preset 'optron'"],
    );
    bad(
        "{cpus: 2, topology: {cache: []}}",
        &["did you mean 'caches'"],
    );
}

#[test]
fn tufs_parse_validate_and_round_trip() {
    let p = "platform: {cpus: 1}\ntasks:\n";
    let ts = yaml(&format!(
        "{p}  - {{name: s, period: 10, wcet: 1, tuf: 4}}\n  - {{name: l, period: 10, wcet: 1, tuf: {{shape: linear, utility: 8, termination: 20}}}}\n  - {{name: q, period: 10, wcet: 1, deadline: 5, tuf: {{shape: quadratic, utility: 2}}}}\n  - {{name: w, period: 10, wcet: 1, tuf: {{shape: piecewise, points: [[0, 3], [4, 3], [8ms, 1]]}}}}\n  - {{name: d, period: 10, wcet: 1}}\n"
    ))
    .unwrap();
    let ms = crate::time::NS_PER_MS;
    assert_eq!(
        ts.tasks[0].tuf,
        Some(Tuf::Step {
            utility: 4.0,
            termination: 10 * ms
        })
    );
    assert_eq!(
        ts.tasks[1].tuf,
        Some(Tuf::Linear {
            utility: 8.0,
            termination: 20 * ms
        })
    );
    assert_eq!(
        ts.tasks[2].tuf,
        Some(Tuf::Quadratic {
            utility: 2.0,
            termination: 5 * ms
        }),
        "termination defaults to the deadline"
    );
    assert_eq!(
        ts.tasks[3].tuf,
        Some(Tuf::Piecewise {
            points: vec![(0, 3.0), (4 * ms, 3.0), (8 * ms, 1.0)]
        })
    );
    assert_eq!(
        (
            ts.tasks[4].tuf.clone(),
            ts.tasks[4].max_utility(),
            ts.tasks[4].utility_at(10 * ms),
            ts.tasks[4].utility_at(10 * ms + 1)
        ),
        (None, 1.0, 1.0, 0.0)
    );
    assert_eq!(yaml(&to_yaml(&ts)).unwrap().tasks, ts.tasks, "round trip");
    let bad = |tuf: &str, needles: &[&str]| {
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, tuf: {tuf}}}"),
            &[&["task 't0'"][..], needles].concat(),
        )
    };
    bad("-1", &["'tuf'", "utility must be >= 0"]);
    bad("{shape: linear, utility: -2}", &["'tuf.utility'", ">= 0"]);
    bad(
        "{shape: linear, termination: -5}",
        &["'tuf.termination'", "after it"],
    );
    bad(
        "{shape: linear, termination: 0}",
        &["'tuf.termination'", "after it"],
    );
    bad(
        "{shape: piecewise, points: [[0, 1], [5, 2], [3, 0]]}",
        &["'tuf.points[2]'", "out of order"],
    );
    bad(
        "{shape: piecewise, points: [[0, 1], [2, -1]]}",
        &["'tuf.points[1]'", ">= 0"],
    );
    bad("{shape: piecewise}", &["'tuf.points'", "needs 'points'"]);
    bad(
        "{shape: piecewise, points: [[0, 1]], utility: 3}",
        &["'tuf.utility'", "does not apply"],
    );
    bad("{shape: cubic}", &["'tuf.shape'", "unknown shape 'cubic'"]);
    bad(
        "{shape: step, utilty: 3}",
        &["utilty", "did you mean 'utility'"],
    );
}

#[test]
fn malformed_json_has_position() {
    let e = parse_taskset(
        "{\"platform\": {\"cpus\": 2},\n \"tasks\": [}",
        Format::Json,
        "x.json",
    )
    .unwrap_err();
    let s = e.to_string();
    assert!(s.contains("x.json: line 2 column"), "{s}");
}

#[test]
fn execution_models() {
    let ts = yaml("platform: {cpus: 1}\nrun: {execution: {model: uniform, min: 0.5}}\ntasks: [{name: a, period: 10, wcet: 1}]").unwrap();
    assert_eq!(ts.run.execution, ExecModel::Uniform { min: 0.5, max: 1.0 });
    let e = yaml("platform: {cpus: 1}\nrun: {execution: {model: uniform, min: 2, max: 1}}\ntasks: [{name: a, period: 10, wcet: 1}]");
    assert!(e.is_err());
}

/// The diamond a(2) -> {b(4), c(3)} -> d(1), with a section in b.
const DIAMOND: &str = "platform: {cpus: 2}\ntasks:\n  - {name: s, period: 5, wcet: 1}\n  - name: p\n    period: 20\n    dag:\n      nodes: {a: 2ms, b: 4, c: \"3ms\", d: 1}\n      edges: [[a, b], [a, c], [b, d], [c, d]]\n    sections: [{resource: bus, node: b, start: 1, length: 2}]\n";

#[test]
fn a_dag_parses_with_its_work_and_critical_path() {
    let ts = yaml(DIAMOND).unwrap();
    let t = &ts.tasks[1];
    let d = t.dag.as_ref().unwrap();
    let names: Vec<&str> = d.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(d.edges, vec![(0, 1), (0, 2), (1, 3), (2, 3)]);
    assert!(t.regions.is_empty());
    assert_eq!((t.wcet, t.critical_path()), (10_000_000, 7_000_000));
    assert!(t.is_parallel() && ts.has_structure());
    // The section is in node b: thread 1 of the program's one region of nodes.
    assert_eq!((t.sections[0].region, t.sections[0].thread), (0, 1));
    let p = t.program();
    assert_eq!(p.regions.len(), 1);
    assert_eq!(p.regions[0][1].checkpoints.len(), 2);
    assert_eq!(p.dag.as_ref().unwrap().sources, vec![0]);
    // JSON reads the same; the writer writes the DAG back.
    let json = parse_taskset(
        r#"{"platform": {"cpus": 2}, "tasks": [{"name": "s", "period": 5, "wcet": 1}, {"name": "p", "period": 20, "dag": {"nodes": {"a": "2ms", "b": 4, "c": 3, "d": 1}, "edges": [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]}, "sections": [{"resource": "bus", "node": "b", "start": 1, "length": 2}]}]}"#,
        Format::Json,
        "ts.yaml",
    )
    .unwrap();
    assert_eq!(json, ts);
    let out = to_yaml(&ts);
    assert!(out.contains("dag: {nodes: {\"a\": \"2ms\""), "{out}");
    assert!(out.contains("node: \"b\""), "{out}");
    assert_eq!(yaml(&out).unwrap(), ts, "{out}");
    // Several sources and sinks, and wcet given equal to the work.
    let two = "platform: {cpus: 2}\ntasks:\n  - {name: q, period: 20, wcet: 6, dag: {nodes: {x: 1, y: 2, z: 3}, edges: [[x, z], [y, z]]}}\n";
    let ts = yaml(two).unwrap();
    assert_eq!(
        ts.tasks[0].dag.as_ref().unwrap().sources_and_sinks().0,
        vec![0, 1]
    );
    assert_eq!(yaml(&to_yaml(&ts)).unwrap(), ts);
}

#[test]
fn bad_dags_are_named() {
    let p = "platform: {cpus: 2}\ntasks:\n  - {name: s, period: 5, wcet: 1}\n";
    let t = |dag: &str| format!("{p}  - {{name: p, period: 20, dag: {dag}}}\n");
    let cases: &[(&str, &[&str])] = &[
        (
            "{nodes: {a: 1, b: 1, c: 1}, edges: [[a, b], [b, c], [a, c], [a, x]]}",
            &["task 'p' (tasks[1])", "'dag.edges[3]'", "unknown node 'x'"],
        ),
        (
            "{nodes: {a: 1, bb: 1, cc: 1}, edges: [[a, bb], [bb, cd]]}",
            &["'dag.edges[1]'", "unknown node 'cd' (did you mean 'cc'?)"],
        ),
        (
            "{nodes: {a: 1, b: 1, c: 1}, edges: [[a, b], [b, c], [c, b]]}",
            &["'dag.edges'", "cycle: b -> c -> b"],
        ),
        (
            "{nodes: {a: 1, b: 1, c: 1, d: 1}, edges: [[a, b], [c, d]]}",
            &[
                "'dag.edges'",
                "not connected: 'c', 'd' are not linked to 'a'",
            ],
        ),
        (
            "{nodes: {a: 1, b: 1}, edges: [[a, a]]}",
            &["'dag.edges[0]'", "self-loop on 'a'"],
        ),
        (
            "{nodes: {a: 1, b: 1}, edges: [[a, b], [a, b]]}",
            &[
                "'dag.edges[1]'",
                "duplicate edge 'a' -> 'b' (also dag.edges[0])",
            ],
        ),
        (
            "{nodes: {a: 1, b: 0}, edges: [[a, b]]}",
            &["'dag.nodes.b'", "must be > 0"],
        ),
        ("{nodes: {a: 1, a: 2}}", &["'dag.nodes.a'", "given twice"]),
        ("{nodes: {}}", &["'dag.nodes'", "at least one node"]),
        ("{edges: []}", &["'dag.nodes'", "missing required field"]),
        (
            "{nodes: {a: 1}, edge: []}",
            &["'dag.edge'", "did you mean 'edges'"],
        ),
        (
            "{nodes: {a: 1, b: 1}, edges: [[a]]}",
            &["'dag.edges[0]'", "a pair"],
        ),
        ("[1, 2]", &["'dag'", "expected a mapping"]),
    ];
    for (dag, needles) in cases {
        expect_err(&t(dag), needles);
    }
    expect_err(
        &format!(
            "{p}  - {{name: p, period: 20, regions: [1, [1, 1]], dag: {{nodes: {{a: 1}}}}}}\n"
        ),
        &["'dag'", "either 'regions' or 'dag'"],
    );
    expect_err(
        &format!("{p}  - {{name: p, period: 20, wcet: 3, dag: {{nodes: {{a: 1, b: 1}}, edges: [[a, b]]}}}}\n"),
        &["'wcet'", "is 3ms but the DAG's nodes sum to 2ms"],
    );
    expect_err(
        &format!("{p}  - {{name: p, period: 20, dag: {{nodes: {{a: 1, b: 2}}, edges: [[a, b]]}}, sections: [{{resource: r, region: 0, start: 0, length: 1}}]}}\n"),
        &["'region'", "names its node"],
    );
    expect_err(
        &format!("{p}  - {{name: p, period: 20, dag: {{nodes: {{a: 1, b: 2}}, edges: [[a, b]]}}, sections: [{{resource: r, node: c, start: 0, length: 1}}]}}\n"),
        &["'node'", "unknown node 'c'"],
    );
    expect_err(
        &format!("{p}  - {{name: p, period: 20, dag: {{nodes: {{a: 1, b: 2}}, edges: [[a, b]]}}, sections: [{{resource: r, node: a, start: 0, length: 2}}]}}\n"),
        &["'length'", "after the thread's WCET 1ms"],
    );
    expect_err(
        &format!("{p}  - {{name: p, period: 20, wcet: 2, sections: [{{resource: r, node: a, start: 0, length: 1}}]}}\n"),
        &["'node'", "DAG tasks only"],
    );
    expect_err(
        &format!(
            "{p}  - {{name: p, period: 20, dag: {{nodes: {{a: 1}}}}, execution_times: [1]}}\n"
        ),
        &["'execution_times'", "a DAG"],
    );
}

#[test]
fn linux_policies_parse_check_and_round_trip() {
    let ts = yaml(
        "platform: {cpus: 1}\nrun: {default_policy: fifo}\ntasks:\n\
         - {name: dl, period: 10, deadline: 5, wcet: 4, policy: deadline, runtime: 2}\n\
         - {name: dl2, period: 10, wcet: 2, policy: deadline}\n\
         - {name: ff, period: 4, wcet: 1, priority: 50}\n\
         - {name: rr, period: 4, wcet: 1, priority: 7, policy: rr}\n\
         - {name: ot, period: 20, wcet: 1, policy: other, nice: -3}\n\
         - {name: hog, policy: other, behaviour: hog, nice: 2}\n",
    )
    .unwrap();
    let ms = 1_000_000;
    assert_eq!(ts.run.default_policy, Some(PolicyKind::Fifo));
    let p: Vec<_> = ts.tasks.iter().map(|t| t.policy).collect();
    assert_eq!(
        p,
        vec![
            Some(SchedPolicy::Deadline {
                runtime: Some(2 * ms)
            }),
            Some(SchedPolicy::Deadline { runtime: None }),
            None,
            Some(SchedPolicy::Rr),
            Some(SchedPolicy::Other { nice: -3 }),
            None,
        ]
    );
    assert_eq!(ts.sched_policy(2), SchedPolicy::Fifo, "the set's default");
    assert!(
        ts.tasks[5].is_fair(),
        "policy other with a behaviour: best-effort"
    );
    assert_eq!(ts.sched_policy(5), SchedPolicy::Other { nice: 2 });
    let back = yaml(&crate::file::write::to_yaml(&ts)).unwrap();
    assert_eq!(back.tasks, ts.tasks);
    assert_eq!(back.run, ts.run);
    // Without any policy, a task is a deadline task reserving its WCET.
    let plain = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n").unwrap();
    assert!(!plain.has_policies());
    assert_eq!(
        plain.sched_policy(0),
        SchedPolicy::Deadline { runtime: None }
    );
}

#[test]
fn bad_linux_policies_are_named() {
    let msg = |t: &str| {
        yaml(&format!("platform: {{cpus: 1}}\ntasks:\n  - {t}\n"))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        msg("{name: a, period: 10, wcet: 1, policy: edf}"),
        "ts.yaml: task 'a' (tasks[0]): field 'policy': unknown policy \"edf\" (known: deadline, fifo, rr, other: SCHED_DEADLINE, SCHED_FIFO, SCHED_RR, SCHED_OTHER)"
    );
    // sched_setattr's rule: runtime <= deadline <= period, runtime >= 1024 ns, period >= 100 us.
    assert_eq!(
        msg("{name: a, period: 10, deadline: 5, wcet: 2, policy: deadline, runtime: 6}"),
        "ts.yaml: task 'a' (tasks[0]): field 'runtime': SCHED_DEADLINE needs runtime <= deadline (6000000 > 5000000 ns): sched_setattr would refuse it (EINVAL)"
    );
    assert_eq!(
        msg("{name: a, period: 10, deadline: 5, wcet: 6, policy: deadline}"),
        "ts.yaml: task 'a' (tasks[0]): field 'wcet': SCHED_DEADLINE needs runtime <= deadline (6000000 > 5000000 ns) (the runtime is the WCET unless 'runtime' is given): sched_setattr would refuse it (EINVAL)"
    );
    assert!(msg("{name: a, period: 0.05, wcet: 0.01, policy: deadline}")
        .contains("field 'period': SCHED_DEADLINE needs 100000 <= period"));
    assert!(
        msg("{name: a, period: 10, wcet: 1, policy: deadline, runtime: 500ns}")
            .contains("field 'runtime': SCHED_DEADLINE needs runtime >= 1024 ns")
    );
    assert_eq!(
        msg("{name: a, period: 10, wcet: 1, policy: fifo}"),
        "ts.yaml: task 'a' (tasks[0]): field 'priority': missing: policy fifo needs a priority from 1 to 99 (SCHED_FIFO's sched_priority)"
    );
    assert!(msg("{name: a, period: 10, wcet: 1, policy: rr, priority: 100}").contains("field 'priority': policy rr needs a priority from 1 to 99 (SCHED_RR's sched_priority), got 100"));
    assert!(
        msg("{name: a, period: 10, wcet: 1, policy: fifo, priority: 3, runtime: 1}").contains(
            "field 'runtime': applies to policy: deadline only (this task runs under policy fifo)"
        )
    );
    assert!(
        msg("{name: a, period: 10, wcet: 1, policy: deadline, nice: 1}")
            .contains("field 'nice': applies to policy: other only")
    );
    assert!(msg("{name: a, period: 10, wcet: 1, runtime: 1}")
        .contains("field 'runtime': applies to policy: deadline only"));
    assert!(
        msg("{name: a, period: 10, regions: [1, [1, 1]], policy: deadline, runtime: 1}")
            .contains("field 'runtime': applies to sequential tasks only")
    );
    assert!(msg("{name: a, class: fair, policy: fifo}").contains(
        "field 'policy': a best-effort task runs under policy other (SCHED_OTHER), not fifo"
    ));
    // The set's default is checked as a task's own policy would be, and named as the cause.
    let e = yaml("platform: {cpus: 1}\nrun: {default_policy: rr}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("field 'priority': missing: run.default_policy rr needs a priority"),
        "{e}"
    );
    let e = yaml("platform: {cpus: 1}\nrun: {default_policy: idle}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("run: field 'default_policy': unknown policy \"idle\""),
        "{e}"
    );
    // Without a policy, `nice` still makes a best-effort task, and an explicit class rt refuses it.
    assert!(msg("{name: a, class: rt, period: 10, wcet: 1, nice: 2}")
        .contains("field 'nice': applies to best-effort tasks only"));
    // A deadline task beyond sched_setattr's rule is accepted without a policy (other schedulers).
    assert!(
        yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 0.01, wcet: 0.0005}\n").is_ok()
    );
}
