#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The reference fits test-tail-reference.cpp compares irqloop's tail fit with, on the same
exceedances: scipy's genpareto (maximum likelihood, location fixed at the threshold) and R's
evd package (fpot, confint(profile(...)); tail-reference.R). Arguments: FILE THRESHOLD MPER.
Prints one JSON object with a "scipy" and an "evd" member, each either the fit or
{"missing": "why"}. Run it with Debian's /usr/bin/python3, whose modules python3-scipy adds."""
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


def main():
    path, u, mper = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    with open(path) as f:
        values = [float(line) for line in f if line.strip()]
    print(json.dumps({"scipy": scipy_fit(values, u), "evd": evd_fit(path, u, mper)}))


if __name__ == "__main__":
    main()
