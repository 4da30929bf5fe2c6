"""Map the top-level folders into the ``conflict_eval`` package.

The repository keeps ``plugins/``, ``tasks/`` and ``scorers/`` at the top level
for readability; installed, they live under ``conflict_eval.*`` so that no
generic top-level module names (``plugins``, ``tasks``) land in site-packages.
Everything else is configured in pyproject.toml.
"""

import os

from setuptools import find_packages, setup

FOLDERS = {
    "conflict_eval": "conflict_eval",
    "conflict_eval.plugins": "plugins",
    "conflict_eval.tasks": "tasks",
    "conflict_eval.scorers": "scorers",
    "conflict_eval.suites": "suites",
}

packages, package_dir = [], {}
for package, folder in FOLDERS.items():
    package_dir[package] = folder
    packages.append(package)
    packages += [f"{package}.{sub}" for sub in find_packages(folder)]

# Keep the build metadata out of the source root: an egg-info there shadows the
# installed distribution (and its entry points) whenever the repo is on sys.path.
os.makedirs("build", exist_ok=True)

setup(
    options={"egg_info": {"egg_base": "build"}},
    packages=packages,
    package_dir=package_dir,
    package_data={
        "conflict_eval": ["registry.yaml", "data/*.jsonl"],
        "conflict_eval.runs": ["cards/*.yaml"],  # reproduction cards
        "": ["*.md", "*.json", "*.jsonl", "*.yaml"],
    },
    include_package_data=True,
)
