// SPDX-License-Identifier: MIT
#include "tail-fit.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>

namespace irqloop::analysis
{
namespace
{

constexpr double tail_inf = std::numeric_limits<double>::infinity();
constexpr double tail_xi_lo = -1.0; // below, the likelihood is unbounded (Smith 1985)
constexpr double tail_xi_hi = 2.5;  // beyond any latency tail with a finite mean... and then some
constexpr double tail_ll_floor = -1e300;

// The excesses over one threshold: exact ones, and censored buckets [a, b) with counts.
struct tail_sample final {
    double u = 0;
    std::vector<double> y;
    struct cens final {
        double a, b;
        double count;
    };
    std::vector<cens> bins;
    double k = 0;
    double top = 0; // the largest excess the parameters must reach (exact y, or a bucket's a)
    double mean = 0;
};

double gpd_log1p_term(double xi, double z) noexcept
{
    // log(1 + xi z), the exponential limit handled by the caller
    return std::log1p(xi * z);
}

// log S(y) for the GPD (sigma, xi): -1/xi log(1 + xi y / sigma); -inf beyond the end point.
double gpd_log_survival(double y, double sigma, double xi) noexcept
{
    if (y <= 0)
        return 0;
    const double z = y / sigma;
    if (std::abs(xi) < 1e-9)
        return -z;
    const double t = 1 + xi * z;
    if (t <= 0)
        return -tail_inf;
    return -gpd_log1p_term(xi, z) / xi;
}

double tail_loglik(const tail_sample& s, double sigma, double xi) noexcept
{
    if (!(sigma > 0))
        return tail_ll_floor;
    double ll = 0;
    const double ls = std::log(sigma);
    if (std::abs(xi) < 1e-9) {
        for (double y : s.y)
            ll += -ls - y / sigma;
    } else {
        const double c = 1 + 1 / xi;
        for (double y : s.y) {
            const double t = 1 + xi * y / sigma;
            if (t <= 0) {
                if (c == 0 && t == 0)
                    continue;
                return tail_ll_floor;
            }
            ll += -ls - (c == 0 ? 0 : c * std::log(t));
        }
    }
    for (const auto& b : s.bins) {
        const double la = gpd_log_survival(b.a, sigma, xi);
        const double lb = gpd_log_survival(b.b, sigma, xi);
        if (la == -tail_inf)
            return tail_ll_floor;
        // log(S(a) - S(b)) = log S(a) + log(1 - exp(lb - la))
        const double d = lb - la;
        const double v = la + std::log(-std::expm1(d));
        if (!std::isfinite(v))
            return tail_ll_floor;
        ll += b.count * v;
    }
    return std::isfinite(ll) ? ll : tail_ll_floor;
}

// Maximize f over [lo, hi]: a grid finds the best cell (profiles need not be smooth near the
// parameter space's edge), Brent's method refines within its neighbours.
std::pair<double, double> tail_maximize(const std::function<double(double)>& f, double lo,
                                        double hi, int grid, int bits)
{
    int best = 0;
    double best_v = -tail_inf;
    std::vector<double> xs(grid + 1);
    for (int i = 0; i <= grid; ++i) {
        xs[i] = lo + (hi - lo) * i / grid;
        const double v = f(xs[i]);
        if (v > best_v) {
            best_v = v;
            best = i;
        }
    }
    const double a = xs[std::max(best - 1, 0)], b = xs[std::min(best + 1, grid)];
    std::uintmax_t iters = 40;
    auto r =
        boost::math::tools::brent_find_minima([&](double x) { return -f(x); }, a, b, bits, iters);
    if (-r.second >= best_v)
        return {r.first, -r.second};
    return {xs[best], best_v};
}

// The largest log-likelihood over sigma for a fixed shape, and the sigma that reaches it.
std::pair<double, double> tail_profile_xi(const tail_sample& s, double xi)
{
    const double smin = xi < 0 ? -xi * s.top : 0;
    const double scale0 = std::max(s.mean, 1e-9);
    // sigma = smin + exp(t): the constraint sigma > -xi * top holds by construction.
    auto f = [&](double t) { return tail_loglik(s, smin + std::exp(t), xi); };
    const double l0 = std::log(scale0);
    auto [t, ll] = tail_maximize(f, l0 - 12, l0 + 5, 8, 16);
    return {ll, smin + std::exp(t)};
}

struct tail_mle final {
    double xi = 0, sigma = 0, ll = tail_ll_floor;
};

tail_mle tail_fit_mle(const tail_sample& s)
{
    auto f = [&](double xi) { return tail_profile_xi(s, xi).first; };
    auto [xi, ll] = tail_maximize(f, tail_xi_lo, tail_xi_hi, 10, 24);
    return {xi, tail_profile_xi(s, xi).second, ll};
}

// Half the chi-square quantile the likelihood ratio is held to. Below a shape of -1/2 the
// likelihood is not regular (Smith 1985) and 2 degrees of freedom are used: the exact
// calibration for the end point of a uniform tail, where 2k log(end / max) is chi-square(2).
double tail_half_chi2(double confidence, double xi = 0)
{
    boost::math::chi_squared chi(xi < -0.5 ? 2 : 1);
    return boost::math::quantile(chi, confidence) / 2;
}

// The interval {v : lmax - prof(v) <= c} around vhat, searching outwards by steps that grow
// geometrically (next(v, j)) until the profile has dropped by c, then solving with TOMS 748.
tail_interval tail_profile_interval(const std::function<double(double)>& prof, double vhat,
                                    double lmax, double c, double lo_limit, double hi_limit,
                                    const std::function<double(int)>& lo_step,
                                    const std::function<double(int)>& hi_step)
{
    auto h = [&](double v) {
        const double lp = prof(v);
        return std::max(std::min(lmax - lp - c, 1e12), -1e12);
    };
    tail_interval out;
    auto solve = [&](double a, double b, double ha, double hb) {
        std::uintmax_t it = 60;
        auto tol = boost::math::tools::eps_tolerance<double>(30);
        auto r = boost::math::tools::toms748_solve(h, a, b, ha, hb, tol, it);
        return (r.first + r.second) / 2;
    };
    // upwards
    {
        double prev = vhat, hprev = h(vhat);
        if (hprev > 0)
            hprev = -c; // the optimum's own profile is lmax up to the optimizer's noise
        bool found = false;
        for (int j = 0; j < 60; ++j) {
            double v = std::min(hi_step(j), hi_limit);
            if (!(v > prev))
                break;
            const double hv = h(v);
            if (hv > 0) {
                out.hi = solve(prev, v, hprev, hv);
                found = true;
                break;
            }
            prev = v;
            hprev = hv;
            if (v >= hi_limit)
                break;
        }
        if (!found) {
            out.hi = prev;
            out.hi_open = true;
        }
    }
    // downwards
    {
        double prev = vhat, hprev = -c;
        bool found = false;
        for (int j = 0; j < 60; ++j) {
            double v = std::max(lo_step(j), lo_limit);
            if (!(v < prev))
                break;
            const double hv = h(v);
            if (hv > 0) {
                out.lo = solve(v, prev, hv, hprev);
                found = true;
                break;
            }
            prev = v;
            hprev = hv;
            if (v <= lo_limit)
                break;
        }
        if (!found) {
            out.lo = prev;
            out.lo_open = true;
        }
    }
    return out;
}

// Excesses over u: exact when the stored exceedances are complete above u, else the
// histogram's buckets from the one starting at u.
tail_sample tail_sample_at(const tail_data& d, double u, bool& from_histogram)
{
    tail_sample s;
    s.u = u;
    from_histogram = !(d.exact_complete && u >= d.exact_above_ns);
    if (!from_histogram) {
        for (const auto& e : d.exact)
            if (e.value_ns > u)
                s.y.push_back(e.value_ns - u);
        s.k = double(s.y.size());
        for (double y : s.y)
            s.top = std::max(s.top, y);
        s.mean = s.k > 0 ? std::accumulate(s.y.begin(), s.y.end(), 0.0) / s.k : 0;
    } else {
        double sum = 0;
        for (const auto& b : d.bins)
            if (b.lo_ns >= u) {
                s.bins.push_back({b.lo_ns - u, b.hi_ns - u, double(b.count)});
                s.k += double(b.count);
                s.top = std::max(s.top, b.lo_ns - u);
                sum += double(b.count) * ((b.lo_ns + b.hi_ns) / 2 - u);
            }
        s.mean = s.k > 0 ? sum / s.k : 0;
    }
    return s;
}

// The threshold leaving (about) k values above it: the (k+1)-th largest exact value, or the
// lowest edge of the bucket where the count from the top reaches k.
std::optional<double> tail_threshold_for(const tail_data& d, std::uint64_t k)
{
    if (d.exact_complete && d.exact.size() > k) {
        std::vector<double> v;
        v.reserve(d.exact.size());
        for (const auto& e : d.exact)
            v.push_back(e.value_ns);
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end(), std::greater<>());
        return v[k];
    }
    std::uint64_t above = 0;
    for (auto it = d.bins.rbegin(); it != d.bins.rend(); ++it) {
        above += it->count;
        if (above >= k)
            return it->lo_ns;
    }
    return std::nullopt;
}

std::string tail_fmt(const char* f, double a, double b = 0, double c = 0)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

void tail_run_checks(const tail_data& d, tail_fit& fit, const tail_options& opt)
{
    const double u = fit.params.threshold_ns;
    {
        tail_check c{"exceedances", fit.exceedances >= opt.min_exceedances, true, ""};
        c.detail = tail_fmt("%.0f exceedances above the threshold (at least %.0f needed)",
                            double(fit.exceedances), double(opt.min_exceedances));
        if (!c.passed)
            c.detail += ": no tail estimate can be claimed";
        fit.checks.push_back(c);
    }
    // The stored exceedances with their stimulus numbers and windows: complete above max(u,
    // the run's threshold).
    const double level = std::max(u, d.exact_above_ns);
    std::vector<const tail_exceedance*> ex;
    for (const auto& e : d.exact)
        if (e.value_ns > level)
            ex.push_back(&e);
    {
        tail_check c{"independence", true, true, ""};
        std::vector<std::uint64_t> seqs;
        for (auto* e : ex)
            seqs.push_back(e->seq);
        auto theta = d.exact_complete ? extremal_index(seqs) : std::nullopt;
        if (!theta) {
            c.assessed = false;
            c.detail = d.exact_complete
                           ? "too few stored exceedances to estimate the extremal index"
                           : "exceedances were dropped over --max-exceedances: their spacing "
                             "is unknown";
        } else {
            fit.extremal_index = *theta;
            c.passed = *theta >= opt.min_extremal_index;
            c.detail = tail_fmt("extremal index %.2f over %.0f exceedances above %.0f ns (1: "
                                "independent",
                                *theta, double(seqs.size()), level);
            c.detail += tail_fmt("; at least %.2f needed)", opt.min_extremal_index);
            if (!c.passed)
                c.detail += tail_fmt(": exceedances come in clusters of %.1f on average; "
                                     "probabilities and return levels assume independent "
                                     "samples and cannot be claimed",
                                     1 / *theta);
        }
        fit.checks.push_back(c);
    }
    {
        tail_check c{"stationarity", true, true, ""};
        const auto& w = d.window_samples;
        const double n_w = std::accumulate(w.begin(), w.end(), 0.0);
        if (w.size() < 2 || ex.size() < 10 || !d.exact_complete || n_w <= 0) {
            c.assessed = false;
            c.detail = "too few windows or stored exceedances to compare exceedance rates";
        } else {
            // Consecutive windows in segments expecting >= 5 exceedances each (at most 10),
            // then Pearson's chi-square test of one rate across the segments.
            const double total = double(ex.size());
            const std::size_t groups =
                std::max<std::size_t>(2, std::min<std::size_t>(10, std::size_t(total / 5)));
            std::vector<double> seg_n(groups, 0), seg_k(groups, 0);
            std::vector<std::size_t> seg_of(w.size());
            double cum = 0;
            for (std::size_t i = 0; i < w.size(); ++i) {
                const double mid = cum + double(w[i]) / 2;
                seg_of[i] = std::min(groups - 1, std::size_t(mid / n_w * double(groups)));
                seg_n[seg_of[i]] += double(w[i]);
                cum += double(w[i]);
            }
            for (auto* e : ex)
                if (e->window < w.size())
                    seg_k[seg_of[e->window]] += 1;
            double chi2 = 0;
            std::size_t used = 0;
            for (std::size_t g = 0; g < groups; ++g) {
                if (seg_n[g] <= 0)
                    continue;
                const double expect = total * seg_n[g] / n_w;
                chi2 += (seg_k[g] - expect) * (seg_k[g] - expect) / expect;
                ++used;
            }
            if (used < 2) {
                c.assessed = false;
                c.detail = "the run has a single window's worth of samples";
            } else {
                boost::math::chi_squared chi(double(used - 1));
                const double pval = boost::math::cdf(boost::math::complement(chi, chi2));
                c.passed = pval >= opt.stationarity_alpha;
                c.detail = tail_fmt("exceedance rate across %.0f segments of the run: "
                                    "chi-square %.1f, p = %.2g",
                                    double(used), chi2, pval);
                if (!c.passed)
                    c.detail += ": the tail changed during the run; one fit for the whole run "
                                "cannot be claimed";
            }
        }
        fit.checks.push_back(c);
    }
    {
        tail_check c{"shape", true, true, ""};
        const auto& ci = fit.xi_ci;
        if (!ci.lo_open && ci.lo > 0)
            c.detail = tail_fmt("shape %.3f > 0 (interval %.3f .. %.3f): a heavy tail with no "
                                "finite upper bound; any latency will be exceeded eventually",
                                fit.params.xi, ci.lo, ci.hi);
        else if (!ci.hi_open && ci.hi < 0)
            c.detail = tail_fmt("shape %.3f < 0 (interval %.3f .. %.3f): a bounded tail with "
                                "an upper end point",
                                fit.params.xi, ci.lo, ci.hi);
        else
            c.detail = tail_fmt("shape %.3f, interval %.3f .. %.3f holds 0: the data cannot "
                                "tell a bounded tail from a heavy one; no end point is claimed",
                                fit.params.xi, ci.lo, ci.hi);
        fit.checks.push_back(c);
    }
}

double tail_body_top(const tail_data& d) noexcept
{
    return d.exact_above_ns;
}

} // namespace

