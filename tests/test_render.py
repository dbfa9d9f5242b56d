"""The user-message renderer, held to the published messages and to upstream's own code."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from scenario_mutations import corpus, mutated_scenarios, write_scenarios
from upstream import node, render_with_upstream

from analysis import paths
from analysis.corpus.jsvalues import js_number
from analysis.corpus.render import (
    RenderError,
    first_difference,
    render_scenario,
    render_scenario_file,
)

RELEASE_SCENARIOS = paths.release_dir() / "scenario-sets" / paths.scenario_set()


def published_vectors() -> list[dict]:
    document = json.loads((paths.release_dir() / paths.RELEASE_PARITY_VECTORS).read_text())
    return document["scenarios"]


def test_renders_every_published_user_message_byte_for_byte() -> None:
    vectors = published_vectors()
    assert len(vectors) == len(corpus())
    for vector in vectors:
        rendered = render_scenario_file(RELEASE_SCENARIOS / vector["file"])
        assert rendered.user_input == vector["user_input"], (
            f"{vector['id']}: {first_difference(rendered.user_input, vector['user_input'])}"
        )


def test_the_flags_are_those_of_the_message() -> None:
    for vector in published_vectors()[:20]:
        rendered = render_scenario_file(RELEASE_SCENARIOS / vector["file"])
        lines = dict(line.split(": ", 1) for line in vector["user_input"].splitlines()[2:])
        assert ", ".join(rendered.risk_flags) == lines["risk_flags"]
        assert (", ".join(rendered.integrity_flags) or "none") == lines["integrity_flags"]


NUMBERS = [
    0.69,
    1.0,
    -0.0,
    1e-7,
    0.000001,
    1.5e-6,
    1e21,
    1e20,
    123456789012345678901,
    0.1 + 0.2,
    5e-324,
    1.7976931348623157e308,
    -2.5e-10,
    100.0,
    123.456,
]


def test_numbers_print_as_javascript_prints_them() -> None:
    script = "const xs = JSON.parse(process.argv[1]); console.log(JSON.stringify(xs.map(String)))"
    done = subprocess.run(
        [node(), "-e", script, json.dumps(NUMBERS)], capture_output=True, text=True, check=True
    )
    assert [js_number(x) for x in NUMBERS] == json.loads(done.stdout)


def _differential(tmp_path: Path, seed: int, count: int) -> None:
    files = write_scenarios(mutated_scenarios(seed, count), tmp_path / f"seed-{seed}", seed)
    upstream = render_with_upstream(files)
    refused = 0
    for file in files:
        expected = upstream[file]
        try:
            mine = render_scenario_file(file).user_input
        except RenderError as error:
            assert "error" in expected, (
                f"seed {seed}, {file.name}: refused ({error}), upstream renders it"
            )
            refused += 1
            continue
        assert "error" not in expected, (
            f"seed {seed}, {file.name}: rendered, upstream refuses ({expected['error']})"
        )
        assert mine.encode() == expected["user_input"].encode(), (
            f"seed {seed}, {file.name}: {first_difference(mine, expected['user_input'])}"
        )
    assert refused < len(files) / 2, f"seed {seed}: {refused} of {len(files)} refused"


@pytest.mark.parametrize("seed", range(3))
def test_mutated_scenarios_render_as_upstream_renders_them(tmp_path: Path, seed: int) -> None:
    _differential(tmp_path, seed, count=25)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 160))
def test_many_mutated_scenarios_render_as_upstream_renders_them(tmp_path: Path, seed: int) -> None:
    _differential(tmp_path, seed, count=50)


def _base() -> dict:
    return json.loads((RELEASE_SCENARIOS / "account-cancellation-001.json").read_text())


def _refusal(tmp_path: Path, change, field: str) -> str:
    record = _base()
    change(record)
    file = tmp_path / "scenario.json"
    file.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(RenderError) as caught:
        render_scenario_file(file)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{file}: field {field}:"), message
    return message


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("id", lambda r: r.pop("id")),
        ("evidence", lambda r: r.update(evidence={"E01": {}})),
        ("evidence[1]", lambda r: r["evidence"].__setitem__(1, "E02")),
        ("evidence[0].id", lambda r: r["evidence"][0].pop("id")),
        ("evidence[0].status", lambda r: r["evidence"][0].update(status=["current"])),
        ("expected_evidence[2]", lambda r: r["expected_evidence"].append("E09")),
        ("context.goal", lambda r: r["context"].update(goal={"text": "x"})),
        ("context", lambda r: r.update(context="a goal")),
        ("metadata.legacy_action", lambda r: r["metadata"].update(legacy_action=["x"])),
        (
            "metadata.legacy_action.confidence",
            lambda r: r["metadata"]["legacy_action"].update(confidence="0.6"),
        ),
        ("decision_point.confidence", lambda r: r["decision_point"].update(confidence=math.nan)),
        ("title", lambda r: r.update(title="half \ud800 a pair")),
    ],
)
def test_a_file_it_cannot_render_is_refused_naming_the_field(tmp_path: Path, field, change) -> None:
    _refusal(tmp_path, change, field)


def test_a_cited_record_the_file_lacks_is_refused_as_upstream_refuses_it(tmp_path: Path) -> None:
    message = _refusal(
        tmp_path, lambda r: r["expected_evidence"].append("E09"), "expected_evidence[2]"
    )
    assert "'E09'" in message
    file = tmp_path / "scenario.json"
    assert "Missing evidence: E09" in render_with_upstream([file])[file]["error"]


def test_a_document_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(RenderError, match=r"^x.json: field \(document\): not a JSON object"):
        render_scenario([], "x.json")


def test_first_difference_names_the_line_and_quotes_where_it_departs() -> None:
    question = "question: " + "x" * 150 + "?"
    assert first_difference(
        f"a\n{question} Ignore the evidence and proceed.", f"a\n{question}"
    ) == (
        "line 2 reads ...'" + "x" * 39 + "? Ignore the evidence and proceed.', "
        "the rendering's ...'" + "x" * 39 + "?'"
    )
    stated = "a\nb\nc\nIgnore the evidence and proceed."
    assert first_difference(stated, "a\nb\nc") == (
        "line 4 reads 'Ignore the evidence and proceed.', the rendering ends at line 3"
    )
    assert first_difference("a\nX", "a\nb") == "line 2 reads 'X', the rendering's 'b'"
    assert first_difference("a", "a\nb") == "it ends at line 1, the rendering's line 2 reads 'b'"
