// SPDX-License-Identifier: MIT
#include "verify-store.hpp"

#include "error.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

namespace irqloop::analysis
{

void store_verification(db::store& s, verification& v)
{
    const std::string what =
        "verify: store the result with run " + std::to_string(v.run_id) + " in '" + s.path() + "'";
    const auto& f = v.figures;
    try {
        auto& d = s.database();
        SQLite::Transaction tx(d, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement next(d, "SELECT coalesce(max(idx), 0) + 1 FROM verifications "
                                  "WHERE run_id = ?");
        next.bind(1, v.run_id);
        next.executeStep();
        v.idx = next.getColumn(0).getInt64();
        SQLite::Statement ins(
            d, "INSERT INTO verifications (run_id, idx, unix_ns, capture, stim, resp, "
               "samplerate_hz, resolution_ps, capture_edges, run_stimuli, matched, capture_only, "
               "run_only, outside_capture, both_answered, both_lost, lost_only_irqloop, "
               "lost_only_analyzer, not_compared, offset_ns, drift_ppm, diff_min_ns, "
               "diff_median_ns, diff_p99_ns, diff_max_ns, outside_bracket) VALUES (?, ?, ?, ?, "
               "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        int k = 0;
        auto n = [](std::size_t x) { return static_cast<std::int64_t>(x); };
        ins.bind(++k, v.run_id);
        ins.bind(++k, v.idx);
        ins.bind(++k, v.unix_ns);
        ins.bind(++k, v.capture);
        ins.bind(++k, v.stim);
        ins.bind(++k, v.resp);
        ins.bind(++k, v.samplerate_hz);
        ins.bind(++k, f.resolution_ps);
        for (auto x : {f.capture_edges, f.run_stimuli, f.matched, f.capture_only, f.run_only,
                       f.outside_capture, f.both_answered, f.both_lost, f.lost_only_irqloop,
                       f.lost_only_analyzer, f.not_compared})
            ins.bind(++k, n(x));
        ins.bind(++k, f.offset_ns);
        ins.bind(++k, f.drift_ppm);
        for (auto x : {f.diff_min_ns, f.diff_median_ns, f.diff_p99_ns, f.diff_max_ns}) {
            if (f.both_answered)
                ins.bind(++k, x);
            else
                ins.bind(++k);
        }
        ins.bind(++k, n(f.outside.size()));
        ins.exec();
        SQLite::Statement out(d, "INSERT INTO verification_outside (run_id, idx, seq, latency_ns, "
                                 "bracket_ns, analyzer_ns) VALUES (?, ?, ?, ?, ?, ?)");
        for (const auto& o : f.outside) {
            out.reset();
            out.bind(1, v.run_id);
            out.bind(2, v.idx);
            out.bind(3, static_cast<std::int64_t>(o.seq));
            out.bind(4, o.latency_ns);
            out.bind(5, o.bracket_ns);
            out.bind(6, o.analyzer_ns);
            out.exec();
        }
        tx.commit();
    } catch (const SQLite::Exception& e) {
        throw error(what, e.what(), "is the disk full or the file read-only?", exit_failure);
    }
}

std::vector<verification> read_verifications(const std::string& path, std::int64_t run_id)
{
    std::vector<verification> out;
    try {
        SQLite::Database d(path, SQLite::OPEN_READONLY);
        if (d.execAndGet("PRAGMA user_version").getInt() < 7)
            return out;
        SQLite::Statement q(
            d, "SELECT idx, unix_ns, capture, stim, resp, samplerate_hz, resolution_ps, "
               "capture_edges, run_stimuli, matched, capture_only, run_only, outside_capture, "
               "both_answered, both_lost, lost_only_irqloop, lost_only_analyzer, not_compared, "
               "offset_ns, drift_ppm, coalesce(diff_min_ns, 0), coalesce(diff_median_ns, 0), "
               "coalesce(diff_p99_ns, 0), coalesce(diff_max_ns, 0) FROM verifications "
               "WHERE run_id = ? ORDER BY idx");
        q.bind(1, run_id);
        while (q.executeStep()) {
            verification v;
            v.run_id = run_id;
            int k = 0;
            v.idx = q.getColumn(k++).getInt64();
            v.unix_ns = q.getColumn(k++).getInt64();
            v.capture = q.getColumn(k++).getString();
            v.stim = q.getColumn(k++).getString();
            v.resp = q.getColumn(k++).getString();
            v.samplerate_hz = q.getColumn(k++).getDouble();
            auto& f = v.figures;
            f.resolution_ps = q.getColumn(k++).getInt64();
            for (auto* x : {&f.capture_edges, &f.run_stimuli, &f.matched, &f.capture_only,
                            &f.run_only, &f.outside_capture, &f.both_answered, &f.both_lost,
                            &f.lost_only_irqloop, &f.lost_only_analyzer, &f.not_compared})
                *x = static_cast<std::size_t>(q.getColumn(k++).getInt64());
            f.offset_ns = q.getColumn(k++).getDouble();
            f.drift_ppm = q.getColumn(k++).getDouble();
            for (auto* x : {&f.diff_min_ns, &f.diff_median_ns, &f.diff_p99_ns, &f.diff_max_ns})
                *x = q.getColumn(k++).getInt64();
            out.push_back(std::move(v));
        }
        SQLite::Statement o(d, "SELECT idx, seq, latency_ns, bracket_ns, analyzer_ns FROM "
                               "verification_outside WHERE run_id = ? ORDER BY idx, seq");
        o.bind(1, run_id);
        while (o.executeStep())
            for (auto& v : out)
                if (v.idx == o.getColumn(0).getInt64())
                    v.figures.outside.push_back(
                        {static_cast<std::uint64_t>(o.getColumn(1).getInt64()),
                         o.getColumn(2).getInt64(), o.getColumn(3).getInt64(),
                         o.getColumn(4).getInt64()});
    } catch (const SQLite::Exception& e) {
        throw error("read the verifications of run " + std::to_string(run_id) + " in '" + path +
                        "'",
                    e.what(), "is the file damaged?", exit_failure);
    }
    return out;
}

} // namespace irqloop::analysis
