"""Jitter mode (onelayer.jitter) and MKL's reproducible branch (onelayer.blas)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from onelayer import blas, jitter
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared import embeddings
from onelayer.studies.walks import inputs
from onelayer.walks import positions
from onelayer.walks.model import WalkTransformer

ROOT = Path(__file__).resolve().parents[1]


def test_off_by_default_returns_the_input_itself(monkeypatch):
    monkeypatch.delenv(jitter.ENV, raising=False)
    x = torch.randn(4, 3, dtype=torch.float64)
    assert jitter.jitter(x, "x") is x and not jitter.active()
    monkeypatch.setenv(jitter.ENV, "0")
    assert jitter.jitter(x, "x") is x


def test_relative_seeded_and_zeros_kept(monkeypatch):
    monkeypatch.setenv(jitter.ENV, "1e-12")
    x = torch.tensor([[0.0, 1.0, -2.0], [3.0, 0.0, 5e-8]], dtype=torch.float64)
    a, b = jitter.jitter(x, "x"), jitter.jitter(x, "x")
    assert torch.equal(a, b)  # exact: the same seeded draw twice in one process
    assert a[0, 0] == 0.0 and a[1, 1] == 0.0  # exact: a zero times (1 + eps z) is zero
    rel = ((a - x) / x.abs().clamp_min(1e-300))[x != 0].abs()
    assert float(rel.max()) < 1e-11 and float(rel.min()) > 0  # moved, by about 1e-12 relative
    assert not torch.equal(jitter.jitter(x, "y"), a)  # exact: another name draws other numbers


def test_integer_tensors_and_bad_sizes(monkeypatch):
    monkeypatch.setenv(jitter.ENV, "1e-12")
    k = torch.arange(5)
    assert jitter.jitter(k, "k") is k
    with pytest.raises(TypeError, match="x must be"):
        jitter.jitter([1.0], "x")
    with pytest.raises(TypeError, match="name"):
        jitter.jitter(torch.ones(2), "")
    for bad in ("abc", "-1e-12", "1e-3", "nan"):
        monkeypatch.setenv(jitter.ENV, bad)
        with pytest.raises(ValueError, match=jitter.ENV):
            jitter.jitter_size()


def test_inputs_that_pass_through_it(monkeypatch):
    """Sinusoidal positions (with their Gram error), Gaussian inits and embeddings move; exact and one-hot inputs do not.

    The walks inputs move where the studies build them (:mod:`onelayer.studies.walks.inputs`); the paper's floor
    itself (:mod:`onelayer.walks`) is never perturbed."""
    monkeypatch.delenv(jitter.ENV, raising=False)
    P0 = inputs.positional_matrix(10, 20, "sin", gram_error=1e-9)
    E0 = inputs.positional_matrix(10, 20, "exact")
    init0 = inputs.walk_model(K=4, N=9, M=27).init("gaussian", sigma=0.1, seed=3)
    A0 = gaussian_embeddings(5, 8, torch.Generator().manual_seed(0))
    onehot0 = embeddings.one_hot_embeddings(5)
    monkeypatch.setenv(jitter.ENV, "1e-12")
    P1 = inputs.positional_matrix(10, 20, "sin", gram_error=1e-9)
    E1 = inputs.positional_matrix(10, 20, "exact")
    init1 = inputs.walk_model(K=4, N=9, M=27).init("gaussian", sigma=0.1, seed=3)
    A1 = gaussian_embeddings(5, 8, torch.Generator().manual_seed(0))
    for before, after in ((P0, P1), (init0["q"], init1["q"]), (A0, A1)):
        assert not torch.equal(before, after)  # exact: different tensors, any nonzero move counts
        assert torch.allclose(before, after, rtol=1e-10, atol=0)  # tol: the move is relative, about 1e-12
    assert torch.equal(E1, E0)  # exact: sqrt(M/2) e_i is computed exactly on every machine, so it is never jittered
    floor_P = positions.positional_matrix(10, 20, "sin", gram_error=1e-9)
    floor_q = WalkTransformer(K=4, N=9, M=27).init("gaussian", sigma=0.1, seed=3)["q"]
    assert torch.equal(floor_P, P0)  # exact: the floor never perturbs: the same computation as P0, twice
    assert torch.equal(floor_q, init0["q"])  # exact: the floor never perturbs: the same computation, twice
    assert torch.equal(embeddings.one_hot_embeddings(5), onehot0)  # exact: one-hot data is never jittered


def test_requested_branch_is_in_force_in_a_fresh_process():
    """``import onelayer`` asks MKL for the COMPATIBLE branch before its first call; a prior MKL call is warned about."""
    env = {k: v for k, v in os.environ.items() if k not in (blas.ENV, blas.NATIVE_ENV)}  # as a reader's kernel starts
    code = "import onelayer; from onelayer import blas; onelayer.setup(); print(blas.branch())"
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "MKL uses" not in out.stderr
    if torch.backends.mkl.is_available():
        assert out.stdout.strip() == blas.DEFAULT
    late = "import torch; a = torch.ones(40, 40, dtype=torch.float64); a @ a\nimport onelayer; onelayer.setup()"
    res = subprocess.run([sys.executable, "-W", "always", "-c", late], env=env, capture_output=True, text=True)
    if torch.backends.mkl.is_available():
        assert res.returncode == 0 and "MKL uses the OFF branch" in res.stderr
    other = subprocess.run([sys.executable, "-W", "always", "-c", code], env={**env, blas.ENV: "AUTO"},
                           capture_output=True, text=True, check=True)
    if torch.backends.mkl.is_available():
        assert other.stdout.strip() == "AUTO" and "MKL uses" not in other.stderr  # the environment's choice is kept
    # An instruction-set branch: Intel CPUs run it, others run AUTO (seen on AMD EPYC); neither is a late request.
    isa = subprocess.run([sys.executable, "-W", "always", "-c", code], env={**env, blas.ENV: "AVX2"},
                         capture_output=True, text=True, check=True)
    if torch.backends.mkl.is_available():
        assert isa.stdout.strip() in ("AVX2", "AUTO") and "MKL uses" not in isa.stderr


def test_native_mode_leaves_mkl_to_its_own_dispatch():
    """``ONELAYER_BLAS=native`` removes ``MKL_CBWR`` before MKL's first call: CNR off, and no warning about it."""
    code = "import os, onelayer; from onelayer import blas; onelayer.setup(); print(blas.branch(), os.environ.get(blas.ENV))"
    env = {**os.environ, blas.ENV: blas.DEFAULT, blas.NATIVE_ENV: "native"}
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "MKL uses" not in out.stderr
    branch, value = out.stdout.split()
    assert value == "None"
    if torch.backends.mkl.is_available():
        assert branch == "OFF"
    # any other value of ONELAYER_BLAS keeps the reproducible branch
    kept = subprocess.run([sys.executable, "-c", code], env={**env, blas.NATIVE_ENV: "mkl"}, capture_output=True,
                          text=True, check=True)
    assert kept.stdout.split()[1] == blas.DEFAULT


