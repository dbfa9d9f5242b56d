"""The one JSON reader: every failure is one line naming the file, in the caller's error type."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.files.reading import InputFileError, json_read_once, read_json, read_text


def test_reads_json(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text('{"rows": [1, 2]}', encoding="utf-8")
    assert read_json(path) == {"rows": [1, 2]}


def test_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(InputFileError, match=r"absent\.json: missing$"):
        read_json(path)


def test_malformed_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "a": 1,\n  "b": }\n', encoding="utf-8")  # line 3, column 8
    with pytest.raises(InputFileError, match=r"bad\.json: malformed JSON at line 3, column 8"):
        read_json(path)


def test_bytes_that_are_not_utf8_are_named(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"a": "caf\xe9"}')  # 0xe9 at offset 10
    with pytest.raises(
        InputFileError, match=r"latin\.json: not UTF-8 text \(byte 0xe9 at offset 10\)"
    ):
        read_text(path)


def test_a_folder_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="unreadable"):
        read_json(tmp_path)


def test_the_caller_chooses_the_error_type(tmp_path: Path) -> None:
    class MyError(RuntimeError):
        pass

    path = tmp_path / "bad.json"
    path.write_text("[1,", encoding="utf-8")
    with pytest.raises(MyError, match=r"^.*bad\.json: malformed JSON at line 1"):
        read_json(path, error=MyError)


def test_inside_json_read_once_a_file_is_parsed_once_until_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "detail.json"
    path.write_text('{"scenarios": []}', encoding="utf-8")
    assert read_json(path) is not read_json(path)  # outside the block: parsed every time
    with json_read_once():
        first = read_json(path)
        assert read_json(path) is first and read_json(str(path)) is first
        path.write_text('{"scenarios": [1]}', encoding="utf-8")  # another size
        assert read_json(path) == {"scenarios": [1]}
        (tmp_path / "gone.json").write_text("{")
        with pytest.raises(InputFileError, match=r"gone\.json: malformed JSON"):
            read_json(tmp_path / "gone.json")
        (tmp_path / "gone.json").unlink()
        with pytest.raises(InputFileError, match=r"gone\.json: missing$"):
            read_json(tmp_path / "gone.json")
    assert read_json(path) is not read_json(path)


def test_inside_json_read_once_a_document_passes_a_schema_check_once(tmp_path: Path) -> None:
    from analysis.files.typed import Int, Obj, read_typed

    path, schema = tmp_path / "counts.json", Obj(required={"n": Int()})
    path.write_text('{"n": 1}', encoding="utf-8")
    seen = []
    original = schema.check
    object.__setattr__(schema, "check", lambda value: (seen.append(1), original(value)))
    read_typed(path, schema), read_typed(path, schema)
    assert len(seen) == 2  # outside the block: checked every time
    with json_read_once():
        read_typed(path, schema), read_typed(path, schema)
    assert len(seen) == 3
    path.write_text('{"n": "one"}', encoding="utf-8")
    with json_read_once():  # a failed check is not remembered: it fails again
        for _ in range(2):
            with pytest.raises(InputFileError, match=r"counts\.json: .*n.*expected an integer"):
                read_typed(path, schema)


def test_the_collector_is_paused_only_inside_the_block() -> None:
    import gc

    from analysis.files.reading import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # as it was
    finally:
        gc.enable()


# A large document inside json_read_once: parsed by msgspec, its keys checked by another
# process (the threshold lowered here so that small files take that path).


@pytest.fixture
def keys_aside(monkeypatch):
    from analysis.files import reading

    monkeypatch.setattr(reading, "KEYS_ASIDE_CHARS", 1)
    return reading


#: Documents the standard parser reads, with values msgspec must give alike (or leave to it).
READABLE = [
    '{"scenarios": [{"id": "a", "n": 3, "x": null, "ok": true, "f": 0.1}]}',
    "[12345678901234567890123, -9223372036854775809, 1e5, 1E+2, -0.0, 1.5e-320, 1e-400]",
    '["\\u0000", "\\/", "\\u2028", "a\\u0062", "\\ud83d\\ude00"]',
    "[1e400, NaN, -Infinity]",  # msgspec refuses these: the standard parser reads them
    '{"a": "\\ud800"}',  # a lone surrogate, likewise
    '  {"\\u0061": 1}  ',
]
#: Documents the standard parser refuses, each with where.
MALFORMED = ["[1,]", '{"a": 1,}', "[01]", "[1] x", '"a\x01b"', "\ufeff[1]", "[.5]", '{"a" 1}']


@pytest.mark.parametrize("text", READABLE)
def test_a_large_document_reads_as_the_standard_parser_reads_it(tmp_path, keys_aside, text):
    import json

    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    with json_read_once():
        document = read_json(path)
    expected = json.loads(text)
    assert repr(document) == repr(expected)  # NaN and -0.0 compare by their text


@pytest.mark.parametrize("text", MALFORMED)
def test_a_large_malformed_document_is_refused_as_a_small_one_is(tmp_path, keys_aside, text):
    path = tmp_path / "big.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFileError) as outside:
        read_json(path)
    with pytest.raises(InputFileError) as inside, json_read_once():
        read_json(path)
    assert str(inside.value) == str(outside.value)
    assert "malformed JSON at line" in str(inside.value)


def test_a_large_document_repeating_a_key_is_refused_as_the_block_ends(tmp_path, keys_aside):
    path = tmp_path / "big.json"
    path.write_text('{"scenarios": [{"id": "a", "n": 1, "n": 2}]}', encoding="utf-8")
    with pytest.raises(InputFileError) as outside:
        read_json(path)
    assert "key 'n' appears twice in one object" in str(outside.value)
    reached = []
    with pytest.raises(InputFileError) as inside, json_read_once():
        document = read_json(path)
        reached.append(document["scenarios"][0]["n"])  # msgspec keeps the last, meanwhile
    assert reached == [2]
    assert str(inside.value) == str(outside.value)


def test_a_repeated_key_is_refused_in_place_of_what_the_block_raised(tmp_path, keys_aside):
    class MyError(RuntimeError):
        pass

    path = tmp_path / "big.json"
    path.write_text('{"a": {"b": 1, "b": 1}}', encoding="utf-8")
    with pytest.raises(MyError, match=r"big\.json: key 'b' appears twice"), json_read_once():
        read_json(path, error=MyError)
        raise ValueError("what the repeated key led to")
    path.write_text('{"a": {"b": 1, "c": 1}}', encoding="utf-8")
    with pytest.raises(ValueError, match="what the block raised"), json_read_once():
        read_json(path, error=MyError)
        raise ValueError("what the block raised")  # no repeated key: this one stands


def test_of_several_large_documents_the_first_read_that_repeats_a_key_is_named(
    tmp_path, keys_aside
):
    names = ["first.json", "second.json", "third.json"]
    for name, body in zip(names, ['{"a": 1}', '{"x": 1, "x": 2}', '{"y": 1, "y": 2}'], strict=True):
        (tmp_path / name).write_text(body, encoding="utf-8")
    with pytest.raises(InputFileError, match=r"second\.json: key 'x'"), json_read_once():
        for name in names:
            read_json(tmp_path / name)


def test_a_key_check_process_that_cannot_say_leaves_the_check_to_the_reader(
    tmp_path, keys_aside, monkeypatch
):
    """The process fails (here: it exits at once, as one that found the file changed does):
    the block's end checks the file itself."""
    from analysis.files import repeated_keys

    path = tmp_path / "big.json"
    path.write_text('{"n": 1, "n": 2}', encoding="utf-8")
    stat = path.stat()
    changed = [str(path), str(stat.st_size + 1), str(stat.st_mtime_ns)]
    assert repeated_keys.main(changed) == repeated_keys.CHANGED
    monkeypatch.setattr(keys_aside.sys, "executable", "false")
    with pytest.raises(InputFileError, match="key 'n' appears twice"), json_read_once():
        read_json(path)


def test_a_verdict_file_repeating_a_key_is_refused_by_the_checked_load(tmp_path, keys_aside):
    """The trials loader and the cross-check read a verdict file inside json_read_once: a
    repeated key in a trial is refused, naming the file, as a small file's is."""
    from factories import scenarios_frame, trials_frame

    from analysis.exploring.export import write_scenarios_detail
    from analysis.scoring.crosscheck import load_checked_cells
    from analysis.trials.schema import VerdictError

    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "detail.json")
    text = path.read_text(encoding="utf-8")
    assert '"trial": 1,' in text
    path.write_text(text.replace('"trial": 1,', '"trial": 1, "trial": 1,', 1), encoding="utf-8")
    expected = f"{path}: key 'trial' appears twice in one object"
    for aside in (1, 10**12):  # the key checked by another process, and by the parser
        keys_aside.KEYS_ASIDE_CHARS = aside
        with pytest.raises(VerdictError, match=re.escape(expected)):
            load_checked_cells(scenarios_frame(), [path], tmp_path)
