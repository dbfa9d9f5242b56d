"""A table as a reader sees it: human headers, rates in percent, counts as whole numbers.

:func:`presented` turns a tidy frame into the strings every table file but the CSV shows
(the Markdown, the LaTeX, the report); each number is rounded once, from its exact fraction.
"""

from __future__ import annotations

import re

import pandas as pd

from analysis.corpus.formatting import fraction_texts

_RATE = re.compile(r"accuracy|rate|refusal|pass5|share|miss|agreement|match")
_HEADERS = {
    "condition": "Condition",
    "label": "Condition",
    "model": "Model",
    "source": "Verdicts",
    "scenario_id": "Scenario",
    "boundary_pattern": "Construction pattern",
    "required_gate": "Required gate",
    "human_gate": "Human majority gate",
    "action_effect": "Action effect",
    "pass5": "pass5",
    "rank": "Rank",
    "ci_low": "CI low",
    "ci_high": "CI high",
}


def is_rate(column: str, values: pd.Series) -> bool:
    """A fraction in [0, 1] named like a rate: shown as a percentage."""
    if not pd.api.types.is_float_dtype(values) or not _RATE.search(str(column)):
        return False
    present = values.dropna()
    return bool(len(present)) and bool(present.between(0, 1).all())


def human_header(column: object) -> str:
    """A reader's header for a tidy column name (``n_modal_correct`` -> ``Modal correct (n)``)."""
    text = str(column).strip()
    if text in _HEADERS:
        return _HEADERS[text]
    if " " in text or not re.fullmatch(r"[a-z0-9_]+", text):
        return text  # already written for a reader
    suffix = ""
    for ending, shown in (("_low", " (CI low)"), ("_high", " (CI high)")):
        if text.endswith(ending) and text != ending.strip("_"):
            text, suffix = text[: -len(ending)], shown
    if text.startswith("n_"):
        text, suffix = text[2:], suffix + " (n)"
    words = text.replace("_", " ")
    return re.sub(r"^Pass(\d)", r"pass\1", words[:1].upper() + words[1:] + suffix)


def is_count(column: str, values: pd.Series) -> bool:
    """A count (``n_...``) held as floats, as a column of counts with missing values is."""
    if not pd.api.types.is_float_dtype(values) or not str(column).startswith("n_"):
        return False
    present = values.dropna()
    return bool((present == present.round()).all())


def with_whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each count held as floats (:func:`is_count`) as whole numbers (nullable
    integers), so that every table file prints ``180``, not ``180.0`` or ``180.000``."""
    counts = {c: "Int64" for c in frame.columns if is_count(c, frame[c])}
    return frame.astype(counts) if counts else frame


def reader_columns(frame: pd.DataFrame, hidden: list[str]) -> list[str]:
    """The columns of ``frame`` a reader's table shows: all but ``hidden`` (the CSV keeps
    them all)."""
    return [c for c in frame.columns if c not in hidden]


def presented(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as strings for a reader: rates in percent (one decimal), other fractions to
    three decimals (each rounded half-up from its exact fraction,
    :func:`analysis.corpus.formatting.fraction_texts`), missing values as a dash, human headers."""
    shown = {}
    for column in frame.columns:
        values = frame[column]
        if is_rate(column, values):
            cells = [t if t == "–" else f"{t}%" for t in fraction_texts(values, 1, scale=100)]
        elif pd.api.types.is_float_dtype(values):
            cells = fraction_texts(values, 3)
        else:
            cells = values.tolist()
            if not all(type(v) is str for v in cells):  # text already is shown as it is
                cells = values.map(lambda v: "–" if v is None or v is pd.NA else str(v))
                cells = cells.astype(str).tolist()
        shown[human_header(column)] = cells
    return pd.DataFrame(shown, columns=list(shown))
