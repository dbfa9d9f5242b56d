"""Citable numbers: slug names, one scheme, a unit and a description each, stand-ins apart."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from analysis import paths
from analysis.corpus.published import CLAIMS
from analysis.paper.claims import NEEDS_VERDICTS
from analysis.paper.provenance import (
    NumberBook,
    merge_fragments,
    number_name,
    numbers_table,
    ratio_number,
    slug,
)
from analysis.scoring.leaderboard import UNDETERMINED

#: The rule written out independently of analysis.paper.provenance.NAME.
SEGMENT = re.compile(r"^[a-z0-9_-]+$")


def test_every_name_is_a_slug_path(numbers):
    bad = [n for n in numbers if not all(SEGMENT.match(s) for s in n.split("."))]
    assert bad == []


def test_every_number_has_a_unit_and_a_description(numbers):
    missing = [n for n, e in numbers.items() if not e.get("unit") or not e.get("description")]
    assert missing == []


def test_stand_in_values_never_take_the_papers_names(numbers):
    # The public release has no per-scenario verdicts: every number that needs them must be
    # absent under the paper's name (stand-ins live under reference. / runs.).
    per_trial = {c.name for c in CLAIMS if c.per_trial}
    assert per_trial.isdisjoint(numbers)
    stand_ins = [n for n in numbers if n.split(".")[0] in ("reference", "runs")]
    assert stand_ins, "the reference policies' numbers are recorded under reference."
    for name in numbers:
        assert "reference-policy" not in name.split(".")[1:], name


def test_claims_ledger_lists_every_claim(built_paper):
    rows = (built_paper / "tables" / "claims.csv").read_text().splitlines()
    numbers = json.loads((built_paper / "numbers.json").read_text())["numbers"]
    misses = [n for n in numbers if n.startswith("table2.") and n.endswith(".weighted_miss")]
    assert len(misses) == len(
        json.loads((paths.results_dir() / "leaderboard.json").read_text())["rows"]
    )
    assert len(rows) == len(CLAIMS) + len(misses) + 1
    statuses = {line.rsplit(",", 2)[-2] for line in rows[1:]}
    assert statuses <= {"reproduced", "differs", NEEDS_VERDICTS}


def test_a_weighted_miss_the_leaderboard_leaves_open_is_said_to_need_per_trial_verdicts(
    built_paper,
):
    """The public release has no per-trial verdicts: where several counts print as a
    condition's weighted miss, Table 2, the number and the ledger list them all."""
    import csv

    with open(built_paper / "tables" / "table2-leaderboard.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    numbers = json.loads((built_paper / "numbers.json").read_text())["numbers"]
    for row in table:  # the value is the release's: 32/270 prints 11.8% (0.1185), not 11.9%
        entry = numbers[number_name("table2", row["condition"], "weighted_miss")]
        assert f"{entry['value']}%" == row["weighted miss"] == entry["published"]
    open_rows = [r for r in table if " or " in r["weighted miss counts"]]
    assert open_rows, "the release's leaderboard settles every weighted miss"
    with open(built_paper / "tables" / "claims.csv", newline="") as handle:
        ledger = {r["name"]: r for r in csv.DictReader(handle)}
    for row in open_rows:
        assert row["weighted miss counts from"] == UNDETERMINED
        name = number_name("table2", row["condition"], "weighted_miss")
        assert numbers[name]["fits"] == row["weighted miss counts"]
        assert f"{numbers[name]['value']}%" == row["weighted miss"]
        assert ledger[name]["status"] == NEEDS_VERDICTS
        assert ledger[name]["recomputed_counts"] == row["weighted miss counts"]


def test_slug_of_condition_labels():
    # Expected by hand: lowercase, every run of other characters becomes one hyphen.
    assert slug("gpt-5.4-mini (off)") == "gpt-5-4-mini-off"
    assert slug("gemini-3.1-flash-lite (minimal)") == "gemini-3-1-flash-lite-minimal"
    assert slug("public_harm_anchor") == "public_harm_anchor"


def test_names_of_other_sources_go_to_their_namespace():
    assert number_name("patterns", "incident_mirror", "modal_accuracy") == (
        "patterns.incident_mirror.modal_accuracy"
    )
    assert number_name("patterns", "x", source="reference-policy").startswith("reference.")
    assert number_name("stability", "m (off)", source="run") == "runs.stability.m-off"
    # A pool of one condition names it once; a named pool of runs goes under runs.
    assert number_name("severity", "a (off)", "w", source="run: a (off)") == (
        "runs.severity.a-off.w"
    )
    assert number_name("patterns", "x", source="my pool").startswith("runs.patterns.my-pool.")
    with pytest.raises(ValueError, match="unknown verdict source"):
        number_name("patterns", "x", source="pooled: x")


@pytest.mark.parametrize(
    "name", ["table2.gpt-5.4-mini (off).pass5", "Direction.over", "a..b", "a.b c", ""]
)
def test_a_bad_name_is_refused(name, tmp_path):
    book = NumberBook("00-test", [])
    with pytest.raises(ValueError, match="slug path"):
        book.ratio(name, 1, 2, description="d")


def test_a_number_without_description_or_unit_is_refused():
    book = NumberBook("00-test", [])
    with pytest.raises(ValueError, match="unit and a description"):
        book.ratio("a.b", 1, 2)
    with pytest.raises(ValueError, match="unit and a description"):
        book.value("a.c", 3, digits=None, description="three")


def test_a_rate_of_nothing_is_not_recorded():
    book = NumberBook("00-test", [])
    with pytest.raises(ValueError, match="denominator 0"):
        book.ratio("a.b", 0, 0, description="d")
    table = numbers_table(
        [
            ratio_number("a.filtered", 0, 0, "every cell provider-filtered"),
            ratio_number("a.scored", 3, 4, "three of four"),
        ]
    )
    assert book.record(table) == {"a.scored": Decimal("75.0")}
    assert list(book.numbers) == ["a.scored"]


def test_a_double_is_rounded_from_the_fraction_of_counts_it_was_made_as():
    """51/80 is 63.75% exactly but its double lies just below: recorded as a value (an
    estimate held as a float) it rounds as its counts do, 63.8, not 63.7."""
    from analysis.paper.provenance import points

    book = NumberBook("00-test", [])
    assert book.value("a.points", points(51 / 80), unit="%", description="d") == Decimal("63.8")
    assert book.value("a.share", 1 / 16, digits=3, unit="share", description="d") == Decimal(
        "0.063"
    )
    assert book.ratio("a.ratio", 51, 80, unit="%", description="d") == Decimal("63.8")
    assert book.value("a.third", 1 / 3, digits=3, unit="share", description="d") == Decimal("0.333")


def test_merge_refuses_a_bad_name_in_a_fragment(tmp_path):
    folder = tmp_path / "numbers"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps({"Bad Name": {"value": 1, "notebook": "x"}}))
    with pytest.raises(ValueError, match="slug path"):
        merge_fragments(tmp_path)


