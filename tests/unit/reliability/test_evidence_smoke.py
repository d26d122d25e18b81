"""Fast smoke runs of the evidence simulations (the full runs are scripts: evidence/TRUST.md),
so that they keep running and their pieces keep the meaning the note gives them."""

from __future__ import annotations

import numpy as np
import pytest

from evidence import (
    level_minimum,
    planning_assurance,
    prevalence_trust,
    trust_error_rate,
    weighted_trust,
)
from evidence._ordinal_model import ExpertPanelModel, OrdinalModel
from evidence.cluster_coverage import SETTINGS, simulate
from evidence.prevalence_paradox import binary, ordinal
from evidence.weighted_refit import binary_calibration, ranked_calibration
from judge.reliability import compare_weighted
from judge.reliability._cluster_kappa import ac2_from_counts
from judge.reliability._paired import kappa_from_counts, weight_matrix


def test_cluster_coverage_runs_every_method() -> None:
    model = OrdinalModel(judge_noise=0.8, expert_noise=0.6)
    rows = simulate(SETTINGS[1], model, 0.61, reps=3, resamples=100, seed=1)
    assert set(rows) >= {"robust", "percentile", "bca", "studentized", "jackknife_t"}
    for row in rows.values():
        assert row["runs"] == 3
        assert 0 <= row["coverage"] <= 1
    # the union is never narrower than either of its parts
    assert rows["robust"]["width"] >= rows["jackknife_t"]["width"] - 1e-12
    assert rows["robust"]["width"] >= rows["percentile"]["width"] - 1e-12


def test_trust_simulation_population_and_one_calibration() -> None:
    model = ExpertPanelModel(panel_noise=0.3, expert_noise=0.72)
    population = model.population(50_000)
    assert population["expert_expert"] == pytest.approx(0.58, abs=0.03)
    assert population["panel_median"] > population["panel_single"]
    out = trust_error_rate.one_calibration(np.random.default_rng(1), model, 200, 100, 0)
    assert set(out) == set(trust_error_rate.RULES)
    assert out["robust"] <= (out["jackknife_t"] and out["percentile"])


def test_category_kappa_of_the_level_minimum() -> None:
    # a judge that says L exactly on the L units: kappa 1
    assert level_minimum.category_kappa(5, 50, 1.0, 0.0) == pytest.approx(1.0)
    rows = level_minimum.coverage(5, 50, 0.75, 0.05, reps=5, resamples=50, seed=1)
    assert set(rows) == {"jackknife_t", "percentile", "robust"}


def test_prevalence_paradox_tables() -> None:
    k = 2
    table = binary(0.9).reshape(1, -1)
    assert kappa_from_counts(table, k, weight_matrix(k, None))[0] == pytest.approx(0.59, abs=0.01)
    assert ac2_from_counts(table, k, weight_matrix(k, None))[0] == pytest.approx(0.868, abs=0.01)
    assert ordinal(0.5).sum() == pytest.approx(1.0)


def test_weighted_refit_runs_on_a_tied_binary_calibration() -> None:
    d = binary_calibration(np.random.default_rng(2), 60)
    result = compare_weighted(d, n_resamples=30, repeats=1, seed=0)
    assert 0 < result.p_value <= 1


def test_weighted_refit_runs_on_a_ranked_calibration() -> None:
    """RESCUE's shape: two clients and the group label, top-2 lists, a good and a weak judge."""
    d = ranked_calibration(np.random.default_rng(3), 60, (0.9, 0.3))
    assert (d.n_items, d.n_judges, d.n_units) == (60, 2, 60)
    result = compare_weighted(d, n_resamples=30, repeats=1, seed=0)
    assert 0 < result.p_value <= 1
    assert np.isnan(result.single_expert)


def test_prevalence_trust_boundary_and_one_calibration() -> None:
    """At panel noise = expert noise the panel is a fourth expert: D = 0 in the population."""
    model = ExpertPanelModel(
        prevalence_trust.EXPERT_NOISE, prevalence_trust.EXPERT_NOISE, shares=prevalence_trust.SHARES
    )
    d, _ = prevalence_trust.population_ac2_difference(model)
    assert d == pytest.approx(0, abs=0.01)
    out = prevalence_trust.one_calibration(np.random.default_rng(2), model, 100, 200, 0)
    assert set(out) == set(prevalence_trust.COLUMNS)
    assert out["paradox"]


def test_weighted_trust_population_and_one_calibration() -> None:
    """Two exchangeable judges: the weighted median is one of them (worse than their
    midpoint); the like-for-like rule never trusts more often than either of its parts."""
    panel = weighted_trust.Panel((0.8, 0.8))
    population = weighted_trust.population(panel, n=4000)
    assert population["equal"] > population["weighted"]
    assert population["weighted_median"] > population["weighted"]  # the consensus reads higher
    out = weighted_trust.one_calibration(
        np.random.default_rng(3), panel, 60, 100, 0, refit_resamples=50
    )
    assert set(out) == set(weighted_trust.RULES)
    assert out["like_for_like"] <= (out["equal_test"] and out["weighted_lfl_alone"])
    assert out["consensus"] <= out["equal_test"]


def test_planning_assurance_runs(capsys: pytest.CaptureFixture[str]) -> None:
    planning_assurance.main(["--reps", "4", "--scenarios", "1", "--no-projection", "--seed", "2"])
    out = capsys.readouterr().out
    assert "assurance 0.8" in out
    assert "cleared already" in out
    assert "point projection" not in out.split("\n", 1)[1]
