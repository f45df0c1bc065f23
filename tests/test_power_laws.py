"""onelayer.power_laws: crossing steps, power-law fits, log-log panels."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer.power_laws import PowerLawFit, crossing_steps, fit_power_law, loglog_panel


def test_crossing_steps_per_run_and_never():
    steps = np.array([0, 10, 20, 30])
    values = np.array([[0.0, 0.0, 0.0], [0.5, 0.2, 0.0], [0.95, 0.9, 0.1], [1.0, 0.99, np.nan]])
    out = crossing_steps(steps, values, 0.9)
    assert out[0] == 20 and out[1] == 20 and math.isnan(out[2])
    down = crossing_steps(steps, 1 - values, 0.1, above=False)
    np.testing.assert_array_equal(np.isnan(down), np.isnan(out))  # exact: booleans
    assert float(crossing_steps(steps, values[:, 0], 0.5)) == 10  # exact: a recorded step


@pytest.mark.parametrize(
    "steps, values, threshold, exc",
    [([], [], 1.0, ValueError), ([0, 0], [1, 2], 1.0, ValueError), ([0, 1], [1, 2, 3], 1.0, ValueError),
     ([0, 1], [1, 2], float("inf"), ValueError), ([0, 1], [1, 2], "1", TypeError)],
)
def test_crossing_steps_validates(steps, values, threshold, exc):
    with pytest.raises(exc):
        crossing_steps(steps, values, threshold)


def test_fit_recovers_a_power_law_and_skips_nan():
    x = np.array([10.0, 20.0, 40.0, 80.0, 160.0])
    y = 3.0 * x**1.5
    y_with_gap = np.append(y, np.nan)
    fit = fit_power_law(np.append(x, 320.0), y_with_gap)
    assert isinstance(fit, PowerLawFit)
    assert fit.slope == pytest.approx(1.5, abs=1e-12) and fit.prefactor == pytest.approx(3.0, rel=1e-10)
    assert fit.r2 == pytest.approx(1.0) and fit.n == 5
    assert fit(100.0) == pytest.approx(3000.0)
    assert fit.label() == "slope 1.50"
    noisy = fit_power_law(x, y * np.array([1.0, 1.3, 0.8, 1.2, 0.9]))
    assert 0.5 < noisy.r2 < 1.0


@pytest.mark.parametrize("x, y", [([1.0], [1.0]), ([2.0, 2.0], [1.0, 3.0]), ([1.0, -2.0], [1.0, 2.0]),
                                  ([1.0, 2.0], [0.0, 1.0]), ([1.0, 2.0], [1.0])])
def test_fit_validates(x, y):
    with pytest.raises(ValueError):
        fit_power_law(x, y)


def test_loglog_panel_draws_points_line_and_slope():
    fig, ax = plt.subplots()
    x = np.array([1.0, 2.0, 4.0, 8.0])
    fit = loglog_panel(ax, x, 5 * x**-1.0, label="cost", spread=(4 * x**-1.0, 6 * x**-1.0))
    assert fit.slope == pytest.approx(-1.0)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "cost: slope -1.00" in [t.get_text() for t in ax.legend().get_texts()]
    assert loglog_panel(ax, x, x, fit=False) is None
    with pytest.raises(ValueError):
        loglog_panel(ax, x, x, spread=(x[:2], x[:2]))
    plt.close(fig)
