"""Runs: suites of tasks x models, their cost before and during a run, and
whether they finished.

* :mod:`.spec` -- suite files (parsing, validation with file and line; the checks in :mod:`.spec_checks`);
* :mod:`.registered` -- which tasks and model providers a suite may name;
* :mod:`.run` -- Inspect tasks per model, ``eval_set``, signals;
* :mod:`.status` -- completion read from the logs (``suite status``);
* :mod:`.estimate` -- calls, tokens and $ before a run (``suite estimate``);
* :mod:`.budget` -- a suite-wide $ budget;
* :mod:`.batch_stop` -- batches left at the provider by Ctrl-C or SIGTERM: cancelled, or listed;
  batches that cannot finish, ended (with :mod:`.batch_faults`: one error per request, its cause;
  :mod:`.batch_record`: what is said and kept about them, the billed-but-unread file);
* :mod:`.cards` -- reproduction cards (``cards/*.yaml``): validation and the verdict;
* :mod:`.reproduce` -- running a card: estimate, run, per-sample values for the paper-vs-ours table;
* :mod:`.plan`, :mod:`.worker` -- many machines on Inspect's capture and selection protocol;
  :mod:`.lease` (one worker per selection), :mod:`.walltime` (the time figure plans are dealt by),
  :mod:`.hawk` (the plan as a Hawk eval set, ``hawk.yaml``), :mod:`.shards` (a cell split across workers in
  Inspect's shard layout, and its merge).

The ``suite`` and ``reproduce`` commands live in :mod:`conflict_eval.cli`.
Dependencies run one way: run -> (spec, estimate, budget, status) ->
registered; nothing here imports plugins or tasks (the task modules are
reached through the Inspect entry point, :mod:`conflict_eval._registry`).
"""

from conflict_eval.runs.registered import GENERIC_TASK, paper_tasks, registered_tasks, registry_yaml_tasks
from conflict_eval.runs.run import SuiteRun, build_cells, build_tasks, run_suite
from conflict_eval.runs.spec import ModelSpec, Suite, SuiteError, TaskSpec, load_suite, resolve_suite_path

__all__ = ["GENERIC_TASK", "ModelSpec", "Suite", "SuiteError", "SuiteRun", "TaskSpec", "build_cells", "build_tasks",
           "load_suite", "paper_tasks", "registered_tasks", "registry_yaml_tasks", "resolve_suite_path",
           "run_suite"]
