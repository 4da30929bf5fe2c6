"""Plugins that end the process or register nothing (issue 23, item 5)."""

import subprocess
import sys

import pytest

from conflict_eval.cli import main
from conflict_eval.components.manager import (
    ENV_VAR,
    PluginError,
    PluginWarning,
    add_plugin_source,
    clear_plugin_sources,
    components,
    register_plugin,
    unregister_plugin,
)
from conflict_eval import hookimpl


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    clear_plugin_sources()
    yield
    clear_plugin_sources()


def test_plugin_file_calling_sys_exit_on_import_is_reported(tmp_path):
    plugin = tmp_path / "quitter.py"
    plugin.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(PluginError) as err:
        add_plugin_source(str(plugin))
    message = str(err.value)
    assert f"--plugin: plugin file {str(plugin)!r} called sys.exit(3) while being imported" in message
    assert "must not end the process" in message
    assert "method" in components() and "end_to_end" in components()["method"]  # nothing else broke


def test_plugin_module_calling_sys_exit_on_import_is_reported(tmp_path, monkeypatch):
    (tmp_path / "quitter_module.py").write_text("raise SystemExit('bye')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"plugin module 'quitter_module' called sys.exit\('bye'\)"):
        add_plugin_source("quitter_module")


def test_hook_calling_sys_exit_is_reported():
    class Quitter:
        @hookimpl
        def conflict_eval_register_methods(self):
            sys.exit(0)

    with pytest.raises(PluginError) as err:
        register_plugin(Quitter(), "quitter")
    assert str(err.value) == ("plugin 'quitter' called sys.exit(0) in conflict_eval_register_methods; "
                              "a plugin must not end the process")
    unregister_plugin("quitter")


def test_cli_reports_a_plugin_that_exits(tmp_path, capsys):
    plugin = tmp_path / "quitter.py"
    plugin.write_text("import sys\nsys.exit(0)\n")
    assert main(["--plugin", str(plugin), "list"]) == 2
    assert "called sys.exit(0) while being imported" in capsys.readouterr().err


def test_plugin_module_without_hooks_warns():
    with pytest.warns(PluginWarning) as caught:
        add_plugin_source("os")
    [warning] = [w for w in caught if issubclass(w.category, PluginWarning)]
    assert str(warning.message).startswith("--plugin: 'os' implements none of the conflict_eval hooks (")
    assert "it registers nothing" in str(warning.message)


def test_cli_plugin_os_warns_on_stderr(tmp_path):
    result = subprocess.run([sys.executable, "-m", "conflict_eval.cli", "--plugin", "os", "list"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "PluginWarning: --plugin: 'os' implements none of the conflict_eval hooks" in result.stderr


def test_plugin_with_hooks_does_not_warn(tmp_path, recwarn):
    plugin = tmp_path / "fine.py"
    plugin.write_text("from conflict_eval import hookimpl\n\n@hookimpl\n"
                      "def conflict_eval_register_methods():\n    return {}\n")
    add_plugin_source(str(plugin))
    assert not [w for w in recwarn if issubclass(w.category, PluginWarning)]
