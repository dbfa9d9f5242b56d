"""The claims ledger: every number the paper states beside the value this project recomputes.

Each claim of :data:`analysis.corpus.published.CLAIMS` gets one status:

- ``reproduced``: the recomputed value (and counts, where the paper gives them) equals the
  published one, within the claim's tolerance;
- ``differs``: it does not; ``difference`` says by how much (recomputed minus published);
- ``needs per-trial verdicts``: only the per-scenario verdicts recompute it, and the public
  release lacks them;
- ``not computed``: no notebook recorded the number (a gap in the build).

The published values are those of the release the paper reports: a build of another release
or scenario set has no ledger, and says why (:func:`other_release`).

Beside the paper's claims, every number whose ``numbers.json`` entry carries the release's
printed value (``published``; Table 2's weighted miss, per condition) is a row: its counts
say where they come from (the leaderboard, or the per-trial verdicts where the leaderboard's
string fits several counts), and a count nothing settles ``needs per-trial verdicts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

import pandas as pd

from analysis.corpus.formatting import weighted_miss_text
from analysis.corpus.published import CLAIMS, RELEASE, SCENARIO_SET, Claim
from analysis.scoring.leaderboard import UNDETERMINED

REPRODUCED = "reproduced"
DIFFERS = "differs"
NEEDS_VERDICTS = "needs per-trial verdicts"
NOT_COMPUTED = "not computed"

COLUMNS = (
    "section",
    "statement",
    "name",
    "published",
    "recomputed",
    "unit",
    "published_counts",
    "recomputed_counts",
    "status",
    "difference",
)


def other_release(release: str, scenario_set: str) -> str | None:
    """Why the paper's published values do not apply to ``release`` of ``scenario_set``
    (they are those of the release the paper reports), or None when they do."""
    if (release, scenario_set) == (RELEASE, SCENARIO_SET):
        return None
    return (
        f"the paper's published values are those of release {RELEASE} (scenario set "
        f"{SCENARIO_SET}); this build is of release {release} (scenario set {scenario_set})"
    )


def _counts(entry: Mapping) -> str:
    if "numerator" in entry and "denominator" in entry:
        return f"{entry['numerator']}/{entry['denominator']}"
    return ""


def _difference(published, recomputed) -> Fraction | None:
    if isinstance(published, str) or isinstance(recomputed, str):
        return None
    return Fraction(str(recomputed)) - Fraction(str(published))


def judge(claim: Claim, entry: Mapping | None) -> tuple[str, str]:
    """(status, difference) of one claim given its ``numbers.json`` entry (or None)."""
    if entry is None:
        return (NEEDS_VERDICTS if claim.per_trial else NOT_COMPUTED), ""
    recomputed = entry["value"]
    difference = _difference(claim.published, recomputed)
    if difference is None:
        same = str(recomputed) == str(claim.published)
        return (REPRODUCED, "") if same else (DIFFERS, f"{recomputed!s} vs {claim.published!s}")
    counts_differ = claim.counts is not None and _counts(entry) != "{}/{}".format(*claim.counts)
    if abs(difference) <= Fraction(str(claim.tolerance)) and not counts_differ:
        return REPRODUCED, ""
    unit = "points" if claim.unit == "%" else claim.unit  # two percentages differ in points
    shown = f"{float(difference):+g}" + (f" {unit}" if unit else "")
    if counts_differ:
        shown += f"; counts {_counts(entry)} vs {claim.counts[0]}/{claim.counts[1]}"
    return DIFFERS, shown


def ledger(numbers: Mapping[str, Mapping], claims: Iterable[Claim] = CLAIMS) -> pd.DataFrame:
    """One row per claim: published and recomputed value, counts, status and difference."""
    rows = []
    for claim in claims:
        entry = numbers.get(claim.name)
        status, difference = judge(claim, entry)
        rows.append(
            {
                "section": claim.section,
                "statement": claim.statement,
                "name": claim.name,
                "published": str(claim.published),
                "recomputed": "" if entry is None else str(entry["value"]),
                "unit": claim.unit,
                "published_counts": "" if claim.counts is None else "{}/{}".format(*claim.counts),
                "recomputed_counts": "" if entry is None else _counts(entry),
                "status": status,
                "difference": difference,
            }
        )
    rows += release_rows(numbers)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def release_rows(numbers: Mapping[str, Mapping]) -> list[dict[str, str]]:
    """One ledger row per weighted miss the release prints (an entry with ``published``,
    its string): reproduced
    when its counts print as the release's string, ``needs per-trial verdicts`` when several
    counts fit and nothing said which (``recomputed_counts`` lists them)."""
    rows = []
    for name in sorted(name for name in numbers if name.endswith(".weighted_miss")):
        entry = numbers[name]
        if "published" not in entry:
            continue
        published = str(entry["published"])
        unit = "%" if published.endswith("%") else entry["unit"]
        if entry.get("counts_from") == UNDETERMINED:
            status, difference, counts = NEEDS_VERDICTS, "", str(entry.get("fits", ""))
        else:
            counts = _counts(entry)
            printed = weighted_miss_text(entry["numerator"], entry["denominator"])
            same = printed == published == f"{entry['value']}%"
            status = REPRODUCED if same else DIFFERS
            difference = "" if same else f"prints {printed} vs {published}"
        rows.append(
            {
                "section": str(entry.get("section", "")),
                "statement": str(entry.get("statement", entry["description"])),
                "name": name,
                "published": published.removesuffix("%"),
                "recomputed": str(entry["value"]),
                "unit": unit,
                "published_counts": "",
                "recomputed_counts": counts,
                "status": status,
                "difference": difference,
            }
        )
    return rows


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """Ledger rows for a reader: section, statement, published and recomputed value (with
    their counts) and status (with the difference)."""

    def shown(value: str, counts: str, unit: str) -> str:
        if not value:
            return "–"
        text = value + ("%" if unit == "%" else "")
        return f"{text} ({counts})" if counts else text

    rows = zip(
        table["published"],
        table["published_counts"],
        table["recomputed"],
        table["recomputed_counts"],
        table["unit"],
        table["status"],
        table["difference"],
        strict=True,
    )
    shown_rows = [
        (shown(p, pc, u), shown(r, rc, u), f"{s} ({d})" if d else s)
        for p, pc, r, rc, u, s, d in rows
    ]
    return pd.DataFrame(
        {
            "section": table["section"].tolist(),
            "statement": table["statement"].tolist(),
            "published": [r[0] for r in shown_rows],
            "recomputed": [r[1] for r in shown_rows],
            "status": [r[2] for r in shown_rows],
        }
    )


def compare(numbers: Mapping[str, Mapping], section: str | None = None) -> pd.DataFrame:
    """The claims that ``numbers`` records, plus (with ``section``) that section's claims
    needing per-trial verdicts, as a small table for a notebook to show beside its results."""
    chosen = [
        c
        for c in CLAIMS
        if c.name in numbers or (c.per_trial and section is not None and c.section == section)
    ]
    return readable(ledger(numbers, chosen)).drop(columns="section")