double gpd_params::p_exceed(double x) const noexcept
{
    return zeta * std::exp(gpd_log_survival(x - threshold_ns, sigma_ns, xi));
}

double gpd_params::return_level(double p) const noexcept
{
    const double lr = std::log(p / zeta);
    if (std::abs(xi) < 1e-9)
        return threshold_ns - sigma_ns * lr;
    return threshold_ns + sigma_ns * std::expm1(-xi * lr) / xi;
}

double gpd_params::end_point() const noexcept
{
    return xi < 0 ? threshold_ns - sigma_ns / xi : tail_inf;
}

bool tail_fit::trustworthy() const noexcept
{
    if (!fitted)
        return false;
    return std::all_of(checks.begin(), checks.end(),
                       [](const tail_check& c) { return c.passed || !c.assessed; });
}

std::optional<double> extremal_index(std::vector<std::uint64_t> seqs)
{
    if (seqs.size() < 3)
        return std::nullopt;
    std::sort(seqs.begin(), seqs.end());
    const double n = double(seqs.size());
    double s1 = 0, s2 = 0, t1 = 0, t2 = 0, tmax = 0;
    for (std::size_t i = 1; i < seqs.size(); ++i) {
        const double t = double(seqs[i] - seqs[i - 1]);
        tmax = std::max(tmax, t);
        s1 += t;
        s2 += t * t;
        t1 += t - 1;
        t2 += (t - 1) * (t - 2);
    }
    double theta;
    if (tmax <= 2)
        theta = 2 * s1 * s1 / ((n - 1) * s2);
    else
        theta = t2 > 0 ? 2 * t1 * t1 / ((n - 1) * t2) : 1;
    return std::min(1.0, theta);
}

