"""Looking up a built-in part imports only the plugin that registers it."""

from __future__ import annotations

import subprocess
import sys

import pytest

import conflict_eval
from conflict_eval import hookimpl
from conflict_eval.components.manager import PluginError, get_method, lookup


def test_composing_one_task_does_not_import_other_plugins():
    code = (
        "import sys\n"
        "from conflict_eval.components.compose import compose_task\n"
        "compose_task('end_to_end', 'demo')\n"
        "others = [m for m in ('conflict_eval.plugins.atomr.solver', "
        "'conflict_eval.plugins.microact.solver', 'conflict_eval.plugins.standard_rag.solver', "
        "'conflict_eval.scorers.conflictscore.scorer') if m in sys.modules]\n"
        "assert not others, others\n"
        "assert 'conflict_eval.plugins.end_to_end.solver' in sys.modules\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


class _Shadow:
    @hookimpl
    def conflict_eval_register_methods(self):
        return {"end_to_end": lambda: None}


class _Extra:
    @hookimpl
    def conflict_eval_register_methods(self):
        return {"my_method": lambda: "mine"}


def test_a_third_party_plugin_shadowing_a_builtin_is_still_an_error():
    with pytest.raises(PluginError, match="registered by two plugins"):
        conflict_eval.register_plugin(_Shadow(), "shadow")
    assert get_method("end_to_end").plugin == "end_to_end"


def test_third_party_names_are_found_and_the_cache_follows_registration():
    conflict_eval.register_plugin(_Extra(), "extra")
    try:
        assert lookup("method", "my_method").factory() == "mine"
        assert lookup("method", "end_to_end").plugin == "end_to_end"
    finally:
        conflict_eval.unregister_plugin("extra")
    with pytest.raises(conflict_eval.UnknownComponentError):
        lookup("method", "my_method")
