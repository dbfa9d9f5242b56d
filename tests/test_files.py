"""The one JSON reader: every failure is one line naming the file, in the caller's error type."""

from __future__ import annotations

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
