"""Dask for sweeps: the settings that keep Dask's own housekeeping off the sweep's cores, and a
local cluster started with them.

A sweep's Dask tasks are few and coarse (a batch is about ``runner.TARGET_S`` of work, a few
dozen tasks a sweep), so Dask's periodic housekeeping, tuned for graphs of many small tasks
and for a dashboard, is pure overhead here. Idle, a default ``LocalCluster`` of 2 workers
took 4-7% of a core in the coordinating process (the scheduler and the nannies live there) and
4-5% in each worker; with :data:`DASK_CONFIG`, 1.1% and 0.4-0.5% (10 s samples of
``/proc/PID/stat``; docs/sweeps.md). On a machine whose every core runs a worker, that is CPU
the workers get back.

:func:`local_cluster` starts a ``LocalCluster`` under these settings; for a cluster started
by hand, :func:`dask_env` gives them as the environment variables ``dask scheduler`` and
``dask worker`` read.
"""

from __future__ import annotations

#: Dask settings for a sweep's cluster, and why each.
DASK_CONFIG = {
    # Every server checks its event loop's health every 20 ms by default: 50 wake-ups a second
    # in the scheduler and in each nanny and worker; once a second is plenty for tasks of 0.3 s.
    "distributed.admin.tick.interval": "1s",
    # The statistical profiler samples each worker's threads every 10 ms, for the dashboard's
    # profile page; a batch is one call into Rust, so there is nothing to see.
    "distributed.worker.profile.enabled": False,
    # CPU, memory and network figures for the dashboard, every 500 ms by default.
    "distributed.admin.system-monitor.interval": "5s",
    # Each nanny reads its worker's memory every 100 ms (to restart one that exceeds its
    # limit); a batch's memory is bounded (its rows), so once a second still catches a leak.
    "distributed.worker.memory.monitor-interval": "1s",
}


def dask_env() -> dict[str, str]:
    """:data:`DASK_CONFIG` as environment variables (``DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL=1s``
    ...), for ``dask scheduler`` and ``dask worker`` started by hand."""
    out = {}
    for key, value in DASK_CONFIG.items():
        name = "DASK_" + "__".join(part.upper().replace("-", "_") for part in key.split("."))
        out[name] = str(value)  # Dask parses the value as a Python literal, else keeps the string
    return out


def local_cluster(workers: int | None = None, threads: int = 1, **kwargs):
    """A Dask ``LocalCluster`` for sweeps: ``workers`` processes (default: every core) of
    ``threads`` threads each (1: a batch is CPU-bound and releases the GIL, so a second thread
    only competes for the core), no dashboard, started under
    :data:`DASK_CONFIG` (the nannies and workers keep it: Dask hands its configuration to the
    processes it starts). ``kwargs`` go to ``LocalCluster``. Use it as any cluster::

        with local_cluster(2) as cluster, Client(cluster) as client:
            rtsched.sweep(spec, executor=client.get_executor(), output="r.parquet")
    """
    import os

    import dask

    try:
        from distributed import LocalCluster
    except ImportError:
        from .._core import InputError

        raise InputError("local_cluster needs Dask: pip install 'dask[distributed]'") from None
    options = {"n_workers": workers or os.cpu_count() or 1, "threads_per_worker": threads, "processes": True,
               "dashboard_address": None}
    options.update(kwargs)
    with dask.config.set(DASK_CONFIG):
        return LocalCluster(**options)
