// SPDX-License-Identifier: MIT
#include "read.hpp"

#include "error.hpp"
#include "sql.hpp"
#include "store-error.hpp"
#include "store.hpp"

#include <SQLiteCpp/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

namespace irqloop::db
{

bool run_record::partial() const noexcept
{
    return status == run_status::running || status == run_status::interrupted;
}

std::string run_record::name() const
{
    return meta.label.empty() ? "run " + std::to_string(id) : meta.label;
}

double run_record::pct_above() const noexcept
{
    return db::pct_above(summary);
}

namespace
{

std::uint64_t u64(const sql::statement& q, int c)
{
    return static_cast<std::uint64_t>(q.int64(c));
}

std::string run_columns(int version)
{
    return std::string(
               "SELECT id, status, end_unix_ns, uuid, label, kind, start_unix_ns, command_line, "
               "version, uname, hostname, backend, clock_source, clock_hz, clock_read_ns, "
               "interval_ns, jitter_ns, timeout_ns, threshold_ns, gap_limit_ns, "
               "stats_interval_ns, warmup_samples, samples_requested, duration_ns, rt_settings, "
               "target, load, samples, stimuli, lost, late, disturbed, overflows, "
               "above_threshold, exceedances_dropped, rising, falling, min_ns, max_ns, "
               "warm_max_ns, mean_ns, stddev_ns, p50_ns, p99_ns, p999_ns, p9999_ns, p999999_ns, ") +
           (version >= 2 ? "max_bracket_ns, warm_max_bracket_ns, interruptions" : "0, 0, NULL") +
           (version >= 4 ? ", smi_count" : ", NULL") + " FROM runs ORDER BY id";
}

/** Version 2 added each sample's bracket; a version-1 file reads 0 there. */
const char* bracket_column(int version)
{
    return version >= 2 ? "bracket_ns" : "0";
}

/** Version 6 added each sample's truth; an older file reads NULL (unknown) there. */
const char* truth_column(int version)
{
    return version >= 6 ? ", truth_ns" : ", NULL";
}

/** One row of run_columns; NULL numbers read as 0 (sqlite3_column_* do so). */
run_record read_run(const sql::statement& q)
{
    run_record r;
    int c = 0;
    r.id = q.int64(c++);
    r.status = parse_run_status(q.text(c++));
    if (!q.is_null(c))
        r.end_unix_ns = q.int64(c);
    ++c;
    auto& m = r.meta;
    m.uuid = q.text(c++);
    m.label = q.text(c++);
    m.kind = parse_run_kind(q.text(c++));
    m.start_unix_ns = q.int64(c++);
    for (std::string* t :
         {&m.command_line, &m.version, &m.uname, &m.hostname, &m.backend, &m.clock_source})
        *t = q.text(c++);
    m.clock_hz = q.real(c++);
    m.clock_read_ns = q.real(c++);
    for (std::int64_t* n : {&m.interval_ns, &m.jitter_ns, &m.timeout_ns, &m.threshold_ns,
                            &m.gap_limit_ns, &m.stats_interval_ns})
        *n = q.int64(c++);
    m.warmup_samples = u64(q, c++);
    m.samples_requested = u64(q, c++);
    m.duration_ns = q.int64(c++);
    for (std::string* t : {&m.rt_settings, &m.target, &m.load})
        *t = q.text(c++);
    auto& s = r.summary;
    for (std::uint64_t* n : {&s.samples, &s.stimuli, &s.lost, &s.late, &s.disturbed, &s.overflows,
                             &s.above_threshold, &s.exceedances_dropped, &s.rising, &s.falling})
        *n = u64(q, c++);
    r.has_stats = !q.is_null(c) && s.samples > 0;
    s.has_warm_max = r.has_stats && !q.is_null(c + 2); // NULL: no sample after the warm-up
    for (std::int64_t* n : {&s.min_ns, &s.max_ns, &s.warm_max_ns})
        *n = q.int64(c++);
    s.mean_ns = q.real(c++);
    s.stddev_ns = q.real(c++);
    for (std::int64_t* p : {&s.p50_ns, &s.p99_ns, &s.p999_ns, &s.p9999_ns, &s.p999999_ns})
        *p = q.int64(c++);
    s.max_bracket_ns = q.int64(c++);
    s.warm_max_bracket_ns = q.int64(c++);
    r.bracketed = !q.is_null(c);
    s.interruptions = u64(q, c++);
    if (!q.is_null(c))
        s.smi_count = u64(q, c);
    ++c;
    s.end_unix_ns = r.end_unix_ns.value_or(0);
    return r;
}

/** run --target-info's row and facts (version 9 on) of the runs from @p first on. */
void load_target_info(sqlite3* db, std::vector<run_record>& out, std::size_t first)
{
    sql::statement ti(db, "SELECT command, status, exit_code, signal, error, timeout_ns, "
                          "duration_ns, stdout, stderr, stdout_bytes, stderr_bytes FROM "
                          "target_info WHERE run_id = ?");
    sql::statement tf(db, "SELECT key, value, source FROM target_facts WHERE run_id = ? ORDER BY "
                          "idx");
    for (std::size_t i = first; i < out.size(); ++i) {
        ti.reset();
        ti.bind(1, out[i].id);
        if (!ti.step())
            continue;
        target_info_row t;
        t.command = ti.text(0);
        t.status = parse_target_info_status(ti.text(1));
        if (!ti.is_null(2))
            t.exit_code = static_cast<int>(ti.int64(2));
        if (!ti.is_null(3))
            t.signal = static_cast<int>(ti.int64(3));
        t.error = ti.text(4);
        t.timeout_ns = ti.int64(5);
        t.duration_ns = ti.int64(6);
        t.out = ti.text(7);
        t.err = ti.text(8);
        t.out_bytes = u64(ti, 9);
        t.err_bytes = u64(ti, 10);
        tf.reset();
        tf.bind(1, out[i].id);
        while (tf.step())
            t.facts.push_back({tf.text(0), tf.text(1), tf.text(2)});
        out[i].meta.target_info = std::move(t);
    }
}

/** Every run of one file with its metadata, by id. */
void load_runs(store& st, std::size_t index, std::vector<run_record>& out)
{
    sqlite3* db = st.database().getHandle();
    try {
        const std::size_t first = out.size();
        sql::statement q(db, run_columns(st.file_version()).c_str());
        while (q.step()) {
            out.push_back(read_run(q));
            out.back().db_path = st.path();
            out.back().db_index = index;
        }
        sql::statement md(db, "SELECT key, value FROM run_metadata WHERE run_id = ? ORDER BY key");
        for (std::size_t i = first; i < out.size(); ++i) {
            md.reset();
            md.bind(1, out[i].id);
            while (md.step())
                out[i].meta.metadata.emplace_back(md.text(0), md.text(1));
        }
        if (st.file_version() >= 9)
            load_target_info(db, out, first);
        // What a floor run's stored samples prove (db::floor_share_ns): clean answered ones. One
        // pass over raw_samples (it has no index) for all of the file's floor runs, none without.
        std::map<std::int64_t, std::size_t> floors;
        for (std::size_t i = first; i < out.size(); ++i)
            if (out[i].meta.kind == run_kind::floor)
                floors.emplace(out[i].id, i);
        if (!floors.empty() && st.file_version() >= 2) {
            sql::statement fl(db, "SELECT run_id, min(latency_ns - bracket_ns) FROM raw_samples "
                                  "WHERE run_id IN (SELECT id FROM runs WHERE kind = 'floor') "
                                  "AND latency_ns >= 0 AND (flags & ?) = 0 GROUP BY run_id");
            fl.bind(1, static_cast<std::int64_t>(flag_disturbed | flag_lost));
            while (fl.step())
                if (const auto at = floors.find(fl.int64(0)); at != floors.end() && !fl.is_null(1))
                    out[at->second].floor_proven_ns = fl.int64(1);
        }
    } catch (const SQLite::Exception& e) {
        throw_store_error("read runs from '" + st.path() + "'", e, db);
    }
}

bool all_digits(const std::string& s)
{
    return !s.empty() && s.size() <= 18 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/** seq, unix_ns, latency_ns, gap_ns, flags, bracket_ns, truth_ns (NULL: unknown). */
sample_row read_sample(const sql::statement& q)
{
    sample_row r{
        u64(q, 0), q.int64(1), q.int64(2), q.int64(3), static_cast<std::uint32_t>(q.int64(4)),
        q.int64(5)};
    if (!q.is_null(6))
        r.truth_ns = q.int64(6);
    return r;
}

} // namespace

struct catalog::impl {
    std::vector<std::string> paths;
    std::vector<std::unique_ptr<store>> stores;
    std::vector<run_record> runs;

