//! Adversarial task files: each gets a correct result or a clear error naming the file (and the
//! task and field where there is one), never a panic, in bounded time.

use rtsched_model::{load_taskset, parse_taskset, Format};

fn yaml(s: &str) -> Result<rtsched_model::TaskSet, String> {
    parse_taskset(s, Format::Yaml, "adv.yaml").map_err(|e| e.to_string())
}

#[test]
fn deeply_nested_yaml_is_refused_not_overflowed() {
    let deep = format!(
        "platform: {{cpus: 1}}\ntasks: {}{}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = yaml(&deep).unwrap_err();
    assert_eq!(
        e,
        "adv.yaml: line 2 column 208: malformed YAML: nested more than 200 levels deep"
    );
    let deep_json = format!(
        "{{\"platform\": {{\"cpus\": 1}}, \"tasks\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = parse_taskset(&deep_json, Format::Json, "adv.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("adv.json: ") && e.contains("recursion"),
        "{e}"
    );
}

#[test]
fn non_utf8_bytes_are_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("rtsched-adv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.yaml");
    std::fs::write(
        &p,
        b"platform: {cpus: 1}\ntasks:\n  - {name: \xff\xfe, period: 10, wcet: 1}\n",
    )
    .unwrap();
    let e = load_taskset(&p).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).ok();
    assert!(e.contains("bad.yaml") && e.contains("UTF-8"), "{e}");
}

#[test]
fn extreme_periods_and_full_utilisation_are_taken_exactly() {
    // 1 ns and 30 days; WCET equal to the period.
    let ts = yaml("platform: {cpus: 2}\ntasks:\n  - {name: fast, period: 1ns, wcet: 1ns}\n  - {name: slow, period: 2592000s, wcet: 2592000s}\n").unwrap();
    assert_eq!(ts.tasks[0].period, 1);
    assert_eq!(ts.tasks[1].period, 720 * 3600 * 1_000_000_000);
    assert_eq!(ts.tasks[1].wcet, ts.tasks[1].period);
    // Beyond u64 nanoseconds: an error naming the field, not a wrap-around.
    let e =
        yaml("platform: {cpus: 1}\ntasks:\n  - {name: t, period: 1e30, wcet: 1}\n").unwrap_err();
    assert!(
        e.contains("task 't'") && e.contains("field 'period'"),
        "{e}"
    );
    let e = yaml(
        "platform: {cpus: 1}\ntasks:\n  - {name: t, period: 10, wcet: 18446744073709551615}\n",
    )
    .unwrap_err();
    assert!(e.contains("field 'wcet'"), "{e}");
}

#[test]
fn a_hundred_thousand_tasks_with_coprime_periods_load() {
    // Co-prime periods make the hyperperiod astronomically large: loading must not need it.
    // (How the time grows with the count is measured by `--example load_scale`, not here.)
    let mut s = String::from("platform: {cpus: 64}\ntasks:\n");
    for i in 0..100_000u64 {
        s.push_str(&format!(
            "  - {{name: t{i}, period: {}us, wcet: 1ns}}\n",
            10_007 + 2 * i
        ));
    }
    let ts = yaml(&s).unwrap();
    assert_eq!(ts.tasks.len(), 100_000);
    let dup = format!("{s}  - {{name: t5, period: 1ms, wcet: 1ns}}\n");
    assert_eq!(
        yaml(&dup).unwrap_err(),
        "adv.yaml: task 't5' (tasks[100000]): field 'name': duplicate task name (also tasks[5])"
    );
}

/// Found by the `taskset_json` fuzzer: JSON takes a task name holding DEL (U+007F), which YAML
/// may not print, and `to_yaml` wrote it raw, so the written file did not read back. Names with
/// DEL, C1 controls (NEL among them, which YAML folds as a line break), line and paragraph
/// separators, U+FEFF and U+FFFF now go as `\u` escapes and round-trip.
#[test]
fn names_with_characters_yaml_cannot_print_round_trip() {
    for name in [
        "a\u{7f}b",
        "x\u{9b}y",
        "\u{85}nel",
        "l\u{2028}s\u{2029}p",
        "bom\u{feff}",
        "end\u{ffff}",
    ] {
        let text = serde_json::json!({"platform": {"cpus": 1}, "tasks": [{"name": name, "period": 10, "wcet": 1}]}).to_string();
        let ts = parse_taskset(&text, Format::Json, "fuzz.json").unwrap();
        let yaml = rtsched_model::file::to_yaml(&ts);
        let back = parse_taskset(&yaml, Format::Yaml, "back.yaml")
            .unwrap_or_else(|e| panic!("{name:?}: {e}\n{yaml}"));
        assert_eq!(back.tasks[0].name, name);
    }
    // The fuzzer's own input.
    let crash = include_str!("../../../fuzz/corpus/taskset_json/regression-del-in-name.json");
    let ts = parse_taskset(crash, Format::Json, "fuzz.json").unwrap();
    let back = parse_taskset(
        &rtsched_model::file::to_yaml(&ts),
        Format::Yaml,
        "back.yaml",
    )
    .unwrap();
    assert_eq!(back.tasks, ts.tasks);
}

/// What is not a regular file (or a FIFO) is refused before it is read, and a file over the
/// limit by its size: /dev/zero would otherwise be read until memory ran out.
#[test]
fn devices_directories_and_huge_files_are_refused_before_reading() {
    let t = std::time::Instant::now();
    let e = load_taskset("/dev/zero").unwrap_err().to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("is a character device, not a task-set file"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("rtsched-adv-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = load_taskset(&dir).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    let big = dir.join("big.yaml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(rtsched_model::file::MAX_TASKSET_BYTES + 1)
        .unwrap(); // sparse: nothing is written
    let e = load_taskset(&big).unwrap_err().to_string();
    assert!(
        e.contains("big.yaml") && e.contains("more than a task-set file's limit of 33554432 bytes"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

/// A byte-order mark before the text is taken as what it is (it was refused as "more than
/// one document").
#[test]
fn a_byte_order_mark_is_accepted() {
    for (text, format) in [("\u{feff}platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n", Format::Yaml),
                           ("\u{feff}{\"platform\": {\"cpus\": 1}, \"tasks\": [{\"name\": \"a\", \"period\": 10, \"wcet\": 1}]}", Format::Json)] {
        let ts = parse_taskset(text, format, "bom").unwrap_or_else(|e| panic!("{format:?}: {e}"));
        assert_eq!(ts.tasks[0].name, "a");
    }
}
