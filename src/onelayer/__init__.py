"""onelayer: the code behind the executable companion book to two papers on
what a one-layer transformer learns under gradient descent.

* :mod:`onelayer.trees`: tree path-finding with chain of thought (Yang, Huang,
  Liang, Chi, NeurIPS 2025).
* :mod:`onelayer.walks`: random walks on a ring (Shi, Cao, NeurIPS 2025).

The core modules are shared by both parts: :mod:`~onelayer.seeding`
(determinism), :mod:`~onelayer.training` (gradient descent with history),
:mod:`~onelayer.attention` (softmax as a selector), :mod:`~onelayer.plots`,
:mod:`~onelayer.widgets` and :mod:`~onelayer.validation`.
"""

from . import blas

blas.request()  # before the first MKL call (see onelayer.blas)

from .seeding import setup

__all__ = ["setup", "__version__"]
__version__ = "0.1.0"
