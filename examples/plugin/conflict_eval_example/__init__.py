"""A worked third-party conflict-eval plugin (``examples/plugin/``, walked through in docs/plugins.md).

Everything it adds goes through the plugin hooks, as a built-in's would:

* dataset ``capital_swaps`` (:mod:`.dataset`): multiple-choice questions with a
  passage that supports or contradicts the gold answer; it declares its metric;
* method ``verdict_first`` (:mod:`.solver`, prompt in :mod:`.prompts`): one call
  asking for a ``VERDICT:`` line, read by its own reply reader (:mod:`.parse`);
* metric ``evidence_following`` (:mod:`.metric`): the share of readable replies
  that chose the option the given passage supports, parse failures counted;
* its reply reader, declared for conflict-eval's checks (:mod:`.readers`): the
  fuzz and linear-time tests and the read-as-meant benchmark run it, on the
  labelled replies of ``data/reply_shapes.jsonl``.

Hook functions only; each imports its implementation when called, so listing
plugins imports nothing heavy.
"""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import capital_swaps

    return {"capital_swaps": capital_swaps}


@hookimpl
def conflict_eval_register_methods():
    from .solver import verdict_first

    return {"verdict_first": verdict_first}


@hookimpl
def conflict_eval_register_metrics():
    from .metric import evidence_following

    return {"evidence_following": evidence_following}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
