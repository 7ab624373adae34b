# SPDX-License-Identifier: MIT
# R's evd package (Debian r-cran-evd) on the same exceedances irqloop fits, for
# test-tail-reference.cpp: fpot's maximum-likelihood generalized Pareto fit, its profile
# intervals (confint(profile(...))), and fpot's return-level parametrization (mper) with its
# profile interval, with npp = 1: the level exceeded once in MPER exceedances. The optimizer
# is run to a relative tolerance of 1e-12 (its default, 1e-8, can stop 1 % short of the
# maximum). Arguments: FILE (one value per line) THRESHOLD MPER. Prints one line of
# JSON.
# With the arguments gev FILE PROB: fgev's generalized extreme-value fit to block maxima, its
# profile intervals, and fgev's quantile parametrization (prob = PROB, started from the first
# fit: its own start can stop elsewhere) with the quantile's profile interval.
args <- commandArgs(trailingOnly = TRUE)
if (args[1] == "gev") {
    x <- scan(args[2], quiet = TRUE)
    p <- as.numeric(args[3])
    suppressPackageStartupMessages(library(evd))
    quiet <- function(e) { invisible(capture.output(v <- e)); v }
    ctl <- list(reltol = 1e-12, maxit = 2000)
    f <- fgev(x, control = ctl)
    ci <- quiet(confint(quiet(profile(f)), level = 0.95))
    th <- fitted(f)
    q0 <- qgev(1 - p, th[["loc"]], th[["scale"]], th[["shape"]])
    fr <- fgev(x, prob = p, start = list(quantile = q0, scale = th[["scale"]],
                                         shape = th[["shape"]]), control = ctl)
    cir <- quiet(confint(quiet(profile(fr, which = "quantile")), level = 0.95))
    num <- function(v) sprintf("%.10g", v)
    cat(sprintf(paste0('{"loc": %s, "scale": %s, "shape": %s, "shape_ci": [%s, %s], ',
                       '"quantile": %s, "quantile_ci": [%s, %s]}\n'),
                num(th[["loc"]]), num(th[["scale"]]), num(th[["shape"]]),
                num(ci["shape", 1]), num(ci["shape", 2]), num(fitted(fr)[["quantile"]]),
                num(cir["quantile", 1]), num(cir["quantile", 2])))
    quit(save = "no")
}
x <- scan(args[1], quiet = TRUE)
u <- as.numeric(args[2])
m <- as.numeric(args[3])
suppressPackageStartupMessages(library(evd))
quiet <- function(e) { invisible(capture.output(v <- e)); v }
f <- fpot(x, u, control = list(reltol = 1e-12, maxit = 1000))
ci <- quiet(confint(quiet(profile(f)), level = 0.95))
fr <- fpot(x, u, npp = 1, mper = m, control = list(reltol = 1e-12, maxit = 1000))
cir <- quiet(confint(quiet(profile(fr, which = "rlevel")), level = 0.95))
num <- function(v) sprintf("%.10g", v)
cat(sprintf(paste0('{"scale": %s, "shape": %s, "scale_ci": [%s, %s], "shape_ci": [%s, %s], ',
                   '"rlevel": %s, "rlevel_ci": [%s, %s]}\n'),
            num(fitted(f)["scale"]), num(fitted(f)["shape"]),
            num(ci["scale", 1]), num(ci["scale", 2]), num(ci["shape", 1]), num(ci["shape", 2]),
            num(fitted(fr)["rlevel"]), num(cir["rlevel", 1]), num(cir["rlevel", 2])))
