"""The typed reading layer: each shape refuses what it should with one named line, values are
quoted with bounds, and OS errors name their first file."""

from __future__ import annotations

import json
import shutil

import pytest

from analysis.files.reading import InputFileError, read_json
from analysis.files.schemas import PARITY_VECTORS, RELEASE_MANIFEST, RUN_PLAN, SCENARIO
from analysis.files.typed import (
    LINE_LIMIT,
    LINES_LIMIT,
    Bool,
    Int,
    List,
    Map,
    Name,
    Nullable,
    Num,
    Obj,
    Str,
    bounded,
    check,
    cut,
    error_text,
    inside,
    is_relative_inside,
    read_typed,
    shown,
    within,
)


def refusal(document, schema) -> str:
    with pytest.raises(InputFileError) as caught:
        check(document, schema, "f.json", error=InputFileError)
    return str(caught.value)


@pytest.mark.parametrize(
    ("schema", "value", "said"),
    [
        (Str(), 5, "$: expected a string, found an integer 5"),
        (Str(nonempty=True), "", "$: expected a non-empty string, found a string ''"),
        (Int(), "five", "$: expected an integer, found a string 'five'"),
        (Int(), True, "$: expected an integer, found a boolean True"),
        (Int(), 5.0, "$: expected an integer, found a number 5.0"),
        (Int(minimum=1), 0, "$: expected an integer >= 1, found an integer 0"),
        (Num(), float("nan"), "$: expected a number, found a number nan"),
        (Num(), "1", "$: expected a number, found a string '1'"),
        (Bool(), 1, "$: expected a boolean, found an integer 1"),
        (List(Str()), {"a": 1}, "$: expected a list, found an object of 1"),
        (Map(Int()), [1], "$: expected an object, found a list of 1"),
        (Nullable(Str()), 3, "$: expected a string or null, found an integer 3"),
        (Str(), None, "$: expected a string, found null"),
        (Name(), "../x", "$: expected a plain name"),
        (Name(), "..", "$: expected a plain name"),
        (Name(), "a\\b", "$: expected a plain name"),
        (Name(), "", "$: expected a plain name"),
    ],
)
def test_each_shape_refuses_another_type_by_name(schema, value, said):
    message = refusal(value, schema)
    assert message.startswith("f.json: ") and said in message


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (Str(), ""),
        (Int(minimum=1), 1),
        (Num(), 0.5),
        (Num(), 3),
        (Bool(), False),
        (Nullable(Int()), None),
        (Name(), "bulk-email-001"),
        (Name(), "a.b"),
        (List(Int()), []),
        (Map(Str()), {}),
        (Obj(required={"a": Int()}), {"a": 1, "other": [None]}),
        (Obj(optional={"a": Int()}), {}),
    ],
)
def test_each_shape_accepts_its_type(schema, value):
    assert check(value, schema, "f.json", error=InputFileError) is value


def test_the_json_path_leads_to_the_value():
    schema = Obj(required={"rows": List(Obj(required={"stats": Map(Int())}))})
    document = {"rows": [{"stats": {"n": 1}}, {"stats": {"n": 1, "odd key": "x"}}]}
    message = refusal(document, schema)
    assert message == (
        "f.json: $.rows[1].stats['odd key']: expected an integer, found a string 'x'"
    )


def test_a_missing_key_is_named_with_its_type():
    message = refusal({"id": "x"}, Obj(required={"id": Str(), "title": Str()}))
    assert message == "f.json: $: missing key 'title' (a string)"


def test_a_record_listed_twice_is_named_with_both_places():
    vectors = [{"id": "a", "user_input": ""}, {"id": "b", "user_input": ""}]
    document = {"scenarios": [*vectors, {"id": "a", "user_input": "again"}]}
    message = refusal(document, PARITY_VECTORS)
    assert message == "f.json: $.scenarios[2].id: 'a' listed twice (also at $.scenarios[0])"
    assert "$[2]: 'x' listed twice (also at $[0])" in refusal(
        ["x", "y", "x"], List(Str(), unique="")
    )
    rows = [{"m": "a", "r": "off"}, {"m": "a", "r": "high"}, {"m": "a", "r": "off"}]
    pair = List(Obj(), unique=("m", "r"))
    assert refusal(rows, pair) == "f.json: $[2]: m 'a', r 'off' listed twice (also at $[0])"
    assert check(rows[:2], pair, "f.json", error=InputFileError) == rows[:2]


def test_a_key_that_is_no_plain_name_is_refused():
    message = refusal({"scenario_hashes": {"a": "ab", "../../x": "ab"}}, RELEASE_MANIFEST)
    assert "$.scenario_hashes['../../x']: key expected a plain name" in message


