// SPDX-License-Identifier: MIT
#include "queries.hpp"

#include "error.hpp"
#include "sql.hpp"
#include "store-error.hpp"

#include <SQLiteCpp/Exception.h>

#include <cctype>
#include <initializer_list>

namespace irqloop::db
{

namespace
{

constexpr const char* run_columns =
    "id, status, coalesce(end_unix_ns, 0), uuid, label, kind, start_unix_ns, command_line, "
    "version, uname, hostname, backend, clock_source, clock_hz, clock_read_ns, interval_ns, "
    "jitter_ns, timeout_ns, threshold_ns, gap_limit_ns, stats_interval_ns, warmup_samples, "
    "samples_requested, duration_ns, rt_settings, target, load, samples, stimuli, lost, late, "
    "disturbed, overflows, above_threshold, exceedances_dropped, rising, falling, "
    "coalesce(min_ns, 0), coalesce(max_ns, 0), coalesce(warm_max_ns, 0), coalesce(mean_ns, 0), "
    "coalesce(stddev_ns, 0), coalesce(p50_ns, 0), coalesce(p99_ns, 0), coalesce(p999_ns, 0), "
    "coalesce(p9999_ns, 0), coalesce(p999999_ns, 0) FROM runs";

std::uint64_t u64(const sql::statement& q, int c)
{
    return static_cast<std::uint64_t>(q.int64(c));
}

run_record read_run(const sql::statement& q)
{
    run_record r;
    int c = 0;
    r.id = q.int64(c++);
    r.status = parse_run_status(q.text(c++));
    r.end_unix_ns = q.int64(c++);
    auto& m = r.run;
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
    s.min_ns = q.int64(c++);
    s.max_ns = q.int64(c++);
    s.warm_max_ns = q.int64(c++);
    s.mean_ns = q.real(c++);
    s.stddev_ns = q.real(c++);
    for (std::int64_t* p : {&s.p50_ns, &s.p99_ns, &s.p999_ns, &s.p9999_ns, &s.p999999_ns})
        *p = q.int64(c++);
    s.end_unix_ns = r.end_unix_ns;
    return r;
}

/** Runs matching @p where (with its parameters bound by @p bind), metadata filled in. */
template <typename Bind>
std::vector<run_record> select_runs(store& s, const std::string& where, Bind bind)
{
    sqlite3* db = s.database().getHandle();
    std::vector<run_record> out;
    try {
        sql::statement q(db, std::string("SELECT ") + run_columns + " " + where);
        bind(q);
        while (q.step())
            out.push_back(read_run(q));
        sql::statement md(db, "SELECT key, value FROM run_metadata WHERE run_id = ? ORDER BY key");
        for (auto& r : out) {
            md.reset();
            md.bind(1, r.id);
            while (md.step())
                r.run.metadata.emplace_back(md.text(0), md.text(1));
        }
    } catch (const SQLite::Exception& e) {
        throw_store_error("read runs from '" + s.path() + "'", e, db);
    }
    return out;
}

std::optional<run_record> first(std::vector<run_record> v)
{
    if (v.empty())
        return std::nullopt;
    return std::move(v.front());
}

/** Run a per-run query and hand each row to @p row. */
template <typename Row>
void each_row(store& s, const char* what, const char* text, std::int64_t run_id, Row row,
              std::initializer_list<std::int64_t> more = {})
{
    sqlite3* db = s.database().getHandle();
    try {
        sql::statement q(db, text);
        q.bind(1, run_id);
        int i = 1;
        for (auto v : more)
            q.bind(++i, v);
        while (q.step())
            row(q);
    } catch (const SQLite::Exception& e) {
        throw_store_error(std::string("read ") + what + " of run " + std::to_string(run_id) +
                              " from '" + s.path() + "'",
                          e, db);
    }
}

sample_row read_sample(const sql::statement& q)
{
    return sample_row{u64(q, 0), q.int64(1), q.int64(2), q.int64(3),
                      static_cast<std::uint32_t>(q.int64(4))};
}

} // namespace

std::vector<run_record> list_runs(store& s)
{
    return select_runs(s, "ORDER BY start_unix_ns, id", [](sql::statement&) {});
}

std::optional<run_record> get_run(store& s, std::int64_t id)
{
    return first(select_runs(s, "WHERE id = ?", [id](sql::statement& q) { q.bind(1, id); }));
}

std::optional<run_record> find_run(store& s, const std::string& which)
{
    if (which.empty())
        return std::nullopt;
    if (which == "last")
        return first(
            select_runs(s, "ORDER BY start_unix_ns DESC, id DESC LIMIT 1", [](sql::statement&) {}));
    bool digits = which.size() <= 18;
    for (char ch : which)
        digits = digits && std::isdigit(static_cast<unsigned char>(ch));
    if (digits)
        if (auto r = get_run(s, std::stoll(which)))
            return r;
    if (which.size() >= 8) {
        auto v =
            select_runs(s, "WHERE substr(uuid, 1, ?2) = ?1 ORDER BY id", [&](sql::statement& q) {
                q.bind(1, std::string_view(which));
                q.bind(2, static_cast<std::int64_t>(which.size()));
            });
        if (v.size() > 1)
            throw error("find run '" + which + "'",
                        "it is the start of " + std::to_string(v.size()) + " run uuids",
                        "give more of the uuid");
        if (v.size() == 1)
            return std::move(v.front());
    }
    return first(select_runs(s, "WHERE label = ? ORDER BY start_unix_ns DESC, id DESC LIMIT 1",
                             [&](sql::statement& q) { q.bind(1, std::string_view(which)); }));
}

std::vector<interval_row> intervals(store& s, std::int64_t run_id)
{
    std::vector<interval_row> out;
    each_row(s, "intervals",
             "SELECT idx, start_unix_ns, end_unix_ns, samples, coalesce(min_ns, 0), "
             "coalesce(max_ns, 0), coalesce(mean_ns, 0), coalesce(stddev_ns, 0), "
             "coalesce(p50_ns, 0), coalesce(p99_ns, 0), coalesce(p999_ns, 0), above_threshold, "
             "lost, disturbed, overflows FROM intervals WHERE run_id = ? ORDER BY idx",
             run_id, [&](const sql::statement& q) {
                 out.push_back(interval_row{u64(q, 0), q.int64(1), q.int64(2), u64(q, 3),
                                            q.int64(4), q.int64(5), q.real(6), q.real(7),
                                            q.int64(8), q.int64(9), q.int64(10), u64(q, 11),
                                            u64(q, 12), u64(q, 13), u64(q, 14)});
             });
    return out;
}

std::vector<sample_row> worst(store& s, std::int64_t run_id, std::size_t limit)
{
    std::vector<sample_row> out;
    each_row(s, "worst samples",
             "SELECT seq, unix_ns, latency_ns, gap_ns, flags FROM worst WHERE run_id = ?1 "
             "ORDER BY rank LIMIT ?2",
             run_id, [&](const sql::statement& q) { out.push_back(read_sample(q)); },
             {limit ? static_cast<std::int64_t>(limit) : -1});
    return out;
}

std::vector<bucket_row> histogram(store& s, std::int64_t run_id)
{
    std::vector<bucket_row> out;
    each_row(s, "histogram",
             "SELECT lo_ns, hi_ns, count FROM histogram WHERE run_id = ? ORDER BY lo_ns", run_id,
             [&](const sql::statement& q) {
                 out.push_back(bucket_row{q.int64(0), q.int64(1), u64(q, 2)});
             });
    return out;
}

std::vector<sample_row> exceedances(store& s, std::int64_t run_id, std::int64_t from_unix_ns,
                                    std::int64_t to_unix_ns)
{
    std::vector<sample_row> out;
    each_row(s, "exceedances",
             "SELECT seq, unix_ns, latency_ns, gap_ns, flags FROM exceedances WHERE run_id = ?1 "
             "AND unix_ns >= ?2 AND unix_ns < ?3 ORDER BY seq",
             run_id, [&](const sql::statement& q) { out.push_back(read_sample(q)); },
             {from_unix_ns, to_unix_ns});
    return out;
}

std::vector<event_row> events(store& s, std::int64_t run_id)
{
    std::vector<event_row> out;
    each_row(s, "events",
             "SELECT unix_ns, seq, kind, value, detail FROM events WHERE run_id = ? ORDER BY id",
             run_id, [&](const sql::statement& q) {
                 out.push_back(event_row{q.int64(0), u64(q, 1), q.text(2), q.int64(3), q.text(4)});
             });
    return out;
}

std::uint64_t raw_count(store& s, std::int64_t run_id)
{
    std::uint64_t n = 0;
    each_row(s, "raw samples", "SELECT count(*) FROM raw_samples WHERE run_id = ?", run_id,
             [&](const sql::statement& q) { n = u64(q, 0); });
    return n;
}

void for_each_raw(store& s, std::int64_t run_id, const std::function<void(const sample_row&)>& fn)
{
    each_row(s, "raw samples",
             "SELECT seq, 0, latency_ns, gap_ns, flags FROM raw_samples WHERE run_id = ? "
             "ORDER BY rowid",
             run_id, [&](const sql::statement& q) { fn(read_sample(q)); });
}

} // namespace irqloop::db
