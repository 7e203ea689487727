"""Where a sweep's jobs run: a local pool (the default) or a Ray cluster.

Both run the same function, :func:`.jobs.run_job`, on the same arguments, and hand each result
back as it finishes, so the table does not depend on the executor. The local pool keeps ``-j N``
job processes going at once (each job is a process of its own, so the pool's workers are
threads that wait on them). Ray is an optional dependency (``pip install 'rivulet-hw[ray]'``):
``--executor ray`` starts a local cluster with the pool's number of CPUs, or joins the one at
``--address``. On a cluster of several machines, the job directories must be on a file system
they all see, as the Verilator builds under ``build/`` are.
"""

import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from rivulet.extras import require_extra

from .jobs import run_job
from .spec import SweepError

__all__ = ["EXECUTORS", "run_on_pool", "run_on_ray", "default_workers"]

EXECUTORS = ("pool", "ray")


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_on_pool(tasks: list, on_done, *, workers: int) -> None:
    """Run ``tasks`` (``(job, arguments of run_job)``) on ``workers`` threads, each driving one
    job process; ``on_done(job, result)`` as each finishes. Ctrl-C stops the waiting ones: the
    running job processes get the signal too (same process group) and end."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pending = {pool.submit(run_job, *arguments): job for job, arguments in tasks}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    on_done(pending.pop(future), future.result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def run_on_ray(tasks: list, on_done, *, workers: int, address: str | None = None) -> None:
    """Run ``tasks`` as Ray tasks of one CPU each: on the cluster at ``address``, on the one this
    process is connected to already, or on a local cluster of ``workers`` CPUs started (and shut
    down) here."""
    ray = require_extra("ray", "ray", "--executor ray")
    started_here = False
    if not ray.is_initialized():
        options = {"address": address} if address else {"num_cpus": workers, "include_dashboard": False}
        if not address:
            # Ray starts its workers at nice 15, and each job process inherits it: on a busy
            # machine the sweep then yields to everything else (4.5x the pool's wall time,
            # measured). A cluster of the sweep's own runs them as the pool does, unless told.
            os.environ.setdefault("RAY_worker_niceness", "0")
        try:
            ray.init(**options, logging_level="ERROR", log_to_driver=False)
        except ConnectionError as error:
            raise SweepError(f"--address {address}: no Ray cluster answers there ({error}); start one "
                             f"with `ray start --head`, or leave out --address for a local one") from None
        started_here = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(run_job)
        pending = {remote.remote(*arguments): job for job, arguments in tasks}
        try:
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1)
                for reference in finished:
                    on_done(pending.pop(reference), ray.get(reference))
        except BaseException:
            for reference in pending:
                ray.cancel(reference, force=True)
            raise
    finally:
        if started_here:
            ray.shutdown()