double samples_to_show(double p, double confidence)
{
    return std::log1p(-confidence) / std::log1p(-p);
}

tail_fit fit_gpd_at(const tail_data& data, double u, const tail_options& opt)
{
    tail_fit fit;
    bool hist = false;
    const tail_sample s = tail_sample_at(data, u, hist);
    fit.from_histogram = hist;
    fit.exceedances = std::uint64_t(s.k);
    fit.params.threshold_ns = u;
    fit.params.zeta = data.samples ? s.k / double(data.samples) : 0;
    if (s.k < 3 || !(s.mean > 0))
        return fit;
    const auto m = tail_fit_mle(s);
    fit.params.xi = m.xi;
    fit.params.sigma_ns = m.sigma;
    fit.log_likelihood = m.ll;
    fit.fitted = m.ll > tail_ll_floor;
    if (!fit.fitted)
        return fit;
    const double c = tail_half_chi2(opt.confidence);
    auto prof = [&](double xi) { return tail_profile_xi(s, xi).first; };
    const double step = 0.05;
    fit.xi_ci = tail_profile_interval(
        prof, m.xi, m.ll, c, tail_xi_lo, tail_xi_hi,
        [&](int j) { return m.xi - step * std::ldexp(1.0, j); },
        [&](int j) { return m.xi + step * std::ldexp(1.0, j); });
    // sigma's profile: the best shape for each scale.
    auto prof_s = [&](double sg) {
        return tail_maximize([&](double xi) { return tail_loglik(s, sg, xi); }, tail_xi_lo,
                             tail_xi_hi, 14, 24)
            .second;
    };
    if (!opt.scale_interval)
        return fit;
    fit.sigma_ci = tail_profile_interval(
        prof_s, m.sigma, m.ll, c, 0, tail_inf,
        [&](int j) { return m.sigma * std::pow(2.0, -0.1 * std::ldexp(1.0, j)); },
        [&](int j) { return m.sigma * std::pow(2.0, 0.1 * std::ldexp(1.0, j)); });
    return fit;
}