    /** Run a per-run query (?1 = run id, then @p more) and hand each row to @p row. */
    template <typename Row>
    void each_row(const run_record& run, const char* what, const std::string& text, Row row,
                  std::initializer_list<std::int64_t> more = {})
    {
        store& st = *stores.at(run.db_index);
        sqlite3* db = st.database().getHandle();
        try {
            sql::statement q(db, text.c_str());
            q.bind(1, run.id);
            int i = 1;
            for (auto v : more)
                q.bind(++i, v);
            while (q.step())
                row(q);
        } catch (const SQLite::Exception& e) {
            throw_store_error(std::string("read ") + what + " of run " + std::to_string(run.id) +
                                  " from '" + st.path() + "'",
                              e, db);
        }
    }

    int version(const run_record& run) const { return stores.at(run.db_index)->file_version(); }

    /** @brief The stored per-window buckets of @p run, every window's (by index, then bucket) or
     *  window @p idx's only; none before file version 3, which did not keep them. */
    std::vector<window_bucket_row> window_buckets(const run_record& run,
                                                  std::optional<std::uint64_t> idx)
    {
        std::vector<window_bucket_row> out;
        if (version(run) < 3)
            return out;
        const auto add = [&](const sql::statement& q) {
            out.push_back(window_bucket_row{u64(q, 0), static_cast<int>(q.int64(1)), u64(q, 2)});
        };
        const std::string base =
            "SELECT idx, bucket, count FROM interval_histograms WHERE run_id = ?";
        if (idx)
            each_row(run, "per-window histograms", base + " AND idx = ? ORDER BY bucket", add,
                     {static_cast<std::int64_t>(*idx)});
        else
            each_row(run, "per-window histograms", base + " ORDER BY idx, bucket", add);
        return out;
    }