def test_separation_and_rank_numbers_say_what_they_are(numbers):
    """Table 2's separation counts come from a test (not from overlapping intervals), and no
    P(first) is recorded as a probability of exactly 0: one no resample reached is its bound
    1/B, flagged."""
    for name in (
        "leaderboard.separation.not_separated_from_leader",
        "leaderboard.separation.adjacent_not_separated",
    ):
        assert isinstance(numbers[name]["value"], int), name
        assert "test" in numbers[name]["description"]
    assert not [n for n in numbers if n.startswith("leaderboard.clustered.overlapping")]
    firsts = {n: e for n, e in numbers.items() if n.endswith(".p_first")}
    assert firsts and all(e["value"] > 0 for e in firsts.values())
    bounds = [e for e in firsts.values() if e["description"].startswith("upper bound")]
    assert bounds and all(e["reads"].startswith("< 1/") for e in bounds)


def test_a_file_digest_is_computed_again_when_the_file_changes(tmp_path) -> None:
    import hashlib
    import os

    from analysis.paper.provenance import input_digest

    path = tmp_path / "verdicts.json"
    path.write_text("{}", encoding="utf-8")
    assert input_digest(path) == hashlib.sha256(b"{}").hexdigest()
    path.write_text("[]", encoding="utf-8")  # same size: the modification time tells
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert input_digest(path) == hashlib.sha256(b"[]").hexdigest()
    replacement = tmp_path / "new.json"
    replacement.write_text("[1]", encoding="utf-8")
    os.replace(replacement, path)  # another file at the same path
    assert input_digest(path) == hashlib.sha256(b"[1]").hexdigest()


def test_a_digest_is_remembered_only_once_its_file_has_settled(tmp_path, monkeypatch) -> None:
    """A file changed in the last two seconds is hashed at every call: a rewrite of the same
    size within one tick of the file system's clock keeps its path, inode, size and times.
    A settled file is hashed once, until a write changes its status-change time, even when
    its modification time is set back."""
    import os
    import time
    from types import SimpleNamespace

    from analysis.files import digests

    hashed, clock = [], [time.time_ns()]
    monkeypatch.setattr(digests, "file_sha256", lambda p: hashed.append(p) or p.read_text())
    monkeypatch.setattr(digests, "time", SimpleNamespace(time_ns=lambda: clock[0]))
    path = tmp_path / "verdicts.json"
    path.write_text("{}", encoding="utf-8")
    stamp = path.stat().st_mtime_ns

    def rewrite(text: str) -> None:
        with path.open("r+", encoding="utf-8") as handle:  # in place: the same inode
            handle.write(text)
        os.utime(path, ns=(stamp, stamp))  # and the modification time set back

    assert digests.remembered_sha256(path) == "{}"
    rewrite("[]")
    assert digests.remembered_sha256(path) == "[]"  # within the tick: hashed again
    assert len(hashed) == 2
    clock[0] = max(path.stat().st_ctime_ns, stamp) + digests.SETTLED_NS
    assert [digests.remembered_sha256(path) for _ in range(3)] == ["[]"] * 3
    assert len(hashed) == 3  # settled: hashed once
    rewrite("{}")
    assert digests.remembered_sha256(path) == "{}"  # a write sets the status-change time
    assert len(hashed) == 4