tail_fit fit_tail(const tail_data& data, const tail_options& opt)
{
    tail_fit fit;
    if (opt.threshold_ns) {
        fit = fit_gpd_at(data, *opt.threshold_ns, opt);
        fit.threshold_rule = tail_fmt("given: %.0f ns", *opt.threshold_ns);
    } else {
        // Candidates keep max_exceedances, then 0.7 times as many, ... down to
        // min_exceedances. The rule takes the lowest threshold whose shape estimate agrees
        // with every higher candidate's: within 2.576 (99 %: it makes several comparisons)
        // of the higher one's asymptotic standard error (1 + xi) / sqrt(k), xi the larger of
        // the two estimates and 1 + xi floored at 0.5 where the shape's asymptotics do not
        // hold (xi < -0.5).
        struct cand final {
            double u;
            tail_fit f;
        };
        std::vector<cand> cands;
        for (double k = double(opt.max_exceedances); k >= double(opt.min_exceedances) - 1e-9;
             k *= 0.7) {
            auto u = tail_threshold_for(data, std::uint64_t(std::llround(k)));
            // The run's threshold says where its tail starts: below it lies the body.
            if (!u || *u < tail_body_top(data) || (!cands.empty() && *u <= cands.back().u))
                continue;
            bool hist = false;
            tail_sample s = tail_sample_at(data, *u, hist);
            if (s.k < double(opt.min_exceedances) || !(s.mean > 0))
                continue;
            tail_fit f;
            const auto m = tail_fit_mle(s);
            f.params = {*u, m.sigma, m.xi, s.k / double(data.samples)};
            f.exceedances = std::uint64_t(s.k);
            f.fitted = m.ll > tail_ll_floor;
            if (f.fitted)
                cands.push_back({*u, f});
        }
        if (cands.empty()) {
            // Too few values above any candidate: fit what there is above the run's
            // threshold so that the checks can say so.
            std::uint64_t above = 0;
            for (const auto& b : data.bins)
                above += b.count;
            const double u =
                data.exact_complete && !data.exact.empty()
                    ? data.exact_above_ns
                    : tail_threshold_for(data, std::min<std::uint64_t>(above, opt.min_exceedances))
                          .value_or(0);
            fit = fit_gpd_at(data, u, opt);
            fit.threshold_rule = "fewer exceedances than the rule's smallest candidate";
        } else {
            std::size_t pick = cands.size() - 1;
            for (std::size_t j = 0; j < cands.size(); ++j) {
                bool stable = true;
                for (std::size_t i = j + 1; i < cands.size() && stable; ++i) {
                    const auto& hi = cands[i].f;
                    const double se =
                        std::max(1 + std::max(hi.params.xi, cands[j].f.params.xi), 0.5) /
                        std::sqrt(double(hi.exceedances));
                    stable = std::abs(cands[j].f.params.xi - hi.params.xi) <= 2.576 * se;
                }
                if (stable) {
                    pick = j;
                    break;
                }
            }
            fit = fit_gpd_at(data, cands[pick].u, opt);
            fit.threshold_rule =
                tail_fmt("automatic: lowest of %.0f candidates (%.0f .. %.0f exceedances) "
                         "whose shape agrees with every higher one's",
                         double(cands.size()), double(cands.front().f.exceedances),
                         double(cands.back().f.exceedances));
        }
    }
    if (fit.fitted && fit.params.xi < 0 && !fit.xi_ci.hi_open && fit.xi_ci.hi < 0) {
        bool hist = false;
        const tail_sample s = tail_sample_at(data, fit.params.threshold_ns, hist);
        const double u = fit.params.threshold_ns;
        const double c = tail_half_chi2(opt.confidence, fit.params.xi);
        auto prof = [&](double xf) {
            if (!(xf - u > s.top))
                return tail_ll_floor;
            return tail_maximize([&](double xi) { return tail_loglik(s, -xi * (xf - u), xi); },
                                 tail_xi_lo, -1e-6, 14, 24)
                .second;
        };
        const double e = fit.params.end_point(), span = e - u;
        fit.end_point_ci = tail_profile_interval(
            prof, e, fit.log_likelihood, c, u + s.top, tail_inf,
            [&](int j) { return e - span * 1e-3 * std::ldexp(1.0, j); },
            [&](int j) { return e + span * 1e-3 * std::ldexp(1.0, j); });
    }
    tail_run_checks(data, fit, opt);
    return fit;
}

