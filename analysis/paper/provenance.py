"""``paper/numbers.json``: every number the paper cites, with its inputs' sha256.

Each notebook records its numbers in a :class:`NumberBook` and writes one fragment; the
build merges the fragments into ``numbers.json`` and refuses a name recorded twice.

Names are stable slug paths: lowercase ``[a-z0-9_-]`` segments joined by dots, with model
and condition names slugged by :func:`slug` (``gpt-5.4-mini (off)`` -> ``gpt-5-4-mini-off``).
Values computed on anything but the paper's own verdicts live in their own namespace
(:func:`number_name`): ``reference.`` for the reference policies, ``runs.`` for the sample
cell and local runs. Every number carries a unit and a description.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import paths
from analysis.corpus.formatting import exact_fraction, rounded
from analysis.files.digests import remembered_sha256
from analysis.files.reading import DuplicateKeyError, parse_json, read_json, refusal
from analysis.paper.latex import latex_escape

FRAGMENTS = "numbers"

#: A citable name: lowercase slug segments joined by dots.
NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
#: Namespaces of numbers computed on other verdicts than the paper's, by trials ``source``.
SOURCE_NAMESPACES = {"published": None, "reference-policy": "reference", "run": "runs"}


def slug(text: str) -> str:
    """A name segment: lowercase, every run of other characters than ``[a-z0-9_]`` -> ``-``.

    >>> slug("gpt-5.4-mini (off)")
    'gpt-5-4-mini-off'
    """
    return _slug(str(text))


@functools.lru_cache(maxsize=1 << 16)  # each condition's name is slugged for every number
def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")


def require_distinct_slugs(names: Iterable[str], what: str, origin: str) -> None:
    """Refuse two different ``names`` (of ``what``: conditions, models) that :func:`slug`
    makes one name segment, so that no two of them would share a number's name; the error
    names ``origin`` (the file or verdicts they come from) and both names.

    >>> try:
    ...     require_distinct_slugs(["acme-1.5 (off)", "acme-1-5 (off)"], "conditions", "x.json")
    ... except ValueError as error:
    ...     print(str(error).partition(" in ")[0])
    x.json: conditions 'acme-1-5 (off)' and 'acme-1.5 (off)' are both named 'acme-1-5-off'
    """
    seen: dict[str, str] = {}
    for name in sorted({str(n) for n in names}):
        key = slug(name)
        if key in seen:
            raise ValueError(
                f"{origin}: {what} {seen[key]!r} and {name!r} are both named {key!r} in "
                "numbers.json; rename one of them"
            )
        seen[key] = name


def number_name(section: str, *parts: str, source: str = "published") -> str:
    """``section.part...`` for the paper's verdicts, under ``reference.`` or ``runs.`` otherwise.

    ``source`` is a trials source (``published``, ``reference-policy``, ``run``) or a pool of
    ``analysis.scoring.breakdowns.pool_cells`` (``"reference-policy: surface-flag (policy)"``): a
    pool of one condition names that condition once, after the section. Each part is slugged as one
    segment (``"gpt-5.4-nano"`` -> ``gpt-5-4-nano``).
    """
    origin, _, condition = str(source).partition(": ")
    if origin in SOURCE_NAMESPACES:
        namespace = SOURCE_NAMESPACES[origin]
    elif condition or not origin:
        known = ", ".join(SOURCE_NAMESPACES)
        raise ValueError(f"unknown verdict source {source!r}; known: {known}")
    else:  # a named pool of conditions from local runs and reference policies
        namespace, condition = "runs", origin
    pooled = [slug(condition)] if condition else []
    rest = [slug(p) for p in parts if not (pooled and slug(p) == pooled[0])]
    segments = [slug(section), *pooled, *rest]
    return ".".join([namespace, *segments] if namespace else segments)


def check_name(name: str) -> str:
    """``name`` itself when it is a citable slug path; otherwise a ValueError naming it."""
    if not NAME.fullmatch(name):
        raise ValueError(
            f"number name {name!r} is not a slug path (lowercase [a-z0-9_-] segments joined "
            "by dots; slug model names with analysis.paper.provenance.slug)"
        )
    return name


def input_digest(path: Path) -> str:
    """sha256 of a file, or of a folder's sorted ``<sha256>  <name>`` listing."""
    if path.is_dir():
        lines = "".join(
            f"{input_digest(p)}  {p.relative_to(path)}\n"
            for p in sorted(path.rglob("*"))
            if p.is_file()
        )
        return hashlib.sha256(lines.encode()).hexdigest()
    return remembered_sha256(path)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.PROJECT_ROOT))
    except ValueError:
        return str(path)


