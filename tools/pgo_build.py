"""Build and install the extension (``make build``) with profile-guided optimisation.

The simulator's cost is spread over many small branches (release, schedule, the event queue,
the summaries: no one of them over a tenth of a run), so no single change in the code
takes much more; what the compiler does with them does. Built with a profile of a training run,
the same code runs 10-14% fewer instructions on what the training covers (docs/performance.md
"Profile-guided build").

1. The extension is built instrumented (``-Cprofile-generate``) into ``target/pgo-gen``, as a
   wheel unpacked into ``target/pgo/pkg``: the installed package is never the instrumented one.
2. ``tools/pgo_train.py`` runs on it (what users run: every policy, the writers, sweep rows);
   its raw counts go to ``target/pgo/raw``.
3. ``llvm-profdata`` merges them; it must read the raw format of rustc's LLVM (LLVM 19's reads
   rustc 1.95's). As root with apt, Debian's ``llvm-19`` is installed when none here does.
4. The extension is built with ``-Cprofile-use`` into ``target/pgo-use`` and installed
   (``maturin develop``). The profile's file name carries its hash, so a new profile rebuilds.

Steps 2-3 are skipped while the instrumented library and the training script are the ones
the profile was made from.
Without a usable ``llvm-profdata``, or with ``RTSCHED_PGO=0``, the plain release build is
installed (into ``target/``, as before), with a note saying so. Output is the same either way;
only speed differs (the tests run on whichever was built).

    .venv/bin/python tools/pgo_build.py
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PGO = ROOT / "target" / "pgo"
MATURIN = str(Path(sys.executable).parent / "maturin")
#: The Debian package installed (as root) when no llvm-profdata here reads rustc's raw profiles.
APT_LLVM = "llvm-19"


def say(msg):
    print(f"pgo_build: {msg}", file=sys.stderr, flush=True)


def run(cmd, env=None, **kw):
    return subprocess.run([str(c) for c in cmd], env=env, check=True, cwd=ROOT, **kw)


def plain():
    """The release build without a profile (what `make build` did before PGO)."""
    run([MATURIN, "develop", "--release", "--quiet"])


def flags_env(target: str, flag: str) -> dict:
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target" / target))
    env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + " " + flag).strip()
    return env


def rustc_llvm_major() -> int:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"LLVM version: (\d+)", out)
    return int(m.group(1)) if m else 0


def profdata_tools() -> list[str]:
    """Every llvm-profdata here, newest first (a newer one reads more raw formats)."""
    found = []
    for k in range(max(rustc_llvm_major(), 19), 13, -1):
        for c in (f"llvm-profdata-{k}", f"/usr/lib/llvm-{k}/bin/llvm-profdata"):
            p = shutil.which(c)
            if p and os.path.realpath(p) not in map(os.path.realpath, found):
                found.append(p)
    p = shutil.which("llvm-profdata")
    if p and os.path.realpath(p) not in map(os.path.realpath, found):
        found.append(p)
    return found


def merge(raws: list[str], out: Path) -> str | None:
    """Merge with the first tool that reads the raw files; that tool's path, or None."""
    for tool in profdata_tools():
        r = subprocess.run([tool, "merge", "-o", str(out), *raws], capture_output=True, text=True)
        if r.returncode == 0:
            return tool
    return None


def apt_install_llvm() -> bool:
    if os.geteuid() != 0 or not shutil.which("apt-get") or os.environ.get("RTSCHED_PGO_APT") == "0":
        return False
    say(f"no llvm-profdata here reads rustc's profiles: installing Debian's {APT_LLVM}")
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", APT_LLVM]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if subprocess.run(cmd, **quiet).returncode == 0:
        return True
    subprocess.run(["apt-get", "update", "-q"], **quiet)
    return subprocess.run(cmd, **quiet).returncode == 0


def sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def instrumented() -> Path:
    """Build the instrumented wheel and unpack it into PGO/pkg; the extension's path."""
    wheels = PGO / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    raw = PGO / "raw"
    run([MATURIN, "build", "--release", "--quiet", "--compatibility", "linux", "-i", sys.executable, "-o", wheels],
        env=flags_env("pgo-gen", f"-Cprofile-generate={raw}"))
    (wheel,) = wheels.glob("*.whl")
    pkg = PGO / "pkg"
    shutil.rmtree(pkg, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(pkg)
    (lib,) = pkg.glob("rtsched/_core*.so")
    return lib


def profile() -> Path | None:
    """The merged profile of the current instrumented build (made anew when that changed)."""
    lib = instrumented()
    stamp = PGO / "profile.json"
    # The profile stands for this instrumented library trained by this training script.
    lib_sha = sha(lib) + ":" + sha(ROOT / "tools" / "pgo_train.py")
    try:
        known = json.loads(stamp.read_text())
        if known["lib"] == lib_sha and (PGO / known["profdata"]).exists():
            return PGO / known["profdata"]
    except (OSError, ValueError, KeyError):
        pass
    raw = PGO / "raw"
    shutil.rmtree(raw, ignore_errors=True)  # build scripts' counts, and any earlier run's
    raw.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(PGO / "pkg"), RTSCHED_PGO_PKG=str(PGO / "pkg"), LLVM_PROFILE_FILE=str(raw / "train-%p-%m.profraw"))
    say("training run of the instrumented extension (tools/pgo_train.py)")
    run([sys.executable, ROOT / "tools" / "pgo_train.py"], env=env)
    raws = sorted(glob.glob(str(raw / "*.profraw")))
    if not raws:
        say("the training run wrote no profile")
        return None
    tmp = PGO / "merged.profdata.tmp"
    tool = merge(raws, tmp)
    if tool is None and apt_install_llvm():
        tool = merge(raws, tmp)
    if tool is None:
        say("no llvm-profdata here reads rustc's raw profiles (LLVM 19 or newer needed; Debian: llvm-19)")
        return None
    name = f"rtsched-{sha(tmp)[:16]}.profdata"
    for old in PGO.glob("rtsched-*.profdata"):
        old.unlink()
    os.replace(tmp, PGO / name)
    stamp.write_text(json.dumps({"lib": lib_sha, "profdata": name, "merged_by": tool}))
    return PGO / name


def main() -> int:
    if os.environ.get("RTSCHED_PGO") == "0":
        plain()
        return 0
    PGO.mkdir(parents=True, exist_ok=True)
    try:
        prof = profile()
    except subprocess.CalledProcessError as e:  # the instrumented build or its training failed
        say(f"the profile could not be made ({' '.join(map(str, e.cmd[:3]))}... exited {e.returncode})")
        prof = None
    if prof is None:
        say("building without profile-guided optimisation (simulations run 10-14% more instructions; RTSCHED_PGO=0 skips this attempt)")
        plain()
        return 0
    run([MATURIN, "develop", "--release", "--quiet"], env=flags_env("pgo-use", f"-Cprofile-use={prof}"))
    say(f"installed the extension built with profile {prof.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
