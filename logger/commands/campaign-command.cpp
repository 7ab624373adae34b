// SPDX-License-Identifier: MIT
// `irqloop campaign FILE.ini`: phases of `irqloop run` in order into one database, then the
// compare table; a re-run skips the phases already complete.
#include "campaign-command.hpp"
#include "cli-main.hpp"
#include "compare-command.hpp"
#include "error.hpp"
#include "gates.hpp"
#include "read.hpp"
#include "run-command.hpp"

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace po = boost::program_options;

namespace irqloop::logger
{

namespace
{

// Gate the phase's newest run with @p label: the lines, the outcome stored with the run.
// Returns false when a limit failed; @p refused takes the refusal of a --p-exceed (p-exceed
// key) whose tail fit's checks do not allow the claim.
bool gate_phase(const std::string& db, const std::string& label, const gate_limits& gates,
                std::optional<error>& refused)
{
    db::catalog cat({db});
    db::run_selector sel;
    sel.labels.push_back(label);
    sel.last = true;
    const auto* r = cat.select(sel).front();
    const auto g = evaluate_gates(cat, *r, gates);
    std::fputs(format_gate_lines(g).c_str(), stdout);
    std::printf("campaign: phase '%s' (run %lld) gates: %s\n", message_text(label).c_str(),
                static_cast<long long>(r->id),
                g.refused() ? "NOT CLAIMED"
                : g.pass()  ? "PASS"
                            : "FAIL");
    std::fflush(stdout);
    store_gate_outcome(db, r->id, g);
    if (!refused) {
        try {
            throw_if_refused(g, "phase '" + label + "' (run " + std::to_string(r->id) + ")");
        } catch (const error& e) {
            refused = e;
        }
    }
    return g.pass();
}

// A phase is complete when its label has a complete run in the file.
bool complete_in(const std::string& db, const std::string& label, std::int64_t& id)
{
    if (!std::filesystem::exists(db))
        return false;
    db::catalog c({db});
    for (const auto& r : c.runs())
        if (r.meta.label == label && r.status == db::run_status::complete) {
            id = r.id;
            return true;
        }
    return false;
}

// The stored command line of a phase: the `irqloop run` it stands for, quoted where needed.
std::string phase_command_line(const run_keys& keys)
{
    std::string s = "irqloop run";
    for (const auto& [k, v] : keys)
        s += " --" + k + (v.empty() ? "" : " " + shell_word(v));
    return s;
}

// Phase @p p's gates and its run request, or the refusal naming the file and the phase.
void prepare_phase(campaign_phase& p, const std::string& file, const std::string& db)
{
    p.gates = parse_gate_limits(p.gate_text, "[" + p.section + "] ");
    run_keys keys = {{"db", db}};
    bool has_label = false;
    for (const auto& [k, v] : p.keys) {
        has_label |= k == "label";
        if (k == "label")
            p.label = v;
        keys.emplace_back(k, v);
    }
    if (!has_label)
        keys.emplace_back("label", p.label);
    const std::string where = "campaign: " + file + ": phase [" + p.section + "]";
    try {
        p.request = parse_run_keys(keys, phase_command_line(keys));
    } catch (const error& e) {
        throw error(where + ": " + e.what_failed(), e.why(), e.hint(), e.status());
    } catch (const po::error& e) {
        throw error(where, e.what(),
                    "a phase's keys are irqloop run's options without the dashes "
                    "(irqloop run --help)");
    }
}

// One key of the file: the top-level db, or a phase's run option or gate limit.
void take_key(campaign_request& req, const std::string& key, const std::string& value)
{
    const std::string& file = req.file;
    auto& phases = req.phases;
    const auto dot = key.find('.');
    if (dot == std::string::npos) {
        if (key != "db")
            throw error("campaign: " + file, "unknown top-level key '" + key + "'",
                        "only db = FILE goes above the first [section]");
        req.db = value;
        return;
    }
    const std::string section = key.substr(0, dot), k = key.substr(dot + 1);
    if (phases.empty() || phases.back().section != section) {
        for (const auto& p : phases)
            if (p.section == section)
                throw error("campaign: " + file, "section [" + section + "] appears twice",
                            "give each phase one section");
        phases.push_back({section, {}, {}, {}, section, {}});
    }
    if (k == "db" || k == "no-db" || k == "help")
        throw error("campaign: " + file, "key '" + k + "' in [" + section + "]",
                    "phases share the campaign's db; set it at the top");
    if (k.rfind("fail-", 0) == 0)
        throw error("campaign: " + file, "key '" + k + "' in [" + section + "]",
                    "a phase's gates take check's keys: max, p, p-exceed, lost, overflows");
    auto& gt = phases.back().gate_text;
    if (k == "max")
        gt.max = value;
    else if (k == "p")
        gt.p.push_back(value);
    else if (k == "p-exceed")
        gt.p_exceed.push_back(value);
    else if (k == "lost")
        gt.lost = value;
    else if (k == "overflows")
        gt.overflows = value;
    else
        phases.back().keys.emplace_back(k, value);
}

// The file's keys into @p req, then every phase into its run request.
constexpr std::uintmax_t campaign_file_max_bytes = 1u << 20;

void read_campaign_file(campaign_request& req, const std::string& db_override)
{
    // Only a regular file of a sane size is read: parse() must end (a FIFO, /dev/zero).
    std::error_code ec;
    const auto st = std::filesystem::status(req.file, ec);
    if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
        throw error("campaign: open '" + req.file + "'", "not a regular file",
                    "give the campaign's .ini file");
    if (!ec && std::filesystem::is_regular_file(st) &&
        std::filesystem::file_size(req.file, ec) > campaign_file_max_bytes)
        throw error("campaign: open '" + req.file + "'", "larger than 1 MiB",
                    "a campaign file is a short .ini file: give that");
    std::ifstream in(req.file);
    if (!in)
        throw error("campaign: open '" + req.file + "'", "cannot read it", "check the path");
    po::options_description none;
    const auto parsed = po::parse_config_file(in, none, true);
    for (const auto& o : parsed.options)
        take_key(req, o.string_key, o.value.empty() ? "" : o.value.front());
    if (!db_override.empty())
        req.db = db_override;
    if (req.phases.empty())
        throw error("campaign: " + req.file, "no [section]", "give one section per phase");
    // Every phase is parsed into its request before the first one runs, through run's own
    // option table and checks: a typo in phase 5 fails now, not at 3 am, and no file is made.
    for (auto& p : req.phases)
        prepare_phase(p, req.file, req.db);
}

const char* const campaign_about =
    "\nThe file: a top-level 'db = night.db', then one section per phase; its keys are "
    "'irqloop run'\noptions without the dashes (duration, samples, hw, load-cmd, "
    "target, "
    "threshold, ...).\nThe section name is the phase's --label unless it sets label.\n"
    "Gates: a phase's max, p, p-exceed (both repeatable), lost and overflows keys are\n"
    "irqloop check's limits, applied to the phase's run when it ends (or is found\n"
    "complete); the outcome is stored with the run and shown in the compare table, and\n"
    "the campaign exits 3 when a limit of any phase failed (the phases after it still\n"
    "run), 2 when a phase's p-exceed has a tail fit whose checks do not allow the claim.\n"
    "Every phase is parsed and checked (its keys, their values, the hw spec's keys)\n"
    "before the first one runs: a bad one is refused with exit status 2, naming the\n"
    "phase, and no file is made or touched.\n"
    "Docs: docs/commands/campaign.md\n";

} // namespace

parsed<campaign_request> parse_campaign(int argc, char** argv)
{
    campaign_request req;
    std::string db_override;
    po::options_description d(
        "irqloop campaign: run the phases of FILE.ini in order into one database, "
        "then print the compare table by label. A re-run skips the phases already "
        "complete (a complete run with the phase's label in the file) and resumes "
        "with the next.\n\nusage: irqloop campaign FILE.ini [--db F]\n\noptions");
    // clang-format off
    d.add_options()
        ("help,h", "show this help")
        ("file", po::value(&req.file), "the campaign file (Boost.Program_options config syntax, one [section] per phase)")
        ("db", po::value(&db_override), "the results file (overrides the file's top-level db =)");
    // clang-format on
    po::positional_options_description pos;
    pos.add("file", 1);
    auto vm = base::parse_options(argc, argv, d, pos);
    if (vm.count("help")) {
        std::ostringstream o;
        o << d << campaign_about;
        return parsed<campaign_request>::help(o.str());
    }
    po::notify(vm);
    if (req.file.empty())
        throw error("campaign", "no campaign file given", "irqloop campaign FILE.ini");
    read_campaign_file(req, db_override);
    return parsed<campaign_request>::of(std::move(req));
}

campaign_outcome execute_campaign(campaign_request& req)
{
    campaign_outcome out;
    const auto& db = req.db;
    auto& phases = req.phases;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        auto& p = phases[i];
        const std::string& label = p.label;
        std::int64_t id = 0;
        if (complete_in(db, label, id)) {
            std::printf("campaign: phase %zu/%zu '%s': complete (run %lld), skipped\n", i + 1,
                        phases.size(), message_text(label).c_str(), static_cast<long long>(id));
            if (!p.gates.empty() && !gate_phase(db, label, p.gates, out.refused))
                out.failed.push_back(label);
            continue;
        }
        std::printf("campaign: phase %zu/%zu '%s'\n", i + 1, phases.size(),
                    message_text(label).c_str());
        std::fflush(stdout);
        const int rc = present_run(execute_run_request(p.request), p.request);
        if (rc != 0) {
            std::fprintf(
                stderr,
                "irqloop: campaign: phase '%s' ended with status %d; a re-run resumes with it\n",
                message_text(label).c_str(), rc);
            out.status = rc;
            return out;
        }
        if (!p.gates.empty() && !gate_phase(db, label, p.gates, out.refused))
            out.failed.push_back(label);
    }
    return out;
}

int present_campaign(const campaign_outcome& o, const campaign_request& req)
{
    if (o.status != 0)
        return o.status;
    std::printf("\n");
    std::fflush(stdout);
    // `irqloop compare --by label --db DB`, as a request (the default preset: us, 3 decimals).
    compare_request table;
    table.sel.dbs = {req.db};
    table.by_label = true;
    const int rc = present_compare(execute_compare(table), table);
    if (rc != 0)
        return rc;
    // A phase's --p-exceed that its tail fit cannot claim: no verdict, refused (2).
    if (o.refused)
        throw *o.refused;
    if (o.failed.empty())
        return rc;
    std::string names;
    for (const auto& l : o.failed)
        names += (names.empty() ? "'" : ", '") + l + "'";
    std::printf("campaign: FAIL: the gates of %zu of %zu phases failed (%s)\n", o.failed.size(),
                req.phases.size(), names.c_str());
    std::fflush(stdout);
    return exit_gate_failed;
}

int campaign_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_campaign, execute_campaign, present_campaign, std::cout);
}

} // namespace irqloop::logger