namespace
{
// The profile log-likelihood of the return level x at probability p: the scale follows from
// (x, xi) through x = u + sigma (r^-xi - 1) / xi, r = p / zeta, and the shape is maximized.
double tail_profile_level(const tail_sample& s, double zeta, double p, double x)
{
    const double d = x - s.u;
    if (!(d > 0))
        return tail_ll_floor;
    const double lr = std::log(p / zeta);
    auto f = [&](double xi) {
        const double g = std::abs(xi) < 1e-9 ? -lr : std::expm1(-xi * lr) / xi;
        return tail_loglik(s, d / g, xi);
    };
    return tail_maximize(f, tail_xi_lo, tail_xi_hi, 12, 24).second;
}
} // namespace

tail_level return_level(const tail_data& data, const tail_fit& fit, double p, double confidence)
{
    tail_level out;
    out.p = p;
    if (!fit.fitted || !(p < fit.params.zeta))
        return out;
    bool hist = false;
    const tail_sample s = tail_sample_at(data, fit.params.threshold_ns, hist);
    const double zeta = fit.params.zeta, u = s.u;
    const double x = fit.params.return_level(p);
    out.level_ns = x;
    const double span = x - u;
    out.ci =
        tail_profile_interval([&](double v) { return tail_profile_level(s, zeta, p, v); }, x,
                              fit.log_likelihood, tail_half_chi2(confidence, fit.params.xi), u,
                              tail_inf, [&](int j) { return x - span * 0.05 * std::ldexp(1.0, j); },
                              [&](int j) { return x + span * 0.05 * std::ldexp(1.0, j); });
    return out;
}