def test_numbers_json_has_one_number_per_line_and_reads_back_equal() -> None:
    import json

    from analysis.paper.provenance import json_one_per_line

    numbers = {"b.x": {"value": 0.1, "inputs": {"z": "1", "a": "2"}}, "a": {"value": "é"}}
    document = {"release": "v1", "build": {"python": "3.11"}, "numbers": numbers}
    text = json_one_per_line(document, "numbers")
    assert json.loads(text) == document
    assert text.splitlines()[-4:-1] == [
        '    "b.x": {"value": 0.1, "inputs": {"z": "1", "a": "2"}},',
        '    "a": {"value": "\\u00e9"}',
        "  }",
    ]
    fragment = json_one_per_line(numbers, sort_keys=True)
    assert json.loads(fragment) == numbers
    assert fragment.splitlines()[1:3] == [
        '  "a": {"value": "\\u00e9"},',
        '  "b.x": {"inputs": {"a": "2", "z": "1"}, "value": 0.1}',
    ]


def _fragments(tmp_path, books):
    """Write each NumberBook's fragment under ``tmp_path``, as a notebook does."""
    for book in books:
        book.write(tmp_path)
    return tmp_path


def _book(notebook, values):
    book = NumberBook(notebook, [])
    for name, value in values.items():
        book.value(
            name,
            value,
            digits=3 if isinstance(value, float) else None,
            unit="u",
            description=f'd é \u2212 "{name}"\n',
            notes={"note": "tab\there"},
        )
    return book


def test_fragments_merge_by_their_lines_into_the_text_a_parse_gives(tmp_path) -> None:
    """Fragments as notebooks write them are merged line by line, without parsing each
    number: numbers.json's text and every value are what parsing them gives."""
    from analysis.paper.provenance import (
        EncodedNumbers,
        _parsed_fragments,
        json_one_per_line,
    )

    folder = _fragments(
        tmp_path,
        [
            _book("02-b", {"b.z": 0.1, "a.y-1": 7, "c_c": "a label"}),
            _book("01-a", {"b.a": 1 / 3, "zz": -0.0}),
            NumberBook("03-empty", []),
        ],
    )
    merged = merge_fragments(folder)
    parsed = _parsed_fragments(sorted((folder / "numbers").glob("*.json")))
    assert isinstance(merged, EncodedNumbers)
    assert list(merged) == list(parsed) == ["a.y-1", "b.a", "b.z", "c_c", "zz"]
    assert json.dumps(dict(merged.items())) == json.dumps(parsed)
    header = {"release": "v1", "build": {"python": "3.11"}, "left_out": []}
    assert json_one_per_line({**header, "numbers": merged}, "numbers") == json_one_per_line(
        {**header, "numbers": parsed}, "numbers"
    )
    assert merged["b.a"]["notebook"] == "01-a"


def test_merge_names_both_notebooks_of_a_number_recorded_twice(tmp_path) -> None:
    folder = _fragments(tmp_path, [_book("01-a", {"x.y": 1}), _book("02-b", {"x.y": 2})])
    with pytest.raises(ValueError, match=r"'x\.y' recorded by both 01-a and 02-b"):
        merge_fragments(folder)


def test_a_fragment_written_otherwise_is_parsed_whole(tmp_path) -> None:
    """A fragment not one number per line (indented JSON here) is read by parsing it; its
    numbers merge with the others all the same."""
    from analysis.paper.provenance import EncodedNumbers

    folder = _fragments(tmp_path, [_book("01-a", {"a": 1})])
    entry = {"value": 2, "unit": "u", "description": "d", "notebook": "02-b"}
    (folder / "numbers" / "02-b.json").write_text(json.dumps({"b": entry}, indent=2))
    merged = merge_fragments(folder)
    assert not isinstance(merged, EncodedNumbers)
    assert list(merged) == ["a", "b"] and merged["b"] == entry


def test_a_malformed_number_in_a_fragment_is_refused_naming_it(tmp_path) -> None:
    folder = tmp_path / "numbers"
    folder.mkdir()
    (folder / "01-a.json").write_text('{\n  "a.b": {"value": 1, "value": 2}\n}\n')
    merged = merge_fragments(tmp_path)
    with pytest.raises(ValueError, match=r"01-a\.json: number 'a\.b': key 'value' appears twice"):
        merged["a.b"]