    const std::string& path_of(const run_record& run) const
    {
        return stores.at(run.db_index)->path();
    }

    std::string list_ids() const
    {
        std::string s;
        for (const auto& r : runs)
            s += (s.empty() ? "" : ", ") + std::to_string(r.id);
        return s;
    }
};

catalog::catalog(const std::vector<std::string>& paths, store::pages pages)
    : impl_(std::make_unique<impl>())
{
    if (paths.empty())
        throw error("open database", "no database file given", "use --db FILE");
    std::vector<run_record> all;
    for (const auto& p : paths) {
        std::error_code ec;
        if (!std::filesystem::exists(p, ec))
            throw error("open database '" + p + "'", "no such file",
                        "give the file 'irqloop run --db' wrote");
        auto st = std::make_unique<store>(p, store::mode::read_only, pages);
        load_runs(*st, impl_->stores.size(), all);
        impl_->stores.push_back(std::move(st));
        impl_->paths.push_back(p);
    }
    // Each file's runs are in id order and the files in the given order, so the first run
    // seen with a uuid is the one from the earliest file.
    std::set<std::string> seen;
    std::erase_if(all, [&](const run_record& r) { return !seen.insert(r.meta.uuid).second; });
    std::stable_sort(all.begin(), all.end(), [](const run_record& a, const run_record& b) {
        if (a.meta.start_unix_ns != b.meta.start_unix_ns)
            return a.meta.start_unix_ns < b.meta.start_unix_ns;
        if (a.db_index != b.db_index)
            return a.db_index < b.db_index;
        return a.id < b.id;
    });
    impl_->runs = std::move(all);
}

catalog::~catalog() = default;
catalog::catalog(catalog&&) noexcept = default;
catalog& catalog::operator=(catalog&&) noexcept = default;

const std::vector<run_record>& catalog::runs() const noexcept
{
    return impl_->runs;
}

const std::vector<std::string>& catalog::paths() const noexcept
{
    return impl_->paths;
}

std::string catalog::describe() const
{
    std::string s;
    for (const auto& p : impl_->paths)
        s += (s.empty() ? "" : ", ") + p;
    return s;
}

std::vector<const run_record*> catalog::select(const run_selector& sel) const
{
    const auto& runs = impl_->runs;
    if (runs.empty())
        throw error("read " + describe(), "the database holds no runs",
                    "record one with 'irqloop run --db FILE'");
    std::set<const run_record*> picked;
    for (const auto& want : sel.runs) {
        std::vector<const run_record*> hits;
        const bool id = all_digits(want);
        if (id)
            for (const auto& r : runs)
                if (std::to_string(r.id) == want)
                    hits.push_back(&r);
        const bool prefix = hits.empty() && want.size() >= 4;
        if (prefix)
            for (const auto& r : runs)
                if (r.meta.uuid.starts_with(want))
                    hits.push_back(&r);
        if (hits.empty())
            throw error("select run '" + want + "'",
                        "no such run in " + describe() + " (ids: " + impl_->list_ids() + ")",
                        "list the runs with 'irqloop report --list'");
        if (hits.size() > 1)
            throw error("select run '" + want + "'",
                        std::to_string(hits.size()) + " runs match in " + describe(),
                        prefix ? "give more characters of the uuid"
                               : "ids repeat across files: give the run's uuid");
        picked.insert(hits.front());
    }
    for (const auto& want : sel.labels) {
        bool any = false;
        for (const auto& r : runs)
            if (r.meta.label == want) {
                picked.insert(&r);
                any = true;
            }
        if (!any) {
            std::set<std::string> labels;
            for (const auto& r : runs)
                if (!r.meta.label.empty())
                    labels.insert(r.meta.label);
            std::string known;
            for (const auto& l : labels)
                known += (known.empty() ? "" : ", ") + ("'" + message_text(l) + "'");
            throw error("select label '" + want + "'",
                        "no run with that label in " + describe() +
                            (known.empty() ? " (no run has a label)" : " (labels: " + known + ")"),
                        "labels are set with 'irqloop run --label'");
        }
    }
    std::vector<const run_record*> out;
    const bool named = !sel.runs.empty() || !sel.labels.empty();
    for (const auto& r : runs)
        if (named ? picked.count(&r) != 0 : r.meta.kind == run_kind::measure)
            out.push_back(&r);
    if (out.empty())
        throw error("read " + describe(), "the database holds no measurement runs",
                    "name a floor or selftest run with --run ID");
    if (sel.last)
        out.erase(out.begin(), out.end() - 1);
    return out;
}

std::vector<interval_row> catalog::intervals(const run_record& run)
{
    std::vector<interval_row> out;
    const bool v2 = impl_->version(run) >= 2;
    const bool v4 = impl_->version(run) >= 4;
    const bool v6 = impl_->version(run) >= 6;
    impl_->each_row(
        run, "intervals",
        std::string("SELECT idx, start_unix_ns, end_unix_ns, samples, min_ns, max_ns, "
                    "mean_ns, stddev_ns, p50_ns, p99_ns, p999_ns, above_threshold, "
                    "lost, disturbed, overflows, ") +
            (v2 ? "interruptions, max_bracket_ns" : "0, 0") + (v4 ? ", smi_count" : ", NULL") +
            (v6 ? ", truth_max_ns" : ", NULL") + " FROM intervals WHERE run_id = ? ORDER BY idx",
        [&](const sql::statement& q) {
            out.push_back(interval_row{u64(q, 0), q.int64(1), q.int64(2), u64(q, 3), q.int64(4),
                                       q.int64(5), q.real(6), q.real(7), q.int64(8), q.int64(9),
                                       q.int64(10), u64(q, 11), u64(q, 12), u64(q, 13), u64(q, 14),
                                       u64(q, 15), q.int64(16)});
            if (!q.is_null(17))
                out.back().smi_count = u64(q, 17);
            if (!q.is_null(18))
                out.back().truth_max_ns = q.int64(18);
        });
    return out;
}

std::vector<bucket_row> catalog::histogram(const run_record& run)
{
    std::vector<bucket_row> out;
    impl_->each_row(
        run, "histogram",
        "SELECT lo_ns, hi_ns, count FROM histogram WHERE run_id = ? ORDER BY lo_ns",
        [&](const sql::statement& q) {
            // The store writes disjoint buckets with lo < hi and a count, and ORDER BY returns
            // them in order. A row that breaks this is damage SQLite's own checks let through
            // (a NULL, a damaged index): refuse it here rather than hand it to the histogram
            // arithmetic of report and plot.
            const char* why = nullptr;
            const std::int64_t lo = q.int64(0), hi = q.int64(1);
            if (q.is_null(0) || q.is_null(1) || q.is_null(2))
                why = "a NULL in a histogram row";
            else if (hi <= lo)
                why = "a histogram bucket that ends where it starts or before";
            else if (q.int64(2) < 0)
                why = "a histogram bucket with a negative count";
            else if (!out.empty() && lo < out.back().hi_ns)
                why = "histogram buckets out of order or overlapping";
            if (why)
                throw error("read histogram of run " + std::to_string(run.id) + " from '" +
                                impl_->path_of(run) + "'",
                            std::string("damaged file (") + why + ", at [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + ") ns)",
                            "keep a copy; `sqlite3 FILE 'PRAGMA integrity_check'` names the "
                            "damage, and `sqlite3 FILE .recover` may rescue its rows into a new "
                            "file",
                            exit_usage);
            out.push_back(bucket_row{lo, hi, u64(q, 2)});
        });
    return out;
}