@dataclass
class NumberBook:
    """The numbers one notebook cites, and the input files they were computed from."""

    notebook: str
    inputs: list[Path]
    numbers: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._digests = {_display(p): input_digest(Path(p)) for p in self.inputs}

    def ratio(
        self,
        name: str,
        k: int,
        n: int,
        *,
        scale: int = 100,
        digits: int = 1,
        unit: str = "%",
        description: str = "",
        notes: Mapping[str, str] | None = None,
        printed: Fraction | None = None,
    ) -> Decimal:
        """Record ``scale * k / n`` rounded once, with its counts; return the rounded value.
        ``ValueError`` when ``n`` is 0 (the rate is undefined). ``notes`` (text fields such
        as ``published``, the release's printed value) are stored with it. ``printed``: the
        value as the release's own rule prints it from these counts (a weighted miss rounds
        to 4 decimals first), recorded instead."""
        k, n = int(k), int(n)
        if n == 0:
            raise ValueError(f"{self.notebook}: number {name!r} has denominator 0 (undefined)")
        exact = Fraction(scale * k, n) if printed is None else Fraction(printed)
        value = rounded(exact, digits)
        return self._add(
            name, value, unit, description, numerator=k, denominator=n, **dict(notes or {})
        )

    def value(
        self,
        name: str,
        exact: Fraction | float | int | str,
        *,
        digits: int | None = 1,
        unit: str = "",
        description: str = "",
        notes: Mapping[str, str] | None = None,
    ) -> Decimal | int | str:
        """Record a number (rounded once to ``digits``; a double from the fraction of counts it
        was computed as, :func:`analysis.corpus.formatting.exact_fraction`), a count
        (``digits=None``) or a label."""
        if isinstance(exact, str) or digits is None:
            shown = exact if isinstance(exact, str) else int(exact)
        elif isinstance(exact, float):  # a double: rounded from the fraction it was made as
            shown = rounded(exact_fraction(exact), digits)
        else:
            shown = rounded(Fraction(exact), digits)  # type: ignore[arg-type]
        return self._add(name, shown, unit, description, **dict(notes or {}))

    def _add(self, name: str, value, unit: str, description: str, **counts) -> object:
        try:
            check_name(name)
        except ValueError as error:
            raise ValueError(f"{self.notebook}: {error}") from None
        if name in self.numbers:
            raise ValueError(f"{self.notebook}: number {name!r} recorded twice")
        if not unit or not description:
            raise ValueError(f"{self.notebook}: number {name!r} needs a unit and a description")
        shown = float(value) if isinstance(value, Decimal) else value
        self.numbers[name] = {
            "value": shown,
            "unit": unit,
            **counts,
            "description": description,
            "notebook": self.notebook,
            "inputs": self._digests,
        }
        return value

    def record(self, table: pd.DataFrame | Iterable[Mapping[str, Any]]) -> dict[str, object]:
        """Record every row of a numbers table (:func:`numbers_table`, or its rows): a ratio
        where the row has a ``numerator``, else a value; returns each name's rounded value.
        A ratio of denominator 0 (a condition whose every cell was provider-filtered, say) is
        undefined and left out, as the release prints no rate with nothing to count."""
        rows = _records(table) if isinstance(table, pd.DataFrame) else list(table)
        recorded: dict[str, object] = {}
        for row in rows:
            if _present(row.get("numerator")):
                if int(row["denominator"]) == 0:
                    continue
                recorded[row["name"]] = self.ratio(
                    row["name"],
                    row["numerator"],
                    row["denominator"],
                    scale=row["scale"] if _present(row.get("scale")) else 100,
                    digits=row["digits"],
                    unit=row["unit"],
                    description=row["description"],
                    notes=row.get("notes") if _present(row.get("notes")) else None,
                    printed=row["value"] if _present(row.get("value")) else None,
                )
            else:
                recorded[row["name"]] = self.value(
                    row["name"],
                    row["value"],
                    digits=row["digits"] if _present(row["digits"]) else None,
                    unit=row["unit"],
                    description=row["description"],
                    notes=row.get("notes") if _present(row.get("notes")) else None,
                )
        return recorded

    def write(self, output_dir: Path) -> Path:
        """Write this notebook's fragment under ``output_dir/numbers/``."""
        folder = Path(output_dir) / FRAGMENTS
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{self.notebook}.json"
        target.write_text(json_one_per_line(self.numbers, sort_keys=True), "utf-8")
        return target


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """``table.to_dict("records")``; a table of Python objects (:func:`numbers_table`'s)
    without pandas boxing each of its cells again (35,000 numbers at 1,000 conditions)."""
    if not all(map(pd.api.types.is_object_dtype, table.dtypes)):
        return table.to_dict("records")
    columns = list(table.columns)
    values = zip(*(table[c].tolist() for c in table.columns), strict=True)
    return [dict(zip(columns, row, strict=True)) for row in values]


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and value != value)


