"""``steerbench-run``: run a gate into a run root, or export run roots as a tidy CSV.

steerbench-run --gate always-hold --out runs/hold
steerbench-run --gate endpoint --base-url http://127.0.0.1:8000/v1 --model NAME --out ROOT
steerbench-run --gate mygate.py:decide --out ROOT     # a Python function (MODULE:FUNCTION)
steerbench-run export-tidy ROOT [ROOT ...] OUT.csv

Exit status: 0 done, 1 some trials failed (re-run to retry them), 2 refused (one
``error:`` line), 130 interrupted (every file on disk is complete; re-run to resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from analysis import paths
from analysis.corpus.inputs import PinnedInputError, load_pinned_inputs
from analysis.runner.client import EndpointSettings
from analysis.runner.gate_run import RunInterrupted, run_gate
from analysis.runner.gates import REFERENCE_POLICIES, EndpointGate, Gate, ModelSettings
from analysis.runner.python_gate import (
    GATE_SPEC_RULE,
    GateReturnError,
    GateSpecError,
    PythonGate,
)
from analysis.runner.runroot import RunRootError
from analysis.runner.secrets import redact_url
from analysis.runner.shards import SHARD_RULE, parse_shard
from analysis.runner.tidy import TidyExportError, export_tidy

INTERRUPTED = 130


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="steerbench-run",
        description="Run a gate over the pinned scenarios into a run root (resumable). "
        "Use `steerbench-run export-tidy ROOT... OUT.csv` for the compact export.",
    )
    p.add_argument(
        "--gate",
        required=True,
        metavar="GATE",
        help=f"a reference policy ({', '.join(REFERENCE_POLICIES)}); endpoint: a model behind "
        "an OpenAI-compatible URL; or MODULE:FUNCTION: a Python function (system, user, "
        "scenario_id) -> str, MODULE importable from the current folder or a path to a .py file",
    )
    p.add_argument("--out", required=True, type=Path, help="run root to write or resume")
    p.add_argument("--trials", type=int, default=5, help="trials per cell (default 5)")
    p.add_argument(
        "--run-id",
        help="run id (default: the root's recorded one, else derived from the model, settings, "
        "prompt and trials, so shards of one run share it)",
    )
    p.add_argument("--shard", type=parse_shard, help=f"i/n: {SHARD_RULE}".replace("%", "%%"))
    p.add_argument("--scenarios", help="comma-separated scenario ids (default: all)")
    p.add_argument(
        "--label",
        help="variant label (default: the model name; a Python gate's: the function's name)",
    )
    p.add_argument("--base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", help="model name sent in the request body")
    p.add_argument("--api-key-env", help="name of the environment variable holding the key")
    p.add_argument("--temperature", type=float, help="sampling temperature sent (default: none)")
    p.add_argument("--max-tokens", type=int, help="max_tokens sent (default: none)")
    p.add_argument("--reasoning-effort", help="sent as reasoning_effort when given")
    p.add_argument("--reasoning-label", help="reasoning label for exports (default: effort/off)")
    p.add_argument("--concurrency", type=int, default=4, help="parallel requests (default 4)")
    p.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds for a whole request, first byte sent to last byte read (default 120)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=4,
        help="retries on 429/5xx, deadlines, network errors and malformed 200 replies",
    )
    p.add_argument(
        "--backoff",
        type=float,
        default=1.5,
        help="first retry delay in seconds, doubled per retry, jittered; Retry-After wins",
    )
    p.add_argument(
        "--parity-vectors",
        type=Path,
        help="a parity file to check against the messages rendered from the scenario files "
        "(default: the imported one, if any; none is needed)",
    )
    p.add_argument(
        "--release-manifest",
        type=Path,
        default=paths.release_manifest(),
        help="the release's release-manifest.json (default: the imported one)",
    )
    p.add_argument(
        "--scenarios-dir",
        type=Path,
        default=paths.scenarios_dir(),
        help="the scenario files the release manifest pins; each user message is rendered "
        "from its file",
    )
    p.add_argument(
        "--prompt",
        type=Path,
        help="the system prompt file the release manifest pins (default: the release's "
        "sample run PROMPT.txt, else the parity file's system_prompt)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (drawn only on a terminal)",
    )
    return p


def _export_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="steerbench-run export-tidy",
        description="Write run roots' trials (merging shard roots) as a tidy CSV.",
    )
    p.add_argument("roots", nargs="+", type=Path, help="run roots (shards of a run merge)")
    p.add_argument("out", type=Path, help="the tidy CSV to write")
    return p


def build_gate(args: argparse.Namespace) -> tuple[Gate, dict]:
    """The gate the arguments name, and the run settings to record in the plan."""
    if args.gate in REFERENCE_POLICIES:
        return REFERENCE_POLICIES[args.gate](), {}
    if args.gate != "endpoint":
        if ":" not in args.gate:
            raise GateSpecError(
                f"--gate {args.gate}: not a reference policy ({', '.join(REFERENCE_POLICIES)}), "
                f"endpoint, or {GATE_SPEC_RULE}"
            )
        gate = PythonGate(args.gate, label=args.label, reasoning_label=args.reasoning_label)
        return gate, {"gate": args.gate, "concurrency": args.concurrency}
    if not args.base_url or not args.model:
        raise RuntimeError("--gate endpoint needs --base-url and --model")
    model = ModelSettings(
        model=args.model,
        label=args.label,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        reasoning_effort=args.reasoning_effort,
        reasoning_label=args.reasoning_label,
    )
    endpoint = EndpointSettings(
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout=args.timeout,
        retries=args.retries,
        backoff_base=args.backoff,
    )
    settings = {
        "base_url": redact_url(endpoint.url),
        "api_key_env": args.api_key_env,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "concurrency": args.concurrency,
    }
    return EndpointGate(model, endpoint, concurrency=args.concurrency), settings


def _refuse(message: object) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``steerbench-run``.

    Run as the program (``argv`` None), an interrupted run leaves at once with status 130:
    every file is complete by then, and the interpreter's teardown (with requests still
    blocked in sockets) would only delay the exit.
    """
    as_program = argv is None
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("steerbench-run: interrupted before any trial ran", file=sys.stderr)
        code = INTERRUPTED
    if code == INTERRUPTED and as_program:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)
    return code


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "export-tidy":
        args = _export_parser().parse_args(argv[1:])
        try:
            n = export_tidy(args.roots, args.out)
        except TidyExportError as exc:
            return _refuse(exc)
        print(f"wrote {n} rows to {args.out}")
        return 0
    args = _run_parser().parse_args(argv)
    for option, value in (("--trials", args.trials), ("--concurrency", args.concurrency)):
        if value < 1:
            return _refuse(f"{option} {value}: at least 1")
    try:
        inputs = load_pinned_inputs(
            args.parity_vectors, args.release_manifest, args.scenarios_dir, args.prompt
        )
    except PinnedInputError as exc:
        return _refuse(exc)
    try:
        gate, settings = build_gate(args)
    except (RuntimeError, ValueError) as exc:
        return _refuse(exc)
    ids = [s for s in (args.scenarios or "").split(",") if s]
    try:
        summary = run_gate(
            gate,
            args.out,
            inputs=inputs,
            trials=args.trials,
            run_id=args.run_id,
            scenario_ids=ids,
            shard=args.shard,
            concurrency=args.concurrency,
            settings=settings,
            scenarios_dir=args.scenarios_dir,
            progress=not args.no_progress,
        )
    except (PinnedInputError, RunRootError, GateReturnError) as exc:
        return _refuse(exc)
    except RunInterrupted as stopped:
        s = stopped.summary
        print(
            f"steerbench-run: interrupted; {s.n_trials_reused + s.n_calls_made} of {s.n_trials} "
            f"trials are on disk in {args.out}; run the same command to resume",
            file=sys.stderr,
        )
        return INTERRUPTED
    finally:
        gate.close()
    print(
        f"{summary.variant_key}: {summary.n_trials} trials over {summary.n_scenarios} scenarios "
        f"({summary.n_calls_made} run, {summary.n_trials_reused} reused, "
        f"{summary.n_errors} errors, {summary.n_parse_failed} unparseable) -> {args.out}"
    )
    return 1 if summary.n_errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
