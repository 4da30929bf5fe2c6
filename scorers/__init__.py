"""Built-in metrics as Inspect scorers: every registered metric's scorer code lives here.

One folder per metric family (``text_match``, ``choice_accuracy``) or per paper
(``microact``, ``atomr``, ``ramdocs``, ``conflictqa``, ``conflict_exposure``,
``conflictscore``, ``user_needs``). Each ``scorers/<name>/__init__.py`` is a pluggy
plugin module listed in ``conflict_eval.components.manager.DEFAULT_PLUGINS``.
A plugin or task that needs a metric imports it from here; a scorer never imports
a plugin or a task (tests/test_layers.py). ``tests/test_metrics_in_scorers.py``
fails on a ``@scorer`` / ``@metric`` or a metric hook anywhere else.
"""