pytest_plugins = ["pytester"]

MARKED = '''
import pytest

@pytest.mark.exact_arithmetic(reason="bit-level symmetry of a demo")
def test_marked():
    pass

def test_plain():
    pass
'''


def test_marked_tests_are_skipped_with_their_reason_in_jitter_mode_only(pytester, monkeypatch):
    pytester.makeconftest((ROOT / "conftest.py").read_text())
    pytester.makepyfile(test_demo=MARKED)
    monkeypatch.delenv(jitter.ENV, raising=False)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    monkeypatch.setenv(jitter.ENV, "1e-14")
    res = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    res.assert_outcomes(passed=1, skipped=1)
    res.stdout.fnmatch_lines(["*jitter mode: exact-arithmetic illustration (bit-level symmetry of a demo)*"])
    pytester.makepyfile(test_demo=MARKED.replace('(reason="bit-level symmetry of a demo")', ""))
    assert "needs reason=" in str(pytester.runpytest("-p", "no:cacheprovider").stderr) + str(
        pytester.runpytest("-p", "no:cacheprovider").stdout)


def test_tagged_notebook_cells_run_unchecked_in_jitter_mode_only(monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("onelayer_root_conftest", ROOT / "conftest.py")
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)

    class Cell:  # the two attributes of an nbval cell item the plugin reads and writes
        def __init__(self, tags):
            self.cell = {"metadata": {"tags": tags}}
            self.options = {"check": True}

        def get_closest_marker(self, name):
            return None

    tagged, plain = Cell([root_conftest.EXACT_TAG]), Cell(["hide-input"])
    monkeypatch.delenv(jitter.ENV, raising=False)
    root_conftest.JitterMarks().pytest_collection_modifyitems([tagged, plain])
    assert tagged.options["check"] and plain.options["check"]
    monkeypatch.setenv(jitter.ENV, "1e-14")
    root_conftest.JitterMarks().pytest_collection_modifyitems([tagged, plain])
    assert not tagged.options["check"] and plain.options["check"]
