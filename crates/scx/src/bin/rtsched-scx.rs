//! rtsched-scx: load rtsched's sched_ext scheduler.
//!
//!   rtsched-scx load [--mode gedf|gedf-linear|pedf|user] [--pin DIR] [--stdin] [--fair-starve-ms N]
//!       attach it; print "ready"; run until SIGINT/SIGTERM (or, with --stdin, until standard
//!       input closes); then print the counters and detach.
//!   rtsched-scx verify [--mode M]   load without attaching; print the verifier's counts
//!   rtsched-scx state               print /sys/kernel/sched_ext/state
//!
//! Exit codes: 0 success, 1 the kernel refused or stopped the scheduler, 2 bad usage or a
//! machine that cannot load it (no sched_ext, not root, one already loaded).

use rtsched_scx::{wait_state, Loaded, Mode, Options, STATE};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn usage(msg: &str) -> ! {
    eprintln!("rtsched-scx: {msg}\nusage: rtsched-scx load [--mode gedf|gedf-linear|pedf|user] [--pin DIR] [--stdin] [--fair-starve-ms N]\n       rtsched-scx verify [--mode M]\n       rtsched-scx state");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        usage("no command")
    };
    let mut o = Options::default();
    let mut stdin = false;
    let mut i = 1;
    while i < args.len() {
        let val = |i: usize| {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])))
        };
        match args[i].as_str() {
            "--mode" => {
                o.mode = Mode::parse(&val(i)).unwrap_or_else(|e| usage(&e));
                i += 1;
            }
            "--pin" => {
                o.pin = Some(val(i).into());
                i += 1;
            }
            "--fair-starve-ms" => {
                let ms: u64 = val(i).parse().unwrap_or_else(|_| {
                    usage("--fair-starve-ms needs a whole number of milliseconds")
                });
                if ms == 0 || ms > 10_000 {
                    usage("--fair-starve-ms must be 1..=10000 (the watchdog ejects a scheduler that starves a task for 10 s)");
                }
                o.fair_starve_ns = ms * 1_000_000;
                i += 1;
            }
            "--stdin" => stdin = true,
            a => usage(&format!("unknown argument '{a}'")),
        }
        i += 1;
    }
    match cmd.as_str() {
        "state" => match rtsched_linux::scx::state() {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("rtsched-scx: {e}");
                std::process::exit(2)
            }
        },
        "verify" => {
            o.attach = false;
            o.pin = None;
            let l = load(&o);
            let v = l.verified();
            let total: u64 = v.iter().map(|p| p.verified_insns as u64).sum();
            for p in &v {
                println!(
                    "verified {:<24} {:>7} insns processed, {:>5} insns",
                    p.program, p.verified_insns, p.insns
                );
            }
            println!(
                "verified total {} {total} insns processed by the verifier, {} programs",
                o.mode.name(),
                v.len()
            );
        }
        "load" => {
            // SAFETY: installing a handler that only stores to an atomic.
            unsafe {
                libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
                libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
            }
            let l = load(&o);
            eprintln!(
                "rtsched-scx: {} attached ({STATE}: {})",
                o.mode.name(),
                std::fs::read_to_string(STATE).unwrap_or_default().trim()
            );
            println!("ready");
            let _ = std::io::stdout().flush();
            if stdin {
                std::thread::spawn(|| {
                    let mut buf = [0u8; 64];
                    while std::io::stdin().read(&mut buf).is_ok_and(|n| n > 0) {}
                    STOP.store(true, Ordering::SeqCst);
                });
            }
            let mut ejected = false;
            while !STOP.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(20));
                if l.exit_info().0 != 0 {
                    ejected = true;
                    break;
                }
            }
            for (k, v) in l.stats() {
                println!("scx.{k} {v}");
            }
            let (kind, why) = l.exit_info();
            drop(l);
            let unloaded = wait_state("disabled", 2000);
            println!("scx.unloaded {}", unloaded as u8);
            if ejected || kind != 0 && !STOP.load(Ordering::SeqCst) {
                eprintln!(
                    "rtsched-scx: the kernel stopped the scheduler (exit kind {kind}): {why}"
                );
                std::process::exit(1);
            }
            eprintln!(
                "rtsched-scx: detached; {STATE}: {}",
                std::fs::read_to_string(STATE).unwrap_or_default().trim()
            );
        }
        c => usage(&format!("unknown command '{c}'")),
    }
}

fn load(o: &Options) -> Loaded {
    match rtsched_scx::precheck(o.attach) {
        Err(e) => {
            eprintln!("rtsched-scx: {e}");
            std::process::exit(2)
        }
        Ok(()) => Loaded::load(o).unwrap_or_else(|e| {
            eprintln!("rtsched-scx: {e}");
            std::process::exit(1)
        }),
    }
}
