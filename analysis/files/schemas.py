"""The schema of every JSON file the package reads from a release or a run root.

Each schema lists the fields the package reads, with their types (see :mod:`analysis.files.typed`);
fields it does not read are left alone, and parts of a release that are optional stay
optional (a reader that finds no file does not check one). Names that become paths are
:class:`~analysis.files.typed.Name`: scenario ids (``<id>.json``, ``<variant>/<id>/``) and
variants. Lists of records that name one thing each refuse a repeat (``unique``).
"""

from __future__ import annotations

from analysis.files.typed import Any_, Int, List, Map, Name, Nullable, Obj, Shape, Str

#: ``results/<version>/release-manifest.json``: what the import and the scoring read.
RELEASE_MANIFEST = Obj(
    required={"scenario_hashes": Map(Str(nonempty=True), keys=Name())},
    optional={
        "release": Str(),
        "scenario_set": Any_(),  # checked by locate_release, with the remedy
        "scenario_count": Int(minimum=0),
        "n_trials_per_cell": Int(minimum=1),
        "prompt_sha256": Str(),
        "published_rows": List(Str(), unique=""),
        "row_count": Int(minimum=0),
    },
)

#: What the leaderboard's cross-check needs of the manifest.
SCORING_MANIFEST = Obj(
    required={"n_trials_per_cell": Int(minimum=1)},
    optional={"published_rows": List(Str(), unique="")},
)

_MIRROR = Nullable(Obj(optional={"incident_name": Nullable(Str())}))

#: ``scenario-sets/<set>/<id>.json``: one scenario.
SCENARIO = Obj(
    required={
        "id": Name(),
        "title": Str(),
        "expected_behavior": Obj(required={"correct_action": Str()}),
        "irreversibility_class": Str(),
        "domain": Str(),
    },
    optional={
        "action_verb": Nullable(Str()),
        "user_request": Nullable(Str()),
        "tier": Nullable(Str()),
        "tags": Nullable(List(Str())),
        "taxonomy": Nullable(
            Obj(
                optional={
                    "direction": Str(),
                    "functional_category": Str(),
                    "domain": Nullable(Str()),
                    "source_provenance": Nullable(Str()),
                }
            )
        ),
        "metadata": Nullable(Obj(optional={"underrefusal_incident_mirror": _MIRROR})),
    },
)

#: ``scenario-sets/<set>/_SCENARIO_PATTERNS.json``: the curated construction patterns.
SCENARIO_PATTERNS = Obj(
    required={
        "scenarios": Map(
            Obj(
                required={"boundary_pattern": Str()},
                optional={"secondary_patterns": Nullable(List(Str()))},
            ),
            keys=Name(),
        )
    },
    optional={"pattern_definitions": Nullable(Map(Any_()))},
)

#: ``integrations/tinker/parity-vectors.json``: each scenario's model-facing messages.
PARITY_VECTORS = Obj(
    required={
        "scenarios": List(
            Obj(
                required={"id": Name(), "user_input": Str()},
                optional={
                    "file": Name(),
                    "sha256": Any_(),
                    "expected_action": Any_(),
                    "required_commit_permission": Any_(),
                },
            ),
            unique="id",
        )
    },
    optional={
        "scenario_set": Nullable(Str()),
        "system_prompt": Nullable(Str()),
        "canonical_scoring_mapping": Nullable(Map(Str())),
        "response_cases": Nullable(
            List(
                Obj(optional={"scenario_id": Any_(), "case_id": Any_(), "expected_action": Any_()}),
                unique="case_id",
            )
        ),
    },
)

#: ``results/<version>/leaderboard.json``: the published rows (each field a string the
#: cross-check reads, or absent).
LEADERBOARD = Obj(
    required={
        "rows": List(
            Obj(
                required={"model": Str(nonempty=True), "reasoning": Str(nonempty=True)},
                optional={
                    name: Nullable(Str())
                    for name in (
                        "kind",
                        "mean_trial_accuracy",
                        "mean_trial_accuracy_ci95",
                        "modal_accuracy",
                        "modal_accuracy_ci95",
                        "pass5",
                        "pass5_ci95",
                        "under_refusal",
                        "over_refusal",
                        "weighted_miss",
                    )
                },
            ),
            unique=("model", "reasoning"),
        )
    }
)

#: ``results/<version>/human-validation/gold-labels.json``: the three-rater majority gates.
GOLD_LABELS = Obj(
    required={"labels": Map(Obj(optional={"gate_state": Nullable(Str())}), keys=Name())}
)

#: ``RUN_PLAN.json`` of a run root.
RUN_PLAN = Obj(
    optional={
        "run_id": Nullable(Str()),
        "n_trials_per_cell": Nullable(Int(minimum=1)),
        "planned_variants": Nullable(List(Name(), unique="")),
    }
)

#: ``VARIANT_CONFIGS.json`` of a run root.
VARIANT_CONFIGS = Obj(
    optional={
        "variants": Map(
            Obj(
                optional={
                    name: Nullable(Str())
                    for name in ("label", "model", "reasoning_label", "reasoning_effort")
                }
            ),
            keys=Name(),
        )
    }
)

#: ``<variant>/<scenario>/cell.json`` of a run root.
CELL = Obj(
    optional={
        "model": Nullable(Str()),
        "reasoning_label": Nullable(Str()),
        "trial_permissions": Nullable(List(Nullable(Str()))),
    }
)

#: ``<variant>/<scenario>/trial-N.json`` of a run root.
TRIAL = Obj(
    optional={
        "trial": Int(minimum=1),
        "commit_permission": Nullable(Str()),
        "status": Nullable(Str()),
    }
)


def _scenarios_detail(trial: Shape) -> Obj:
    """The per-scenario verdict file's schema, each trial a ``trial``."""
    cell = Obj(
        required={"model": Str(nonempty=True)},
        # the cell record's own fields (n_trials, correct, split, ...) are compared in value
        # and kind with what its trials give (analysis.scoring.crosscheck)
        optional={"split": Nullable(Map(Any_())), "trials": Nullable(List(trial))},
    )
    scenario = Obj(required={"id": Name()}, optional={"model_verdicts": Nullable(List(cell))})
    return Obj(required={"scenarios": List(scenario, unique="id")})


#: ``results/<version>/scenarios-detail.json``: the published per-trial verdicts, each trial
#: shaped as a run root's (:data:`TRIAL`).
SCENARIOS_DETAIL = _scenarios_detail(TRIAL)
#: The same file down to its cells, with each cell's trials a list of anything: what the
#: cell records' reader needs. The trials loader checks the trials a field at a time, on the
#: columns it reads (:func:`analysis.trials.detail.load_scenarios_detail`), which spares a
#: pass over half a million trials at 1,000 conditions.
SCENARIOS_DETAIL_CELLS = _scenarios_detail(Any_())

__all__ = [
    "CELL",
    "GOLD_LABELS",
    "LEADERBOARD",
    "PARITY_VECTORS",
    "RELEASE_MANIFEST",
    "RUN_PLAN",
    "SCENARIO",
    "SCENARIOS_DETAIL",
    "SCENARIOS_DETAIL_CELLS",
    "SCENARIO_PATTERNS",
    "SCORING_MANIFEST",
    "TRIAL",
    "VARIANT_CONFIGS",
]
