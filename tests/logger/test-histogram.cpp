// SPDX-License-Identifier: MIT
#include "histogram.hpp"

#include "error.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using irqloop::logger::histogram;

namespace
{

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// What the histogram may report for a true value v: v itself up to the top of v's bucket,
// which is less than v/1024 above it.
bool within_bound(std::int64_t reported, std::int64_t exact)
{
    return reported >= exact &&
           double(reported - exact) <= double(exact) * histogram::relative_error();
}

// Percentiles given in units of 1e-4 %, so that the exact rank is integer arithmetic:
// rank = ceil(p/100 * n) with p = p_e4 / 1e4.
std::int64_t exact_percentile(const std::vector<std::int64_t>& sorted, std::uint64_t p_e4)
{
    const std::uint64_t n = sorted.size();
    std::uint64_t rank = (p_e4 * n + 999'999) / 1'000'000;
    rank = std::clamp<std::uint64_t>(rank, 1, n);
    return sorted[rank - 1];
}

const std::vector<std::uint64_t> percents_e4 = {0,       1,       10'000,  100'000,  250'000,
                                                500'000, 750'000, 900'000, 990'000,  999'000,
                                                999'900, 999'990, 999'999, 1'000'000};

void check_against_sort(const histogram& h, std::vector<std::int64_t> values)
{
    std::sort(values.begin(), values.end());
    REQUIRE(h.count() == values.size());
    std::vector<double> p;
    for (auto e4 : percents_e4)
        p.push_back(double(e4) / 1e4);
    std::vector<std::int64_t> got(p.size());
    h.percentiles(p, got);
    for (std::size_t k = 0; k < p.size(); ++k) {
        const std::int64_t exact = exact_percentile(values, percents_e4[k]);
        INFO("p" << p[k] << ": histogram " << got[k] << " ns, exact " << exact << " ns");
        CHECK(within_bound(got[k], exact));
        CHECK(h.value_at_percentile(p[k]) == got[k]);
    }
    CHECK(got.front() == values.front());
    CHECK(got.back() == values.back());
}

using bucket = std::tuple<std::int64_t, std::int64_t, std::uint64_t>;

std::vector<bucket> buckets_of(const histogram& h)
{
    std::vector<bucket> out;
    h.for_each_bucket(
        [&](std::int64_t lo, std::int64_t hi, std::uint64_t c) { out.emplace_back(lo, hi, c); });
    return out;
}

} // namespace

TEST_CASE("histogram buckets tile 0..INT64_MAX and index_of inverts bucket_lo/bucket_hi",
          "[histogram]")
{
    const std::size_t last = histogram::index_of(int64_max);
    REQUIRE(histogram::bucket_lo(0) == 0);
    REQUIRE(histogram::bucket_hi(last) == int64_max); // saturated: INT64_MAX + 1 does not exist
    for (std::size_t i = 0; i <= last; ++i) {
        const std::int64_t lo = histogram::bucket_lo(i);
        const std::int64_t hi = histogram::bucket_hi(i);
        INFO("bucket " << i << " [" << lo << ", " << hi << ")");
        REQUIRE(lo < hi);
        REQUIRE(histogram::index_of(lo) == i);
        REQUIRE(histogram::index_of(hi - 1) == i);
        if (i < last)
            REQUIRE(histogram::bucket_lo(i + 1) == hi);
        if (lo < histogram::exact_below_ns)
            REQUIRE(hi - lo == 1);
        else
            REQUIRE(double(hi - lo) <= double(lo) * histogram::relative_error());
    }
    // The default 10 s layout: exact region plus 23 power-of-two ranges, the last one partial.
    CHECK(histogram::index_of(2047) == 2047);
    CHECK(histogram::index_of(2048) == 2048);
    CHECK(histogram::bucket_hi(2048) == 2050);
    CHECK(histogram::index_of(4096) == 3072);
    CHECK(histogram{}.bucket_count() == histogram::index_of(10'000'000'000) + 1);
}

TEST_CASE("histogram reports every value from 10 ns to 10 s within 1/1024 of it", "[histogram]")
{
    std::vector<std::int64_t> values;
    for (double v = 10; v <= 1e10; v *= 1.0001)
        values.push_back(std::llround(v));
    values.push_back(10'000'000'000);
    values.erase(std::unique(values.begin(), values.end()), values.end());
    REQUIRE(values.size() > 140'000);

    histogram h;
    for (auto v : values) {
        const std::size_t i = histogram::index_of(v);
        REQUIRE(i < h.bucket_count());
        const std::int64_t lo = histogram::bucket_lo(i), hi = histogram::bucket_hi(i);
        INFO(v << " ns in [" << lo << ", " << hi << ")");
        REQUIRE(lo <= v);
        REQUIRE(v < hi);
        REQUIRE(within_bound(hi - 1, v));
        REQUIRE(double(v - lo) <= double(lo) * histogram::relative_error());
        h.record(v);
    }
    CHECK(h.overflow() == 0);

    // Read every one of them back by rank, with percentiles that are exact fractions of n.
    const std::size_t n = values.size();
    std::vector<double> p(n);
    for (std::size_t k = 0; k < n; ++k)
        p[k] = 100.0 * double(k + 1) / double(n);
    std::vector<std::int64_t> got(n);
    h.percentiles(p, got);
    std::size_t bad = 0;
    for (std::size_t k = 0; k < n; ++k)
        if (!within_bound(got[k], values[k])) {
            if (bad++ < 5)
                UNSCOPED_INFO("rank " << k + 1 << ": " << got[k] << " ns for " << values[k]);
        }
    CHECK(bad == 0);
}

TEST_CASE("histogram percentiles of a lognormal stream match an exact sort", "[histogram]")
{
    std::mt19937_64 rng(20261130);
    std::lognormal_distribution<double> latency(std::log(5000.0), 0.6); // around 5 us
    std::vector<std::int64_t> values(1'000'000);
    histogram h;
    for (auto& v : values) {
        v = std::llround(latency(rng));
        h.record(v);
    }
    check_against_sort(h, values);
}

TEST_CASE("histogram percentiles of a stream with rare spikes match an exact sort", "[histogram]")
{
    // A quiet system (3 us +- 200 ns) with 1 in 10,000 samples at 100 us..5 ms and a few
    // multi-second stalls: the tail percentiles must land on the spikes, within the bound.
    std::mt19937_64 rng(42);
    std::normal_distribution<double> quiet(3000, 200);
    std::uniform_int_distribution<std::int64_t> spike(100'000, 5'000'000);
    std::uniform_int_distribution<int> which(0, 9999);
    std::vector<std::int64_t> values;
    histogram h;
    for (int k = 0; k < 2'000'000; ++k) {
        std::int64_t v = which(rng) == 0 ? spike(rng) : std::llround(quiet(rng));
        if (k % 700'000 == 1)
            v = 2'000'000'000 + k;
        values.push_back(v);
        h.record(v);
    }
    check_against_sort(h, values);
    CHECK(h.max() == 2'001'400'001);
}

TEST_CASE("histogram min, max, p0 and p100 are the exact recorded extremes", "[histogram]")
{
    histogram h;
    for (std::int64_t v : {5'000'123, 123'457, 77'777'777, 987'654'321, 400'001})
        h.record(v);
    CHECK(h.min() == 123'457);
    CHECK(h.max() == 987'654'321);
    CHECK(h.value_at_percentile(0) == 123'457);
    CHECK(h.value_at_percentile(100) == 987'654'321);
    // Out-of-range and NaN percentiles are clamped, not undefined.
    CHECK(h.value_at_percentile(-3) == 123'457);
    CHECK(h.value_at_percentile(250) == 987'654'321);
    CHECK(h.value_at_percentile(std::nan("")) == 123'457);
    // The bucket of 123457 reaches above it, yet p1 must not exceed the next sample's bound.
    CHECK(within_bound(h.value_at_percentile(1), 123'457));
    CHECK(histogram::bucket_hi(histogram::index_of(123'457)) - 1 > 123'457);
}

TEST_CASE("histogram p99.9 of 1000 samples is the 999th smallest, not the 1000th", "[histogram]")
{
    // 99.9/100*1000 is 999.0000000000001 in doubles: a plain ceil() would pick rank 1000.
    histogram h;
    for (std::int64_t v = 1; v <= 1000; ++v)
        h.record(v);
    CHECK(h.value_at_percentile(99.9) == 999);
    CHECK(h.value_at_percentile(29) == 290);
    CHECK(h.value_at_percentile(50) == 500);
    CHECK(h.value_at_percentile(50.01) == 501);
    CHECK(h.value_at_percentile(0.0001) == 1);

    // Above the exact region: 9999 ends its 8-ns bucket, 10000 starts the next one.
    histogram big;
    for (std::int64_t v = 1; v <= 10'000; ++v)
        big.record(v);
    CHECK(big.value_at_percentile(99.99) == 9999);
    CHECK(big.value_at_percentile(57) == 5703); // 5700 rounds up to its 4-ns bucket's top
}

TEST_CASE("histogram percentiles() answers descending requests like value_at_percentile()",
          "[histogram]")
{
    histogram h;
    for (std::int64_t v = 0; v < 100'000; v += 7)
        h.record(v * 13);
    const std::vector<double> p = {99, 50, 50, 10, 99.99, 0, 100, 75};
    std::vector<std::int64_t> got(p.size());
    h.percentiles(p, got);
    for (std::size_t k = 0; k < p.size(); ++k)
        CHECK(got[k] == h.value_at_percentile(p[k]));
    // A shorter output span is filled as far as it goes.
    std::vector<std::int64_t> two(2, -1);
    h.percentiles(p, two);
    CHECK(two[0] == got[0]);
    CHECK(two[1] == got[1]);
}

TEST_CASE("histogram merge equals recording both streams into one", "[histogram]")
{
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> a_dist(std::log(2000.0), 1.0);
    std::uniform_int_distribution<std::int64_t> b_dist(0, 20'000'000'000); // some overflow
    histogram a, b, both;
    for (int k = 0; k < 200'000; ++k) {
        const std::int64_t va = std::llround(a_dist(rng)), vb = b_dist(rng);
        a.record(va);
        b.record(vb);
        both.record(va);
        both.record(vb);
    }
    REQUIRE(b.overflow() > 0);
    a.merge(b);
    CHECK(a.count() == both.count());
    CHECK(a.overflow() == both.overflow());
    CHECK(a.min() == both.min());
    CHECK(a.max() == both.max());
    CHECK(buckets_of(a) == buckets_of(both));
    CHECK(a.mean() == both.mean());
    for (double p : {0.0, 50.0, 99.0, 99.999, 100.0})
        CHECK(a.value_at_percentile(p) == both.value_at_percentile(p));

    histogram empty;
    const auto before = buckets_of(a);
    a.merge(empty);
    CHECK(buckets_of(a) == before);
    CHECK(a.min() == both.min());
}

TEST_CASE("histogram merge of a wider range counts the excess as overflow", "[histogram]")
{
    histogram narrow(1'000'000), wide;
    narrow.record(500);
    wide.record(600);
    wide.record(3'000'000);
    wide.record(8'000'000'000);
    narrow.merge(wide);
    CHECK(narrow.count() == 4);
    CHECK(narrow.overflow() == 2);
    CHECK(narrow.max() == 8'000'000'000);
    CHECK(narrow.value_at_percentile(50) == 600);
    const auto b = buckets_of(narrow);
    REQUIRE(b.size() == 3);
    CHECK(std::get<2>(b.back()) == 2);
    CHECK(std::get<0>(b.back()) == histogram::bucket_lo(narrow.bucket_count() - 1));
}

TEST_CASE("histogram reset empties it and keeps its layout", "[histogram]")
{
    histogram h(1'000'000'000);
    const auto buckets = h.bucket_count();
    for (std::int64_t v : {10LL, 1000LL, 100'000LL, 5'000'000'000LL})
        h.record(v);
    h.reset();
    CHECK(h.count() == 0);
    CHECK(h.overflow() == 0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 0);
    CHECK(h.mean() == 0);
    CHECK(h.value_at_percentile(50) == 0);
    CHECK(buckets_of(h).empty());
    CHECK(h.bucket_count() == buckets);
    // The min/max trackers start over too, not at the old extremes.
    h.record(4242);
    CHECK(h.min() == 4242);
    CHECK(h.max() == 4242);
    CHECK(h.value_at_percentile(50) == 4242);
}

TEST_CASE("histogram counts values above highest_ns as overflow and keeps the exact max",
          "[histogram]")
{
    histogram h(1'000'000);
    h.record(1'000'000); // the top of the range is inside it
    CHECK(h.overflow() == 0);
    h.record(1'000'001); // same bucket as 1'000'000, yet beyond the range
    h.record(7'000'000);
    h.record(int64_max);
    CHECK(h.overflow() == 3);
    CHECK(h.count() == 4);
    CHECK(h.max() == int64_max);
    CHECK(h.value_at_percentile(100) == int64_max);
    const auto b = buckets_of(h);
    REQUIRE(b.size() == 1);
    CHECK(std::get<2>(b[0]) == 4);
    CHECK(std::get<0>(b[0]) <= 1'000'000);
    CHECK(std::get<1>(b[0]) > 1'000'000);

    histogram tiny(1);
    CHECK(tiny.bucket_count() == 2);
    tiny.record(1);
    tiny.record(2);
    CHECK(tiny.overflow() == 1);
}

TEST_CASE("histogram records negative values as zero", "[histogram]")
{
    histogram h;
    h.record(-5);
    h.record(std::numeric_limits<std::int64_t>::min());
    h.record(10);
    CHECK(h.count() == 3);
    CHECK(h.overflow() == 0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 10);
    CHECK(buckets_of(h) == std::vector<bucket>{{0, 1, 2}, {10, 11, 1}});
}

TEST_CASE("histogram record_n counts n at once and ignores n = 0", "[histogram]")
{
    histogram h, ones;
    h.record_n(123'456, 1000);
    for (int k = 0; k < 1000; ++k)
        ones.record(123'456);
    CHECK(buckets_of(h) == buckets_of(ones));
    CHECK(h.count() == 1000);
    h.record_n(1, 0);
    h.record_n(int64_max, 0);
    CHECK(h.count() == 1000);
    CHECK(h.min() == 123'456);
    CHECK(h.max() == 123'456);
    CHECK(h.overflow() == 0);
}

TEST_CASE("histogram for_each_bucket rebuilds the same histogram via record_n", "[histogram]")
{
    std::mt19937_64 rng(99);
    std::lognormal_distribution<double> d(std::log(50'000.0), 1.5);
    histogram h;
    for (int k = 0; k < 100'000; ++k)
        h.record(std::llround(d(rng)));
    histogram copy;
    std::int64_t previous_hi = -1;
    std::uint64_t sum = 0;
    h.for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t c) {
        CHECK(lo >= previous_hi);
        previous_hi = hi;
        sum += c;
        copy.record_n(lo, c);
    });
    CHECK(sum == h.count());
    CHECK(buckets_of(copy) == buckets_of(h));
    CHECK(copy.value_at_percentile(99) == h.value_at_percentile(99)); // not the max bucket
}

TEST_CASE("histogram mean from bucket midpoints is within half the relative error", "[histogram]")
{
    std::mt19937_64 rng(3);
    std::lognormal_distribution<double> d(std::log(20'000.0), 0.8);
    histogram h;
    double sum = 0;
    const int n = 500'000;
    for (int k = 0; k < n; ++k) {
        const std::int64_t v = std::llround(d(rng));
        sum += double(v);
        h.record(v);
    }
    const double exact = sum / n;
    CHECK_THAT(h.mean(), Catch::Matchers::WithinRel(exact, histogram::relative_error() / 2));
    CHECK(h.mean() != exact); // it is the midpoint estimate, not a hidden exact sum

    histogram small; // the exact region has no midpoint error at all
    for (std::int64_t v : {1, 2, 3, 2000})
        small.record(v);
    CHECK(small.mean() == 501.5);

    histogram wide;         // above it, a value counts as the middle of its bucket
    wide.record(4096);      // [4096, 4100)
    wide.record(1'000'000); // [999'936, 1'000'448)
    CHECK(wide.mean() == (4097.5 + 1'000'191.5) / 2);
}

TEST_CASE("histogram memory is fixed at construction, about 200 KiB for 10 s", "[histogram]")
{
    histogram h;
    const std::size_t bytes = h.memory_bytes();
    CHECK(h.bucket_count() == 24'745);
    CHECK(bytes >= h.bucket_count() * 8);
    CHECK(bytes < 200 * 1024);
    for (std::int64_t v = 0; v < 10'000'000'000; v += 9'999'991)
        h.record(v);
    CHECK(h.memory_bytes() == bytes);

    histogram moved = std::move(h);
    CHECK(moved.memory_bytes() == bytes);
    CHECK(moved.count() == 1001);
}

TEST_CASE("histogram refuses a range below 1 ns", "[histogram]")
{
    CHECK_THROWS_AS(histogram(0), irqloop::error);
    CHECK_THROWS_AS(histogram(-10), irqloop::error);
    CHECK_NOTHROW(histogram(std::numeric_limits<std::int64_t>::max()));
}
