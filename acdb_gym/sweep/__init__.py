"""The resumable ladder sweep, one concept in parts.

- :mod:`~acdb_gym.sweep.run`: run a sweep's jobs to its results file (the face);
- :mod:`~acdb_gym.sweep.config`: what defines a sweep, checked whole when it is made;
- :mod:`~acdb_gym.sweep.planning`: the jobs of a config, each with its agent's entry;
- :mod:`~acdb_gym.sweep.schedulers`: where jobs run (this process, a pool, Ray);
- :mod:`~acdb_gym.sweep.in_flight`: the one loop that bounds the jobs in flight;
- :mod:`~acdb_gym.sweep.jobs`: one job, its stable id, and running it to its typed row;
- :mod:`~acdb_gym.sweep.workers`: forkserver worker processes with one BLAS thread each;
- :mod:`~acdb_gym.sweep.concurrent`: several LLM episodes at once inside one worker;
- :mod:`~acdb_gym.sweep.guards`: stop agents that keep failing, one spec per custom level name;
- :mod:`~acdb_gym.sweep.lock`: the run directory's lock (one writer at a time).

``acdb_gym.sweep.run_sweep`` and the other names below are the public entry points.
"""

from acdb_gym.sweep.run import Job, SweepConfig, SweepSummary, plan_jobs, run_job, run_sweep

__all__ = ["Job", "SweepConfig", "SweepSummary", "plan_jobs", "run_job", "run_sweep"]
