// SPDX-License-Identifier: MIT
#include "breakdown-store.hpp"

#include "error.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace irqloop::analysis
{

trace_identity identify_trace(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw error("explain: read trace '" + path + "'", std::strerror(errno),
                    "name the saved trace of the target", exit_usage);
    trace_identity id;
    id.path = path;
    std::uint64_t h = 0xcbf29ce484222325ull; // FNV-1a, 64 bits
    char buf[65536];
    while (f) {
        f.read(buf, sizeof buf);
        const auto n = f.gcount();
        for (std::streamsize i = 0; i < n; ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 0x100000001b3ull;
        }
        id.bytes += static_cast<std::uint64_t>(n);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    id.hash = hex;
    return id;
}

std::vector<stored_part> parts_of(const sample_breakdown& b)
{
    std::vector<stored_part> out;
    out.push_back({"before the handler", b.before_handler_ns, "logger", false});
    if (b.latency_ns >= 0)
        out.push_back({"handler to response", b.handler_to_response_ns, "logger", false});
    if (b.handler_ns)
        out.push_back({"handler ran", *b.handler_ns, "target", true});
    if (b.handler_to_response_measured_ns)
        out.push_back({"handler to its write", *b.handler_to_response_measured_ns, "target", true});
    if (b.thread_run_ns)
        out.push_back({"thread wake-up to run", *b.thread_run_ns, "target", true});
    return out;
}

stored_breakdown to_stored(const sample_breakdown& b, const trace_identity& id,
                           std::uint64_t trace_events, const trace_alignment& a,
                           std::int64_t unix_ns)
{
    stored_breakdown s;
    s.seq = b.seq;
    s.unix_ns = unix_ns;
    s.trace = id;
    s.trace_events = trace_events;
    s.paired = a.pairs.size();
    s.residual_ns = a.residual_ns;
    s.drift_ppm = a.drift_ppm;
    s.latency_ns = b.latency_ns;
    s.cpu = b.cpu;
    if (!b.blockers.empty())
        s.largest = b.blockers.front();
    if (!b.tasks.empty())
        s.task = b.tasks.front().name;
    s.parts = parts_of(b);
    // A note of 0 lost events still marks the window (explain says it incomplete): kept as a
    // drop of no count, as 0 stored means no note at all.
    s.dropped_events = !b.dropped ? 0 : *b.dropped > 0 ? *b.dropped : -1;
    return s;
}

void store_breakdowns(db::store& s, std::int64_t run_id, const std::vector<stored_breakdown>& rows)
{
    try {
        auto& d = s.database();
        SQLite::Transaction tx(d, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement drop(d, "DELETE FROM breakdown_parts WHERE run_id = ? AND seq = ?");
        SQLite::Statement ins(
            d, "INSERT OR REPLACE INTO breakdowns (run_id, seq, unix_ns, trace, trace_bytes, "
               "trace_hash, trace_events, paired, residual_ns, drift_ppm, latency_ns, cpu, "
               "blocker_kind, blocker_name, blocker_ns, blocker_in_window_ns, blocker_complete, "
               "task, dropped_events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
               "?, ?)");
        SQLite::Statement part(d, "INSERT INTO breakdown_parts (run_id, seq, idx, part, ns, "
                                  "clock, measured) VALUES (?, ?, ?, ?, ?, ?, ?)");
        for (const auto& r : rows) {
            const auto seq = static_cast<std::int64_t>(r.seq);
            drop.reset();
            drop.bind(1, run_id);
            drop.bind(2, seq);
            drop.exec();
            ins.reset();
            ins.clearBindings();
            int k = 0;
            ins.bind(++k, run_id);
            ins.bind(++k, seq);
            ins.bind(++k, r.unix_ns);
            ins.bind(++k, r.trace.path);
            ins.bind(++k, static_cast<std::int64_t>(r.trace.bytes));
            ins.bind(++k, r.trace.hash);
            ins.bind(++k, static_cast<std::int64_t>(r.trace_events));
            ins.bind(++k, static_cast<std::int64_t>(r.paired));
            ins.bind(++k, r.residual_ns);
            ins.bind(++k, r.drift_ppm);
            ins.bind(++k, r.latency_ns);
            ins.bind(++k, r.cpu);
            if (r.largest) {
                ins.bind(++k, r.largest->kind);
                ins.bind(++k, r.largest->name);
                ins.bind(++k, r.largest->duration_ns);
                ins.bind(++k, r.largest->in_window_ns);
                ins.bind(++k, r.largest->complete ? 1 : 0);
            } else {
                k += 5; // NULL: nothing traced in the window
            }
            if (r.task)
                ins.bind(++k, *r.task);
            else
                ++k;
            if (r.dropped_events)
                ins.bind(++k, *r.dropped_events);
            ins.exec();
            int idx = 0;
            for (const auto& p : r.parts) {
                part.reset();
                part.bind(1, run_id);
                part.bind(2, seq);
                part.bind(3, ++idx);
                part.bind(4, p.part);
                part.bind(5, p.ns);
                part.bind(6, p.clock);
                part.bind(7, p.measured ? 1 : 0);
                part.exec();
            }
        }
        tx.commit();
    } catch (const SQLite::Exception& e) {
        throw error("explain: store the breakdowns with run " + std::to_string(run_id) + " in '" +
                        s.path() + "'",
                    e.what(), "is the disk full or the file read-only?", exit_failure);
    }
}

std::map<std::uint64_t, stored_breakdown> read_breakdowns(const std::string& path,
                                                          std::int64_t run_id)
{
    std::map<std::uint64_t, stored_breakdown> out;
    try {
        SQLite::Database d(path, SQLite::OPEN_READONLY);
        const int version = d.execAndGet("PRAGMA user_version").getInt();
        if (version < 8)
            return out;
        // A file not yet upgraded to version 10 reads as it is: what was dropped, not known.
        SQLite::Statement q(
            d, std::string("SELECT seq, unix_ns, trace, trace_bytes, trace_hash, trace_events, "
                           "paired, residual_ns, drift_ppm, latency_ns, cpu, blocker_kind, "
                           "blocker_name, blocker_ns, blocker_in_window_ns, blocker_complete, "
                           "task, ") +
                   (version >= 10 ? "dropped_events" : "NULL") +
                   " FROM breakdowns WHERE run_id = ? ORDER BY seq");
        q.bind(1, run_id);
        while (q.executeStep()) {
            stored_breakdown b;
            int k = 0;
            b.seq = static_cast<std::uint64_t>(q.getColumn(k++).getInt64());
            b.unix_ns = q.getColumn(k++).getInt64();
            b.trace.path = q.getColumn(k++).getString();
            b.trace.bytes = static_cast<std::uint64_t>(q.getColumn(k++).getInt64());
            b.trace.hash = q.getColumn(k++).getString();
            b.trace_events = static_cast<std::uint64_t>(q.getColumn(k++).getInt64());
            b.paired = static_cast<std::uint64_t>(q.getColumn(k++).getInt64());
            b.residual_ns = q.getColumn(k++).getDouble();
            b.drift_ppm = q.getColumn(k++).getDouble();
            b.latency_ns = q.getColumn(k++).getInt64();
            b.cpu = q.getColumn(k++).getInt();
            if (!q.getColumn(k).isNull()) {
                blocker x;
                x.kind = q.getColumn(k).getString();
                x.name = q.getColumn(k + 1).getString();
                x.duration_ns = q.getColumn(k + 2).getInt64();
                x.in_window_ns = q.getColumn(k + 3).getInt64();
                x.complete = q.getColumn(k + 4).getInt() != 0;
                b.largest = x;
            }
            k += 5;
            if (!q.getColumn(k).isNull())
                b.task = q.getColumn(k).getString();
            ++k;
            if (!q.getColumn(k).isNull())
                b.dropped_events = q.getColumn(k).getInt64();
            out.emplace(b.seq, std::move(b));
        }
        SQLite::Statement p(d, "SELECT seq, part, ns, clock, measured FROM breakdown_parts "
                               "WHERE run_id = ? ORDER BY seq, idx");
        p.bind(1, run_id);
        while (p.executeStep()) {
            const auto it = out.find(static_cast<std::uint64_t>(p.getColumn(0).getInt64()));
            if (it != out.end())
                it->second.parts.push_back({p.getColumn(1).getString(), p.getColumn(2).getInt64(),
                                            p.getColumn(3).getString(),
                                            p.getColumn(4).getInt() != 0});
        }
    } catch (const SQLite::Exception& e) {
        throw error("read the breakdowns of run " + std::to_string(run_id) + " in '" + path + "'",
                    e.what(), "is the file damaged?", exit_failure);
    }
    return out;
}

std::string why_text(const stored_breakdown& b)
{
    // What the tracer dropped in the window: a blocker may be missing, so it is said with
    // whatever the window held ("nothing traced" above all would claim too much without it).
    std::string dropped;
    if (b.dropped_events && *b.dropped_events != 0)
        dropped =
            "; the tracer dropped " +
            (*b.dropped_events > 0 ? std::to_string(*b.dropped_events) + " events" : "events") +
            " in the window";
    if (!b.largest)
        return "nothing traced" + dropped;
    char us[32];
    std::snprintf(us, sizeof us, "%.1fus", double(b.largest->duration_ns) / 1000.0);
    // An IRQ's name already says "irq N name"; the others are the caller, softirq or NMI.
    const auto& x = *b.largest;
    return (x.kind == "irq" ? x.name : x.kind + " " + x.name) + " " + us +
           (x.complete ? " (target clock)" : " (target clock, cut by the trace)") + dropped;
}

} // namespace irqloop::analysis
