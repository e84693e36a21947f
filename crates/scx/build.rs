//! Compiles the BPF scheduler (bpf/rtsched.bpf.c) with clang for the BPF target.
//!
//! Needs clang (RTSCHED_CLANG, else clang-19, else clang) and the `vmlinux.h` of a kernel with
//! sched_ext (RTSCHED_VMLINUX_H, else the one `crates/scx/guest/test.sh` fetched into
//! target/scx-guest/). Without them the crate still builds and the loader says what is missing.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=bpf/rtsched.bpf.c");
    println!("cargo:rerun-if-env-changed=RTSCHED_CLANG");
    println!("cargo:rerun-if-env-changed=RTSCHED_VMLINUX_H");
    println!("cargo:rerun-if-env-changed=RTSCHED_BPF_TRACE");
    println!("cargo:rustc-check-cfg=cfg(rtsched_bpf)");
    println!("cargo:rustc-check-cfg=cfg(rtsched_bpf_trace)");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let vmlinux = std::env::var_os("RTSCHED_VMLINUX_H")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../target/scx-guest/include/vmlinux.h"));
    println!("cargo:rerun-if-changed={}", vmlinux.display());
    let clang = std::env::var("RTSCHED_CLANG")
        .ok()
        .into_iter()
        .chain(["clang-19".to_string(), "clang".to_string()])
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let missing = match (&clang, vmlinux.is_file()) {
        (None, _) => Some("no clang (clang-19 or clang) on PATH".to_string()),
        (_, false) => Some(format!(
            "no vmlinux.h at {} (set RTSCHED_VMLINUX_H)",
            vmlinux.display()
        )),
        _ => None,
    };
    if let Some(why) = missing {
        println!("cargo:warning=rtsched-scx built without its BPF scheduler: {why}");
        println!("cargo:rustc-env=RTSCHED_BPF_MISSING={why}");
        return;
    }
    let obj = out.join("rtsched.bpf.o");
    // RTSCHED_BPF_TRACE=1: the user-space mode's trace lines (bpf_printk), a development aid.
    let trace = std::env::var("RTSCHED_BPF_TRACE").is_ok_and(|v| v == "1");
    let status = Command::new(clang.unwrap())
        .args([
            "-g",
            "-O2",
            "-target",
            "bpf",
            "-D__TARGET_ARCH_x86",
            "-Wall",
            "-Wno-missing-declarations",
            "-Wno-unused-function",
        ])
        .args(trace.then_some("-DRTSCHED_TRACE"))
        .arg("-I")
        .arg(vmlinux.parent().unwrap())
        .arg("-c")
        .arg(manifest.join("bpf/rtsched.bpf.c"))
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("run clang");
    assert!(
        status.success(),
        "clang failed to compile bpf/rtsched.bpf.c"
    );
    println!("cargo:rustc-cfg=rtsched_bpf");
    if trace {
        println!("cargo:rustc-cfg=rtsched_bpf_trace");
    }
}
