"""Figures a reader can put in a paper: Gantt charts (a window to choose, releases and
deadlines, critical sections, the legend beside the chart, an error instead of an empty
chart)."""

import matplotlib.pyplot as plt
import pytest

import rtsched
from conftest import EXAMPLES, run_cli
from rtsched import plots
from rtsched.gantt import parse_window


def test_parse_window():
    assert parse_window("0:40") == (0, 40_000_000)
    assert parse_window("1s:1.2s") == (1_000_000_000, 1_200_000_000)
    assert parse_window(":3") == (None, 3_000_000) and parse_window("100:") == (100_000_000, None)
    assert parse_window((10, "20ms")) == (10_000_000, 20_000_000)
    for bad, says in [("20:10", "the end must be after the start"), ("5", "expected START:END"),
                      ("1x:2", "unknown unit 'x'"), ("1:2:3", "expected START:END")]:
        with pytest.raises(rtsched.InputError, match=says):
            parse_window(bad, "--gantt-window")


def test_gantt_window_marks_and_legend(tmp_path):
    rs = [rtsched.simulate(EXAMPLES / "dhall.yaml", s, trace=True) for s in ("gedf", "pedf")]
    fig = plots.gantt(rs, tmp_path / "g.png", window="5:30")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    a0 = fig.axes[0]
    assert a0.get_xlim() == (5.0, 30.0)
    assert "window 5–30 ms of a 109 ms run" in fig.axes[-1].get_xlabel()
    # Releases (▲) and deadlines (▼) in one lane per task; gedf's missed one in red.
    assert [t.get_text() for t in a0.get_yticklabels()] == ["CPU 0", "CPU 1", "light1", "light2", "heavy"]
    markers = {ln.get_marker() for ln in a0.lines}
    assert {"^", "v"} <= markers
    red = [ln for ln in a0.lines if ln.get_marker() == "v" and ln.get_color() == "red"]
    assert len(red) == 1 and list(red[0].get_xdata()) == [11.0]  # heavy's deadline at 11 ms
    assert not [ln for ln in fig.axes[1].lines if ln.get_color() == "red"]  # pedf misses nothing
    # The legend sits beside the first panel, right of the plot, top-aligned with it.
    leg = fig.legends[0]
    labels = [t.get_text() for t in leg.get_texts()]
    assert labels == ["light1", "light2", "heavy", "release", "deadline", "missed deadline"]
    fig.canvas.draw()
    lb, ab = leg.get_window_extent(), a0.get_window_extent()
    assert lb.x0 >= ab.x1 and abs(lb.y1 - ab.y1) < 5
    plt.close("all")


def test_gantt_default_window_is_said():
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf", trace=True)
    fig = r.gantt()
    assert fig.axes[0].get_xlim() == (0.0, 44.0)  # four periods of the longest-period task (11 ms)
    assert "the window 0–44 ms of a 109 ms run" in fig.axes[0].get_xlabel()
    plt.close("all")


def test_gantt_critical_sections(tmp_path):
    r = rtsched.simulate(EXAMPLES / "fork-join.yaml", "gedf", trace=True)
    fig = r.gantt(tmp_path / "fj.png", window="0:30")
    hatched = [c for c in fig.axes[0].collections if c.get_hatch()]
    assert hatched
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "holds can_bus" in labels and "holds log" in labels
    # control (C = 1.2 ms, scaled by its demand) holds can_bus from 0.8 to 1.1 ms of its work:
    # its first job runs alone from 0, so the section is at [0.8, 1.1] × demand / WCET.
    j = r.jobs[(r.jobs.task == "control") & (r.jobs.job == 0)].iloc[0]
    d = int(j.demand_ns)
    lo, hi = 800_000 * d // 1_200_000, 1_100_000 * d // 1_200_000
    iv = r.intervals[(r.intervals.task == "control") & (r.intervals.job == 0)]
    assert len(iv) == 1 and iv.overhead_ns.iloc[0] == 0  # ran without a break (no overhead model)
    s0 = int(iv.start_ns.iloc[0])
    spans = [(v[:, 0].min(), v[:, 0].max()) for c in hatched for v in [c.get_paths()[0].vertices]]
    assert any(abs(a - (s0 + lo) / 1e6) < 1e-9 and abs(b - (s0 + hi) / 1e6) < 1e-9 for a, b in spans), spans
    plt.close("all")


def test_gantt_without_a_trace_is_an_error():
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf")  # trace=False: no intervals
    with pytest.raises(rtsched.InputError, match=r"recorded no execution intervals \(simulate\(\.\.\., trace=True\)"):
        r.gantt()
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf", trace=True)
    with pytest.raises(rtsched.InputError, match="starts at 5000 ms, but the run.s. end at 109 ms"):
        r.gantt(window="5s:6s")


def test_cli_gantt_window(tmp_path):
    out = tmp_path / "g.png"
    run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", "pedf", "--gantt", out, "--gantt-window", "10ms:30ms",
            check=0)
    assert out.read_bytes()[:4] == b"\x89PNG"
    cases = [
        (["--gantt-window", "0:20"], "--gantt-window 0:20: needs --gantt OUT.png"),
        (["--gantt", out, "--gantt-window", "20:10"], "--gantt-window 20:10: the end must be after the start"),
        (["--gantt", out, "--gantt-window", "1x:2"], "--gantt-window 1x:2: unknown unit 'x'"),
        (["--gantt", out, "--gantt-window", "5s:"], f"--gantt {out}: the Gantt chart's window starts at 5000 ms"),
    ]
    for args, says in cases:
        r = run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", *args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