tail_level p_exceed(const tail_data& data, const tail_fit& fit, double x_ns, double confidence)
{
    tail_level out;
    out.level_ns = x_ns;
    if (!fit.fitted)
        return out;
    const double u = fit.params.threshold_ns;
    if (x_ns <= u) {
        // Below the threshold: the empirical fraction with a Clopper-Pearson interval.
        double above = 0;
        for (const auto& b : data.bins)
            if (b.lo_ns > x_ns)
                above += double(b.count);
        const double n = double(data.samples), a = (1 - confidence) / 2;
        out.p = above / n;
        out.ci.lo = above > 0 ? boost::math::ibeta_inv(above, n - above + 1, a) : 0;
        out.ci.hi = above < n ? boost::math::ibeta_inv(above + 1, n - above, 1 - a) : 1;
        return out;
    }
    bool hist = false;
    const tail_sample s = tail_sample_at(data, u, hist);
    const double zeta = fit.params.zeta;
    const double phat = fit.params.p_exceed(x_ns);
    out.p = phat;
    // In log p: the profile of "the level at probability p is x_ns".
    const double lmax = fit.log_likelihood, c = tail_half_chi2(confidence, fit.params.xi);
    auto prof = [&](double lp) { return tail_profile_level(s, zeta, std::exp(lp), x_ns); };
    const double lzeta = std::log(zeta) - 1e-9;
    double lstart = phat > 0 ? std::log(phat) : std::log(zeta) - 700;
    if (phat <= 0) {
        // Beyond the estimated end point: search upwards from the smallest probability
        // the profile still allows.
        while (lstart < lzeta && lmax - prof(lstart) - c > 0)
            lstart += 5;
        if (lstart >= lzeta)
            return out;
    }
    auto iv = tail_profile_interval(
        prof, lstart, lmax, c, std::log(zeta) - 745, lzeta,
        [&](int j) { return lstart - 0.1 * std::ldexp(1.0, j); },
        [&](int j) { return std::min(lstart + 0.1 * std::ldexp(1.0, j), lzeta); });
    out.ci.lo = phat > 0 ? std::exp(iv.lo) : 0;
    out.ci.lo_open = false;
    out.ci.hi = std::exp(iv.hi);
    out.ci.hi_open = iv.hi_open;
    return out;
}

} // namespace irqloop::analysis

