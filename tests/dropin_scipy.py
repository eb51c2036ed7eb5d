# SciPy's float32 LU routines through the LAPACK drop-in: run by
# dropin_check.cmake with and without LD_PRELOAD. SciPy (Debian's python3-scipy)
# calls the system LAPACK's sgetrf_, sgetrs_ and sgesv_; NumPy's linalg.solve
# computes float32 in double (dgesv_), so it is not used here. Exits 1 when an
# answer is wrong.
import sys

import numpy as np
import scipy.linalg as sl
from scipy.linalg import lapack

rng = np.random.default_rng(20261125)
n, nrhs = 300, 2
a = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
b = rng.uniform(-1.0, 1.0, (n, nrhs)).astype(np.float32)
eps = np.finfo(np.float32).eps


def backward_error(x):
    """||b - A x||_inf / (||A||_inf ||x||_inf n eps), in double."""
    r = b.astype(np.float64) - a.astype(np.float64) @ x.astype(np.float64)
    return np.abs(r).max() / (np.abs(a).sum(axis=1).max() * np.abs(x).max() * n * eps)


lu, piv = sl.lu_factor(a)                # sgetrf_
x_getrs = sl.lu_solve((lu, piv), b)      # sgetrs_
_, _, x_gesv, info = lapack.sgesv(a, b)  # sgesv_
ok = True
for name, x in (("sgetrf+sgetrs", x_getrs), ("sgesv", x_gesv)):
    err = backward_error(x)
    print(f"{name}: dtype {x.dtype}, scaled backward error {err:.3g}")
    ok = ok and x.dtype == np.float32 and err < 30.0
ok = ok and info == 0 and lu.dtype == np.float32
print("scipy through LAPACK: " + ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