std::vector<window_bucket_row> catalog::window_histograms(const run_record& run)
{
    return impl_->window_buckets(run, std::nullopt);
}

std::vector<window_bucket_row> catalog::window_histogram(const run_record& run, std::uint64_t idx)
{
    return impl_->window_buckets(run, idx);
}

bool catalog::has_window_histograms(const run_record& run) const
{
    if (impl_->version(run) < 3)
        return false;
    for (const auto& [k, v] : run.meta.metadata)
        if (k == "logger.window_histogram")
            return true;
    bool any = false; // a run recorded by the recorder without run.cpp's metadata (tests)
    impl_->each_row(run, "per-window histograms",
                    "SELECT 1 FROM interval_histograms WHERE run_id = ? LIMIT 1",
                    [&](const sql::statement&) { any = true; });
    return any;
}

std::vector<sample_row> catalog::worst(const run_record& run, std::size_t limit)
{
    std::vector<sample_row> out;
    impl_->each_row(run, "worst samples",
                    std::string("SELECT seq, unix_ns, latency_ns, gap_ns, flags, ") +
                        bracket_column(impl_->version(run)) + truth_column(impl_->version(run)) +
                        " FROM worst WHERE run_id = ?1 ORDER BY rank LIMIT ?2",
                    [&](const sql::statement& q) { out.push_back(read_sample(q)); },
                    {limit ? static_cast<std::int64_t>(limit) : -1});
    return out;
}