def test_a_json_object_naming_a_key_twice_is_refused(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text('{"a": {"id": 1, "id": 2}}')
    with pytest.raises(InputFileError, match=r"doc.json: key 'id' appears twice in one object"):
        read_json(path)
    path.write_text('{"a": 1, "b": [{"a": 1}], "c": {"a": 2}}')
    assert read_json(path) == {"a": 1, "b": [{"a": 1}], "c": {"a": 2}}


def test_read_typed_reads_and_checks(tmp_path):
    path = tmp_path / "RUN_PLAN.json"
    path.write_text(json.dumps({"planned_variants": ["mini"], "n_trials_per_cell": 5}))
    assert read_typed(path, RUN_PLAN)["planned_variants"] == ["mini"]
    path.write_text("[]")
    with pytest.raises(
        InputFileError, match=r"RUN_PLAN.json: \$: expected an object, found a list"
    ):
        read_typed(path, RUN_PLAN)


def test_a_scenario_schema_reads_what_the_release_writes():
    from analysis import paths

    folder = paths.scenarios_dir()
    files = [f for f in sorted(folder.glob("*.json")) if not f.name.startswith("_")]
    files = [f for f in files if f.name != "parity-vectors.json"]
    assert len(files) > 100
    for file in files:
        read_typed(file, SCENARIO)


def test_long_values_are_cut_with_their_length():
    value = "x" * 1_000_000
    assert len(shown(value)) < 120 and "(1000002 characters)" not in shown(value)
    assert shown(value).endswith("… (1000000 characters)")
    assert cut(value).endswith("… (1000000 characters)") and len(cut(value)) < 120
    assert shown("short") == "'short'" and cut("short") == "short"
    message = refusal({"id": value}, Obj(required={"id": Int()}))
    assert len(message) < 200 and "1000000 characters" in message


def test_bounded_cuts_each_line_and_the_number_of_lines():
    text = "\n".join(["y" * 5000, *[f"line {n}" for n in range(100)]])
    lines = bounded(text).splitlines()
    assert len(lines) == LINES_LIMIT and max(map(len, lines)) <= LINE_LIMIT
    assert lines[0].endswith("(5000 characters)")
    assert lines[-1] == f"  ... and {101 - LINES_LIMIT + 1} more lines"
    assert bounded("one line") == "one line"


def test_a_copy_failing_on_many_files_names_the_first_and_counts_the_others():
    problems = [
        (f"/src/f{n}", f"/dst/f{n}", "[Errno 28] No space left on device") for n in range(400)
    ]
    text = error_text(shutil.Error(problems))
    assert text == "/src/f0: [Errno 28] No space left on device (and 399 other files)"
    single = error_text(shutil.Error(problems[:1]))
    assert single == "/src/f0: [Errno 28] No space left on device"
    assert error_text(OSError(28, "No space left on device", "/data/x")) == (
        "/data/x: No space left on device"
    )
    assert error_text(ValueError("a\nb")) == "a\nb"
    assert error_text(KeyError()) == "KeyError"


def test_names_used_as_paths_stay_inside_their_folder(tmp_path):
    assert is_relative_inside("tables/x.csv") and is_relative_inside("a.json")
    for name in ("../x", "a/../../x", "/etc/passwd", "a\\..\\b", "", "a\x00b"):
        assert not is_relative_inside(name), name
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path / "outside")
    assert within(tmp_path / "root", "x/y") and not within(tmp_path / "root", "link/y")
    root = tmp_path / "root"
    assert inside(root, "v", "plan", "variant", error=InputFileError) == root / "v"
    with pytest.raises(InputFileError, match=r"plan: variant '\.\./x' is not a plain name"):
        inside(root, "../x", "plan", "variant", error=InputFileError)
    with pytest.raises(InputFileError, match=r"plan: variant 'link' leads outside"):
        inside(root, "link", "plan", "variant", error=InputFileError)


def test_all_fit_says_what_checking_each_value_says() -> None:
    from analysis.files.typed import Any_, Int, Mismatch, Nullable, Str

    def each_fits(shape, values) -> bool:
        try:
            for value in values:
                shape.check(value)
        except Mismatch:
            return False
        return True

    shapes = [Int(), Int(minimum=1), Nullable(Int(minimum=1)), Str(), Str(nonempty=True)]
    shapes += [Nullable(Str()), Any_()]
    columns = [[], [1, 2], [0, 3], [1, True], [1, 1.0], [1, None], ["a", ""], ["a", None]]
    columns += [["a", 1], [None], [[1]], [{"a": 1}], [2**70, 5]]
    for shape in shapes:
        for column in columns:
            assert shape.all_fit(column) == each_fits(shape, column), (shape, column)
