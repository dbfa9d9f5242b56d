"""The worker threads of a run: each calls the gate for a pending trial and writes its file.

A gate error is that trial's ``infrastructure_failed`` record; a Python gate's reply that is
not text (``GateReturnError``) stops the run. On ``KeyboardInterrupt`` (or any error) the main
thread stops them: in-flight calls are abandoned at once, a trial being written is finished
and nothing else is written.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import Any

from analysis.corpus.inputs import PinnedScenario
from analysis.corpus.parsing import INFRASTRUCTURE_FAILED
from analysis.files.atomic_write import atomic_write_json
from analysis.runner.client import Cancelled
from analysis.runner.gates import Gate, GateOutcome
from analysis.runner.python_gate import GateReturnError
from analysis.runner.records import trial_record
from analysis.runner.runroot import RunRoot
from analysis.runner.secrets import redact_text


def _safe_run(gate: Gate, scenario: PinnedScenario, prompt: str) -> GateOutcome:
    try:
        return gate.run(scenario, prompt)
    except (Cancelled, GateReturnError):
        raise
    except Exception as exc:  # an unexpected gate error is an unscored trial, not a crash
        return GateOutcome(
            status=INFRASTRUCTURE_FAILED,
            verdict=None,
            request_body={},
            response_body_raw=None,
            error=redact_text(f"gate error: {exc!r}"),
        )


class TrialWorkers:
    """Threads that run ``gate`` for each pending ``(scenario, trial identity)`` and write
    its trial file into ``run_root``; :meth:`next_record` hands back each record written.
    ``ready`` holds outcomes already obtained, by ``(scenario_id, trial)``: those trials are
    written without calling the gate again."""

    def __init__(
        self,
        gate: Gate,
        run_root: RunRoot,
        system_prompt: str,
        pending: Sequence[tuple[PinnedScenario, dict[str, Any]]],
        concurrency: int,
        ready: dict[tuple[str, int], GateOutcome] | None = None,
    ) -> None:
        self.gate = gate
        self.ready = dict(ready or {})
        self.run_root = run_root
        self.system_prompt = system_prompt
        self.stop_event = threading.Event()
        self.write_lock = threading.Lock()
        self.work: queue.SimpleQueue[tuple[PinnedScenario, dict[str, Any]]] = queue.SimpleQueue()
        for item in pending:
            self.work.put(item)
        self.results: queue.SimpleQueue[dict[str, Any] | BaseException] = queue.SimpleQueue()
        # Daemon threads: an interrupted run returns without waiting for a stuck socket.
        self.threads = [
            threading.Thread(target=self.worker, daemon=True, name=f"steerbench-worker-{i}")
            for i in range(max(1, min(concurrency, len(pending))))
        ]

    def start(self) -> None:
        """Start every thread."""
        for thread in self.threads:
            thread.start()

    def worker(self) -> None:
        """One thread's loop: take pending trials until none is left or the run stops."""
        while not self.stop_event.is_set():
            try:
                scenario, trial_identity = self.work.get_nowait()
            except queue.Empty:
                return
            try:
                outcome = self.ready.pop((scenario.id, trial_identity["trial"]), None)
                if outcome is None:
                    outcome = _safe_run(self.gate, scenario, self.system_prompt)
                record = trial_record(trial_identity, outcome, scenario.required_commit_permission)
                path = self.run_root.trial_path(
                    self.gate.variant_key, scenario.id, trial_identity["trial"]
                )
                with self.write_lock:
                    if self.stop_event.is_set():
                        return
                    atomic_write_json(path, record)
            except Cancelled:
                return
            except BaseException as exc:  # handed to the main thread, which re-raises it
                self.results.put(exc)
                return
            self.results.put(record)

    def next_record(self) -> dict[str, Any]:
        """The next trial record written, waiting in short slices so Ctrl-C is seen at once;
        an error a worker met is raised here."""
        while True:
            try:
                item = self.results.get(timeout=0.2)
            except queue.Empty:
                continue
            if isinstance(item, BaseException):
                raise item
            return item

    def stop(self) -> None:
        """Abandon in-flight calls; a trial being written is finished, nothing is written
        after."""
        self.stop_event.set()
        self.gate.cancel()
        with self.write_lock:
            pass