std::vector<sample_row> catalog::exceedances(const run_record& run, std::int64_t from_unix_ns,
                                             std::int64_t to_unix_ns)
{
    std::vector<sample_row> out;
    impl_->each_row(
        run, "exceedances",
        std::string("SELECT seq, unix_ns, latency_ns, gap_ns, flags, ") +
            bracket_column(impl_->version(run)) + truth_column(impl_->version(run)) +
            " FROM exceedances WHERE run_id = ?1 AND unix_ns >= ?2 AND unix_ns < ?3 ORDER BY seq",
        [&](const sql::statement& q) { out.push_back(read_sample(q)); },
        {from_unix_ns, to_unix_ns});
    return out;
}

std::vector<event_row> catalog::events(const run_record& run)
{
    std::vector<event_row> out;
    impl_->each_row(
        run, "events",
        "SELECT unix_ns, seq, kind, value, detail FROM events WHERE run_id = ? "
        "ORDER BY unix_ns, id",
        [&](const sql::statement& q) {
            out.push_back(event_row{q.int64(0), u64(q, 1), q.text(2), q.int64(3), q.text(4)});
        });
    return out;
}

std::vector<event_total> catalog::event_totals(const run_record& run)
{
    std::map<std::string, event_total> by_kind; // std::string order is SQLite's BINARY order
    for (const auto& e : events(run)) {
        auto& t = by_kind.try_emplace(e.kind, event_total{e.kind, 0, 0, e.unix_ns, e.unix_ns})
                      .first->second;
        ++t.events;
        t.value_sum += e.value;
        t.first_unix_ns = std::min(t.first_unix_ns, e.unix_ns);
        t.last_unix_ns = std::max(t.last_unix_ns, e.unix_ns);
    }
    std::vector<event_total> out;
    for (auto& [kind, t] : by_kind)
        out.push_back(std::move(t));
    return out;
}

std::uint64_t catalog::raw_count(const run_record& run)
{
    std::uint64_t n = 0;
    impl_->each_row(run, "raw samples", "SELECT count(*) FROM raw_samples WHERE run_id = ?",
                    [&](const sql::statement& q) { n = u64(q, 0); });
    return n;
}

void catalog::for_each_raw(const run_record& run, const std::function<void(const sample_row&)>& fn)
{
    impl_->each_row(
        run, "raw samples",
        std::string("SELECT seq, ") + (impl_->version(run) >= 7 ? "coalesce(unix_ns, 0)" : "0") +
            ", latency_ns, gap_ns, flags, " + bracket_column(impl_->version(run)) +
            truth_column(impl_->version(run)) + " FROM raw_samples WHERE run_id = ? ORDER BY rowid",
        [&](const sql::statement& q) { fn(read_sample(q)); });
}

} // namespace irqloop::db