#: The columns of a numbers table, one row per number to record.
NUMBER_COLUMNS = (
    "name",
    "value",
    "numerator",
    "denominator",
    "scale",
    "digits",
    "unit",
    "description",
    "notes",
)


def ratio_number(
    name: str,
    k: int,
    n: int,
    description: str,
    *,
    scale: int = 100,
    digits: int = 1,
    unit: str = "%",
    notes: Mapping[str, str] | None = None,
    printed: Fraction | None = None,
) -> dict[str, Any]:
    """One row of a numbers table: ``scale * k / n``, rounded once (or ``printed``, the value
    as the release's own rule prints it), with its counts (and ``notes``, text fields stored
    with it)."""
    return {
        "name": name,
        "value": printed,
        "numerator": int(k),
        "denominator": int(n),
        "scale": scale,
        "digits": digits,
        "unit": unit,
        "description": description,
        "notes": dict(notes) if notes else None,
    }


def points(value: float) -> Fraction:
    """A fraction (a double) as exact percentage points: 100 x the fraction of counts it was
    computed as (:func:`analysis.corpus.formatting.exact_fraction`), so that 51/80 is 63.75."""
    return 100 * exact_fraction(value)


def value_number(
    name: str,
    value: Fraction | float | int | str,
    description: str,
    *,
    unit: str,
    digits: int | None = 1,
    notes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One row of a numbers table: a number rounded once to ``digits``, a count
    (``digits=None``) or a label (and ``notes``, text fields stored with it)."""
    return {
        "name": name,
        "value": value,
        "numerator": None,
        "denominator": None,
        "scale": None,
        "digits": digits,
        "unit": unit,
        "description": description,
        "notes": dict(notes) if notes else None,
    }


def numbers_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows of :func:`ratio_number` and :func:`value_number` as one table (exact values kept
    as Python objects), for :meth:`NumberBook.record`."""
    return pd.DataFrame(list(rows), columns=list(NUMBER_COLUMNS), dtype=object)


def json_one_per_line(
    document: Mapping[str, Any], member: str | None = None, sort_keys: bool = False
) -> str:
    """``document`` as JSON text (a newline at the end) with one number per line: the
    mapping itself (``member`` None) or its ``member``, the other members indented;
    ``sort_keys`` sorts every object's keys, as ``json.dumps`` does.

    A line per number keeps the file readable and its changes one line each, and each
    line is written by ``json``'s C encoder (an indented document goes through its
    Python encoder, about ten times slower: 0.5 s for the 35,000 numbers of a
    1,000-condition release).

    Examples
    --------
    >>> print(json_one_per_line({"a.b": {"value": 1}, "c": {"value": 0.5}}), end="")
    {
      "a.b": {"value": 1},
      "c": {"value": 0.5}
    }
    >>> document = {"release": "v1", "numbers": {"a": {"value": 1}}}
    >>> print(json_one_per_line(document, "numbers"), end="")
    {
      "release": "v1",
      "numbers": {
        "a": {"value": 1}
      }
    }
    """

    encode = json.JSONEncoder(sort_keys=sort_keys).encode  # json.dumps's, made once

    def one_per_line(numbers: Mapping[str, Any], indent: str) -> str:
        if not numbers:
            return "{}"
        if isinstance(numbers, EncodedNumbers):  # sorted, each entry's keys sorted
            lines = [indent + line for line in numbers.lines()]
        else:
            items = sorted(numbers.items()) if sort_keys else numbers.items()
            lines = [f"{indent}  {json.dumps(key)}: {encode(value)}" for key, value in items]
        return "{\n" + ",\n".join(lines) + f"\n{indent}}}"

    if member is None:
        return one_per_line(document, "") + "\n"
    parts = []
    for key, value in document.items():
        text = (
            one_per_line(value, "  ")
            if key == member
            else json.dumps(value, indent=2, sort_keys=sort_keys).replace("\n", "\n  ")
        )
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n" if parts else "{}\n"


def merge_fragments(output_dir: Path) -> Mapping[str, dict]:
    """All fragments of ``output_dir`` as one mapping, sorted by name; a name in two
    notebooks is an error.

    Fragments as :meth:`NumberBook.write` writes them, one number per line, are merged by
    their lines: each number is parsed when it is first read (:class:`EncodedNumbers`),
    and :func:`json_one_per_line` writes its line as it was. Any other fragment is parsed
    whole."""
    fragments = sorted((Path(output_dir) / FRAGMENTS).glob("*.json"))
    entries: list[tuple[str, str, Path]] = []
    for fragment in fragments:
        lines = _number_lines(fragment.read_text("utf-8"))
        if lines is None:
            return _parsed_fragments(fragments)
        entries += [(name, line, fragment) for name, line in lines]
    entries.sort(key=itemgetter(0))
    numbers = EncodedNumbers(entries)
    if len(numbers) < len(entries):
        return _parsed_fragments(fragments)  # which notebooks recorded a name, said there
    return numbers


def _parsed_fragments(fragments: list[Path]) -> dict[str, dict]:
    """``fragments`` parsed whole and merged, sorted by name."""
    merged: dict[str, dict] = {}
    for fragment in fragments:
        for name, entry in read_json(fragment).items():
            check_name(name)
            if name in merged:
                raise ValueError(
                    f"number {name!r} recorded by both {merged[name]['notebook']} "
                    f"and {entry['notebook']}"
                )
            merged[name] = entry
    return dict(sorted(merged.items()))


def _number_lines(text: str) -> list[tuple[str, str]] | None:
    """Each number of a fragment as (name, its line), when the fragment is one number per
    line as :meth:`NumberBook.write` writes it (JSON escapes every line break inside a
    value, so entries are separated by ``,`` and a line break alone) and every name is
    citable; else None."""
    if text == "{}\n":
        return []
    if not (text.startswith('{\n  "') and text.endswith("\n}\n")):
        return None
    lines = text[2:-3].split(",\n")
    pairs = []
    for line in lines:
        end = line.find('": ', 3)
        name = line[3:end]
        if end < 0 or not line.startswith('  "') or "\n" in line or not NAME.fullmatch(name):
            return None
        pairs.append((name, line))
    return pairs


class EncodedNumbers(Mapping[str, dict]):
    """Numbers by name, each kept as its fragment's line (``  "<name>": <entry>``) and
    parsed when first read (entries: (name, line, fragment), sorted by name, each name
    once): the claims ledger reads a few of 35,000 numbers at 1,000 conditions."""

    def __init__(self, entries: list[tuple[str, str, Path]]) -> None:
        self._entries = {name: (line, fragment) for name, line, fragment in entries}
        self._parsed: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        if name not in self._parsed:
            line, fragment = self._entries[name]
            try:
                self._parsed[name] = parse_json(line.removeprefix(f'  "{name}": '))
            except (DuplicateKeyError, json.JSONDecodeError) as exc:
                raise ValueError(f"{fragment}: number {name!r}: {refusal(exc)}") from None
        return self._parsed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lines(self) -> Iterator[str]:
        """Each number's line, in order, indented by two spaces."""
        return (line for line, _ in self._entries.values())


def write_numbers_tex(numbers: dict[str, dict], target: Path) -> Path:
    """One LaTeX macro per number: ``\\sbnum{direction.over_refusal}`` gives its value.

    Each number is defined as ``\\csname sbnum@<name>\\endcsname`` (its value as recorded;
    the unit is in ``numbers.json``), so any slug name is a macro name.
    """
    lines = [
        "% Every number of numbers.json, cited by name: \\sbnum{<name>}.",
        "\\providecommand{\\sbnum}[1]{\\csname sbnum@#1\\endcsname}",
    ]
    for name, entry in sorted(numbers.items()):
        check_name(name)
        value = latex_escape(entry["value"])
        lines.append(f"\\expandafter\\def\\csname sbnum@{name}\\endcsname{{{value}}}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", "utf-8")
    return target
