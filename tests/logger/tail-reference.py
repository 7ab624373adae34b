#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The reference fits test-tail-reference.cpp compares irqloop's tail fit with, on the same
exceedances: scipy's genpareto (maximum likelihood, location fixed at the threshold) and R's
evd package (fpot, confint(profile(...)); tail-reference.R). Arguments: FILE THRESHOLD MPER.
Prints one JSON object with a "scipy" and an "evd" member, each either the fit or
{"missing": "why"}. With the arguments gev FILE PROB: block maxima, fitted by scipy's
genextreme (whose shape c is minus irqloop's xi) and evd's fgev. Run it with Debian's /usr/bin/python3, whose modules python3-scipy adds."""
import json
import os
import shutil
import subprocess
import sys


def scipy_fit(values, u):
    try:
        from scipy.stats import genpareto
    except ImportError:
        return {"missing": "no scipy for " + sys.executable + " (apt-get install python3-scipy)"}
    c, _, scale = genpareto.fit([v - u for v in values], floc=0)
    return {"shape": c, "scale": scale}


def evd_fit(path, u, mper):
    rscript = shutil.which("Rscript")
    if not rscript:
        return {"missing": "no Rscript (apt-get install r-base-core r-cran-evd)"}
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([rscript, "--vanilla", os.path.join(here, "tail-reference.R"), path,
                        repr(u), repr(mper)], capture_output=True, text=True)
    if r.returncode != 0:
        if "there is no package called" in r.stderr:
            return {"missing": "R has no evd package (apt-get install r-cran-evd)"}
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout.strip().splitlines()[-1])


def scipy_gev(values):
    try:
        import math
        from scipy import optimize
        from scipy.stats import genextreme
    except ImportError:
        return {"missing": "no scipy for " + sys.executable + " (apt-get install python3-scipy)"}

    # Nelder-Mead run to tight tolerances, from the Gumbel fit by moments (its defaults can
    # stop short of the maximum).
    def tight(func, x0, args=(), disp=0):
        return optimize.fmin(func, x0, args=args, disp=0, xtol=1e-10, ftol=1e-12,
                             maxiter=20000, maxfun=40000)

    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    scale0 = sd * math.sqrt(6) / math.pi
    c, loc, scale = genextreme.fit(values, 0.0, loc=mean - 0.5772156649 * scale0,
                                   scale=scale0, optimizer=tight)
    return {"shape": -c, "loc": loc, "scale": scale}


def evd_gev(path, prob):
    rscript = shutil.which("Rscript")
    if not rscript:
        return {"missing": "no Rscript (apt-get install r-base-core r-cran-evd)"}
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([rscript, "--vanilla", os.path.join(here, "tail-reference.R"), "gev", path,
                        repr(prob)], capture_output=True, text=True)
    if r.returncode != 0:
        if "there is no package called" in r.stderr:
            return {"missing": "R has no evd package (apt-get install r-cran-evd)"}
        return {"error": r.stderr.strip()}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    if sys.argv[1] == "gev":
        path, prob = sys.argv[2], float(sys.argv[3])
        with open(path) as f:
            values = [float(line) for line in f if line.strip()]
        print(json.dumps({"scipy": scipy_gev(values), "evd": evd_gev(path, prob)}))
        return
    path, u, mper = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    with open(path) as f:
        values = [float(line) for line in f if line.strip()]
    print(json.dumps({"scipy": scipy_fit(values, u), "evd": evd_fit(path, u, mper)}))


if __name__ == "__main__":
    main()
