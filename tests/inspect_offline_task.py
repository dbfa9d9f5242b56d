"""``steerbench_work`` against Inspect's ``mockllm`` with the scripted replies, for offline
command-line runs: ``inspect eval tests/inspect_offline_task.py --epochs 2``."""

from __future__ import annotations

import json

from inspect_ai import Task, task, task_with
from inspect_ai.model import get_model
from inspect_script import Script

from analysis import paths
from analysis.runner.inspect_task import TASK_NAME, steerbench_work


@task
def steerbench_work_scripted(epochs: int = 5) -> Task:
    """The task, named as itself, with ``mockllm`` answering from the script."""
    parity = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))
    script = Script([row["id"] for row in parity["scenarios"]])
    model = get_model("mockllm/model", custom_outputs=script.model_output)
    return task_with(steerbench_work(epochs=epochs), name=TASK_NAME, model=model)