namespace irqloop::analysis
{
namespace
{

// The maxima as the likelihood reads them: each distinct value with its count. From
// gev_bin_from maxima on (a night of 1 s windows), those within 0.2 % of each other (twice
// the histogram's resolution, docs/methodology-histogram.md) share one value, their mean, and
// the searches take coarser steps: the likelihood of thousands of maxima is smooth and
// single-peaked, and each evaluation costs one term per value instead of one per window.
struct gev_data final {
    std::vector<double> v;
    std::vector<double> w;
    bool coarse = false;
};

gev_data gev_compress(const std::vector<double>& maxima, std::size_t bin_from)
{
    gev_data d;
    if (maxima.size() < bin_from || bin_from == 0) {
        d.v = maxima;
        d.w.assign(maxima.size(), 1.0);
        return d;
    }
    d.coarse = true;
    std::vector<double> x = maxima;
    std::sort(x.begin(), x.end());
    constexpr double width = 2e-3; // relative
    std::size_t i = 0;
    while (i < x.size()) {
        // A bin starts at its first value and holds every value within 0.2 % above it.
        const double top = x[i] + std::abs(x[i]) * width;
        double sum = 0, n = 0;
        for (; i < x.size() && x[i] <= top; ++i) {
            sum += x[i];
            ++n;
        }
        d.v.push_back(sum / n);
        d.w.push_back(n);
    }
    return d;
}

// A search's grid and precision: coarser for the binned maxima of a long run.
int gev_grid(const gev_data& d, int grid)
{
    return d.coarse ? std::max(grid / 2, 5) : grid;
}
int gev_bits(const gev_data& d, int bits)
{
    return d.coarse ? std::min(bits, 24) : bits;
}

// The GEV log-likelihood of block maxima @p x (the Gumbel limit for |xi| < 1e-9).
double gev_loglik(const gev_data& x, double mu, double sigma, double xi) noexcept
{
    if (!(sigma > 0))
        return tail_ll_floor;
    const double ls = std::log(sigma);
    double ll = 0;
    if (std::abs(xi) < 1e-9) {
        for (std::size_t i = 0; i < x.v.size(); ++i) {
            const double z = (x.v[i] - mu) / sigma;
            ll += x.w[i] * (-ls - z - std::exp(-z));
        }
    } else {
        const double c = 1 + 1 / xi;
        for (std::size_t i = 0; i < x.v.size(); ++i) {
            const double t = 1 + xi * (x.v[i] - mu) / sigma;
            if (!(t > 0))
                return tail_ll_floor;
            const double lt = std::log(t);
            ll += x.w[i] * (-ls - c * lt - std::exp(-lt / xi));
        }
    }
    return std::isfinite(ll) ? ll : tail_ll_floor;
}

// Where to look for the location and scale: the Gumbel fit by moments.
struct gev_start final {
    double mu = 0, sigma = 1, lo = 0, hi = 0;
};

gev_start gev_moments(const std::vector<double>& x)
{
    const double n = double(x.size());
    const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
    double ss = 0;
    for (double v : x)
        ss += (v - mean) * (v - mean);
    const double sd = std::max(std::sqrt(ss / std::max(n - 1, 1.0)), 1e-9 * std::abs(mean) + 1e-9);
    gev_start g;
    g.sigma = sd * std::sqrt(6.0) / 3.141592653589793;
    g.mu = mean - 0.5772156649015329 * g.sigma;
    g.lo = *std::min_element(x.begin(), x.end());
    g.hi = *std::max_element(x.begin(), x.end());
    return g;
}

// The best location for a fixed scale and shape; the support constraint 1 + xi (x - mu) /
// sigma > 0 for every x bounds it on one side.
std::pair<double, double> gev_best_mu(const gev_data& x, const gev_start& g, double sigma,
                                      double xi)
{
    double lo = g.mu - 6 * g.sigma - 6 * sigma, hi = g.mu + 6 * g.sigma + 6 * sigma;
    if (xi > 1e-9)
        hi = std::min(hi, g.lo + sigma / xi);
    else if (xi < -1e-9)
        lo = std::max(lo, g.hi + sigma / xi);
    if (!(hi > lo))
        return {lo, tail_ll_floor};
    auto f = [&](double mu) { return gev_loglik(x, mu, sigma, xi); };
    auto [mu, ll] = tail_maximize(f, lo, hi, gev_grid(x, 16), gev_bits(x, 30));
    return {mu, ll};
}

// The largest log-likelihood over location and scale for a fixed shape.
double gev_profile_xi(const gev_data& x, const gev_start& g, double xi, double* mu_out = nullptr,
                      double* sigma_out = nullptr)
{
    auto f = [&](double t) { return gev_best_mu(x, g, std::exp(t), xi).second; };
    const double l0 = std::log(g.sigma);
    auto [t, ll] = tail_maximize(f, l0 - 5, l0 + 4, gev_grid(x, 12), gev_bits(x, 30));
    if (mu_out)
        *mu_out = gev_best_mu(x, g, std::exp(t), xi).first;
    if (sigma_out)
        *sigma_out = std::exp(t);
    return ll;
}

// y = -log G at the level: block_samples * -log(1 - p), the block's probability in the
// GEV's reduced variable.
double gev_reduced(double p, double block_samples) noexcept
{
    return -block_samples * std::log1p(-p);
}

// (y^-xi - 1) / xi, its limit -log y at xi = 0.
double gev_growth(double y, double xi) noexcept
{
    const double ly = std::log(y);
    return std::abs(xi) < 1e-9 ? -ly : std::expm1(-xi * ly) / xi;
}

} // namespace

double gev_params::block_level(double q) const noexcept
{
    return mu_ns + sigma_ns * gev_growth(-std::log1p(-q), xi);
}

double gev_params::return_level(double p) const noexcept
{
    return mu_ns + sigma_ns * gev_growth(gev_reduced(p, block_samples), xi);
}

std::vector<double> block_maxima(const tail_data& data, double& block_samples)
{
    std::vector<double> out;
    block_samples = 0;
    std::vector<std::uint64_t> sizes;
    for (std::size_t i = 0; i < data.window_samples.size() && i < data.window_max_ns.size(); ++i)
        if (data.window_samples[i] > 0)
            sizes.push_back(data.window_samples[i]);
    if (sizes.size() < 2)
        return out;
    std::nth_element(sizes.begin(), sizes.begin() + std::ptrdiff_t(sizes.size() / 2), sizes.end());
    const double half_median = double(sizes[sizes.size() / 2]) / 2;
    double sum = 0;
    for (std::size_t i = 0; i < data.window_samples.size() && i < data.window_max_ns.size(); ++i)
        if (data.window_samples[i] > 0 && double(data.window_samples[i]) >= half_median) {
            out.push_back(data.window_max_ns[i]);
            sum += double(data.window_samples[i]);
        }
    block_samples = out.empty() ? 0 : sum / double(out.size());
    return out;
}

gev_fit fit_gev(const std::vector<double>& maxima, double block_samples, double confidence,
                std::size_t min_blocks, std::size_t bin_from)
{
    gev_fit fit;
    fit.blocks = maxima.size();
    fit.params.block_samples = block_samples;
    if (maxima.size() < std::max<std::size_t>(min_blocks, 3)) {
        fit.detail = tail_fmt("%.0f window maxima (at least %.0f needed): no block-maxima "
                              "estimate",
                              double(maxima.size()), double(std::max<std::size_t>(min_blocks, 3)));
        return fit;
    }
    const gev_start g = gev_moments(maxima);
    if (!(g.hi > g.lo)) {
        fit.detail = "every window has the same max: no block-maxima estimate";
        return fit;
    }
    const gev_data x = gev_compress(maxima, bin_from);
    auto prof = [&](double xi) { return gev_profile_xi(x, g, xi); };
    // A plain copy: clang before 16 refuses a structured binding captured by a lambda (below).
    const double xi =
        tail_maximize(prof, tail_xi_lo, tail_xi_hi, gev_grid(x, 14), gev_bits(x, 30)).first;
    fit.params.xi = xi;
    fit.log_likelihood = gev_profile_xi(x, g, xi, &fit.params.mu_ns, &fit.params.sigma_ns);
    fit.fitted = fit.log_likelihood > tail_ll_floor;
    if (!fit.fitted) {
        fit.detail = "the likelihood has no maximum: no block-maxima estimate";
        return fit;
    }
    const double c = tail_half_chi2(confidence);
    const double step = 0.05;
    fit.xi_ci = tail_profile_interval(
        prof, xi, fit.log_likelihood, c, tail_xi_lo, tail_xi_hi,
        [&](int j) { return xi - step * std::ldexp(1.0, j); },
        [&](int j) { return xi + step * std::ldexp(1.0, j); });
    fit.detail = tail_fmt("%.0f window maxima of %.0f samples each on average",
                          double(maxima.size()), block_samples);
    if (x.coarse)
        fit.detail += tail_fmt(" (binned at 0.2 %%: %.0f distinct values)", double(x.v.size()));
    return fit;
}

tail_level gev_return_level(const std::vector<double>& maxima, const gev_fit& fit, double p,
                            double confidence, std::size_t bin_from)
{
    tail_level out;
    out.p = p;
    if (!fit.fitted)
        return out;
    const double x = fit.params.return_level(p);
    out.level_ns = x;
    const double y = gev_reduced(p, fit.params.block_samples);
    const gev_data d = gev_compress(maxima, bin_from);
    // The profile of "the level is v": the location follows from (v, sigma, xi), the scale and
    // the shape are maximized.
    auto prof = [&](double v) {
        auto in_xi = [&](double xi) {
            const double gr = gev_growth(y, xi);
            auto f = [&](double t) {
                const double sg = std::exp(t);
                return gev_loglik(d, v - sg * gr, sg, xi);
            };
            const double l0 = std::log(fit.params.sigma_ns);
            return tail_maximize(f, l0 - 4, l0 + 3, gev_grid(d, 12), gev_bits(d, 30)).second;
        };
        return tail_maximize(in_xi, tail_xi_lo, tail_xi_hi, gev_grid(d, 14), gev_bits(d, 30))
            .second;
    };
    const double span = std::max(x - fit.params.mu_ns, fit.params.sigma_ns);
    out.ci = tail_profile_interval(
        prof, x, fit.log_likelihood, tail_half_chi2(confidence, fit.params.xi), -tail_inf, tail_inf,
        [&](int j) { return x - span * 0.05 * std::ldexp(1.0, j); },
        [&](int j) { return x + span * 0.05 * std::ldexp(1.0, j); });
    return out;
}

} // namespace irqloop::analysis
