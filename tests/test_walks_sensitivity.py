"""Figures 4 and 5 as functions of the reconstructed positional norm, precision and symmetry breaker (issue 13 (c))."""

from __future__ import annotations

import math

import pytest
import torch

from onelayer.figures import walks as walks_figures
from onelayer.studies.walks import sensitivity


@pytest.mark.parametrize("norm,value", [("M/2", 500.0), ("1", 1.0), (62.5, 62.5)])
def test_scaled_positions_have_the_requested_norm_and_stay_orthogonal(norm, value):
    m = sensitivity.scaled_model(norm=norm)
    G = m.P.T @ m.P
    assert torch.allclose(torch.diagonal(G), torch.full((97,), value, dtype=torch.float64), rtol=1e-12)
    off = G - torch.diag(torch.diagonal(G))
    assert float(off.abs().max()) < 1e-13 * value
    assert m.query_norm2 == pytest.approx(value, rel=1e-12)
    assert float(m.x_query[:6].abs().max()) == 0.0  # exact: the token part of x~_N is built from zeros


def test_relative_gram_error_scales_with_the_norm():
    a = sensitivity.scaled_model(norm=500.0, positions="exact", relative_gram_error=1e-6)
    b = sensitivity.scaled_model(norm=5.0, positions="exact", relative_gram_error=1e-6)
    off = lambda m: (m.P.T @ m.P - torch.diag(torch.diagonal(m.P.T @ m.P))).std().item()
    assert off(a) / 500.0 == pytest.approx(off(b) / 5.0, rel=1e-6)
    assert 0.3e-6 < off(a) / 500.0 < 3e-6


def test_reconstruction_gives_figure_4_but_not_figure_5():
    r = sensitivity.figure45_row("M/2")
    assert r["fig4_reproduced"] and r["fig4_parent"] > 0.999 and r["fig4_top_lag"] == 1
    assert not r["fig5_reproduced"]
    assert r["fig5_escape_step"] <= 15 and r["fig5_max_accuracy"] > 0.9


def test_exact_positions_give_both_figures():
    r = sensitivity.figure45_row("M/2", positions="exact", relative_gram_error=0.0)
    assert r["both"] and math.isnan(r["fig5_escape_step"]) and r["fig5_max_accuracy"] < 0.2


def test_small_norm_keeps_figure_5_but_loses_figure_4():
    r = sensitivity.figure45_row("M/32")
    assert r["fig5_reproduced"]
    assert not r["fig4_reproduced"] and r["fig4_parent"] < 0.01 and r["fig4_top_lag"] != 1
    unit = sensitivity.figure45_row("1", steps=10)
    assert unit["fig4_parent"] < 0.02  # unit norm: nothing is selected


def test_window_where_both_figures_hold():
    assert sensitivity.figure45_row(40.0)["both"]


def test_sensitivity_validation():
    with pytest.raises(ValueError, match="norm"):
        sensitivity.scaled_model(norm="M/3")
    with pytest.raises(ValueError, match="norm"):
        sensitivity.scaled_model(norm=-1.0)
    with pytest.raises(ValueError, match="normalize"):
        sensitivity.scaled_model(normalize="keys")
    with pytest.raises(ValueError, match="positions"):
        sensitivity.figure45_table(positions=())


def test_figure45_figure_draws_one_line_per_precision():
    rows = [dict(norm2=n, dtype=d, fig4_parent=1.0, fig5_escape_step=float("nan") if n < 50 else 10.0)
            for d in ("float64", "float32") for n in (40.0, 500.0)]
    fig = walks_figures.figure45_figure(rows)
    assert len(fig.axes[0].lines) == 2 and len(fig.axes[1].lines) == 2
    with pytest.raises(ValueError, match="rows"):
        walks_figures.figure45_figure([])


SMALL = dict(K=6, N=25, M=100, n_train=100, n_test=100, steps=15)


@pytest.mark.parametrize("positions", ["sin", "exact"])
def test_figure45_seeds_members_equal_separate_rows(positions):
    rows = sensitivity.figure45_seeds(4.0, positions=positions, seeds=[0, 3], **SMALL)
    gram = sensitivity.READINGS[positions]
    for r in rows:
        one = sensitivity.figure45_row(4.0, positions=positions, relative_gram_error=gram, seed=r["seed"], **SMALL)
        for key in ("fig4_reproduced", "fig5_reproduced", "both"):
            assert r[key] == one[key]
        for key in ("fig4_parent", "fig5_max_spread", "fig5_max_accuracy"):
            assert r[key] == pytest.approx(one[key], abs=1e-9)  # tol: batched vs separate products with P
        for key in ("fig4_T0", "fig5_escape_step"):
            assert (math.isnan(r[key]) and math.isnan(one[key])) or r[key] == one[key]  # exact: step counts
        assert r["relative_gram_error"] == gram and r["positions"] == positions


def test_figure45_rates_count_the_reproduced_samples():
    rows = [{"positions": "sin", "relative_gram_error": 2e-12, "norm": 40.0, "norm2": 40.0 + 1e-10 * i,
             "fig4_reproduced": i < 3, "fig5_reproduced": True, "both": i < 3} for i in range(10)]
    rows += [{"positions": "exact", "relative_gram_error": 0.0, "norm": 40.0, "norm2": 40.0, "fig4_reproduced": False,
              "fig5_reproduced": True, "both": False}] * 4
    rows += [{"positions": "exact", "relative_gram_error": 1e-9, "norm": 40.0, "norm2": 40.0, "fig4_reproduced": True,
              "fig5_reproduced": False, "both": False}] * 2
    sin, exact, exact9 = sensitivity.figure45_rates(rows)
    # one group per setting, however much the measured norm2 moves
    assert (sin["positions"], sin["samples"], sin["fig4_rate"].k, sin["fig5_rate"].k, sin["both_rate"].k) == ("sin", 10, 3, 10, 3)
    assert sin["fig4"].startswith("3/10 = 0.30 [") and exact["fig4_rate"].k == 0 and exact["fig5"].startswith("4/4")
    assert (exact9["gram_error"], exact9["samples"], exact9["fig4_rate"].k, exact9["fig5_rate"].k) == (1e-9, 2, 2, 0)
    with pytest.raises(ValueError, match="rows"):
        sensitivity.figure45_rates([])


def test_figure45_seeds_validation():
    with pytest.raises(ValueError, match="positions"):
        sensitivity.figure45_seeds(40.0, positions="cos")
    with pytest.raises(ValueError, match="seeds"):
        sensitivity.figure45_seeds(40.0, seeds=[-1])
    with pytest.raises(ValueError, match="steps"):
        sensitivity.figure45_seeds(40.0, steps=0)
    with pytest.raises(ValueError, match="norm"):
        sensitivity.figure45_seeds("M/3")
