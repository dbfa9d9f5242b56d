"""``paper/numbers.json``: every number the paper cites, with its inputs' sha256.

Each notebook records its numbers in a :class:`NumberBook` and writes one fragment; the
build merges the fragments into ``numbers.json`` and refuses a name recorded twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from analysis import paths
from analysis.formatting import rounded

FRAGMENTS = "numbers"


def input_digest(path: Path) -> str:
    """sha256 of a file, or of a folder's sorted ``<sha256>  <name>`` listing."""
    if path.is_dir():
        lines = "".join(
            f"{input_digest(p)}  {p.relative_to(path)}\n"
            for p in sorted(path.rglob("*"))
            if p.is_file()
        )
        return hashlib.sha256(lines.encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
    ) -> Decimal:
        """Record ``scale * k / n`` rounded once, with its counts; return the rounded value."""
        k, n = int(k), int(n)
        value = rounded(Fraction(scale * k, n), digits)
        return self._add(name, value, unit, description, numerator=k, denominator=n)

    def value(
        self,
        name: str,
        exact: Fraction | int | str,
        *,
        digits: int | None = 1,
        unit: str = "",
        description: str = "",
    ) -> Decimal | int | str:
        """Record a number (rounded once to ``digits``), a count (``digits=None``) or a label."""
        if isinstance(exact, str) or digits is None:
            shown = exact if isinstance(exact, str) else int(exact)
        else:
            shown = rounded(Fraction(exact), digits)  # type: ignore[arg-type]
        return self._add(name, shown, unit, description)

    def _add(self, name: str, value, unit: str, description: str, **counts) -> object:
        if name in self.numbers:
            raise ValueError(f"{self.notebook}: number {name!r} recorded twice")
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

    def write(self, output_dir: Path) -> Path:
        """Write this notebook's fragment under ``output_dir/numbers/``."""
        folder = Path(output_dir) / FRAGMENTS
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{self.notebook}.json"
        target.write_text(json.dumps(self.numbers, indent=2, sort_keys=True) + "\n", "utf-8")
        return target


def merge_fragments(output_dir: Path) -> dict[str, dict]:
    """All fragments of ``output_dir`` as one mapping; a name in two notebooks is an error."""
    merged: dict[str, dict] = {}
    for fragment in sorted((Path(output_dir) / FRAGMENTS).glob("*.json")):
        for name, entry in json.loads(fragment.read_text("utf-8")).items():
            if name in merged:
                raise ValueError(
                    f"number {name!r} recorded by both {merged[name]['notebook']} "
                    f"and {entry['notebook']}"
                )
            merged[name] = entry
    return dict(sorted(merged.items()))


def load_numbers(path: Path = paths.PAPER_DIR / "numbers.json") -> dict[str, dict]:
    """The numbers of a built paper."""
    return json.loads(Path(path).read_text("utf-8"))["numbers"]
