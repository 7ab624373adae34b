// SPDX-License-Identifier: MIT
// irqloop merge: copy the runs of other irqloop files into one (db::merge_into does the work).
#include "merge-command.hpp"

#include "cli-main.hpp"
#include "error.hpp"
#include "store.hpp"

#include <boost/program_options.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace irqloop::logger
{

namespace
{

bool same_file(const std::string& a, const std::string& b)
{
    struct stat sa = {}, sb = {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

const char* runs_word(std::uint64_t n)
{
    return n == 1 ? "run" : "runs";
}

/**
 * @brief Refuse @p r unless every source can be read, before the destination is opened (or
 * created): a mistyped or foreign source leaves the destination exactly as it was.
 */
void check_sources(const merge_request& r)
{
    for (const auto& src : r.sources) {
        if (same_file(src, r.dst))
            throw error("merge '" + src + "' into '" + r.dst + "'", "they are the same file",
                        "give another file to merge from");
        try {
            db::store check(src, db::store::mode::read_only);
        } catch (const error& e) {
            // A source the store refuses is a wrong argument here, whatever the store's status.
            throw error(e.what_failed(), e.why(),
                        e.hint().empty()
                            ? "check the path; merge reads the files 'irqloop run --db' writes"
                            : e.hint(),
                        exit_usage);
        }
    }
}

/** @brief Removes a destination this merge creates unless disarmed: a refusal leaves no file
 *  behind (one it did not create keeps what committed before the failure). */
struct remove_if_failed final {
    const std::string& path;
    bool armed;
    ~remove_if_failed()
    {
        if (!armed)
            return;
        std::error_code e;
        for (const auto& p : {path, path + "-wal", path + "-shm", db::store::lock_path(path)})
            std::filesystem::remove(p, e);
    }
};

} // namespace

parsed<merge_request> parse_merge(int argc, char** argv)
{
    namespace po = boost::program_options;
    merge_request r;
    po::options_description desc("options");
    auto add = desc.add_options();
    add("help,h", "show this help");
    add("db", po::value(&r.dst)->default_value(r.dst),
        "destination file; created (with the schema) if missing");
    add("from", po::value(&r.sources)->multitoken(),
        "source file(s), also accepted as positional arguments; never written");
    po::positional_options_description pos;
    pos.add("from", -1);
    auto vm = base::parse_options(argc, argv, desc, pos);
    if (vm.count("help"))
        return parsed<merge_request>::help(help_text(
            "irqloop merge [--db irqloop.db] SOURCE.db ...",
            "Copy every finished run of the SOURCE files, with all its rows (metadata,\n"
            "intervals, histogram, worst, exceedances, events, raw samples), into the --db\n"
            "file. Runs are matched by uuid: a run the destination already holds is skipped,\n"
            "so merging the same file twice copies nothing new. Copied runs get fresh ids.\n"
            "Runs still marked running in a source are skipped; merge again once their\n"
            "logger has finished. Each source is merged in one transaction; one line per\n"
            "source reports what was copied and skipped.",
            desc));
    po::notify(vm);
    if (r.sources.empty())
        throw error("merge", "no source file given", "name the file(s) to merge from");
    if (r.dst.empty())
        throw error("bad value for --db", "an empty path",
                    "give the destination file, e.g. --db irqloop.db");
    for (const auto& src : r.sources)
        if (src.empty())
            throw error("merge", "an empty source path", "name the file(s) to merge from");
    return parsed<merge_request>::of(std::move(r));
}

merge_outcome execute_merge(const merge_request& r)
{
    check_sources(r);
    std::error_code ec;
    remove_if_failed cleanup{r.dst, !std::filesystem::exists(r.dst, ec)};
    merge_outcome o;
    {
        db::store dst(r.dst, db::store::mode::read_write);
        for (const auto& src : r.sources)
            o.results.push_back(db::merge_into(dst, src));
    }
    cleanup.armed = false;
    return o;
}

int present_merge(const merge_outcome& o, const merge_request& req)
{
    for (std::size_t i = 0; i < req.sources.size(); ++i) {
        const auto& r = o.results[i];
        const auto skipped = r.already_present + r.still_running;
        std::printf("%s: copied %llu %s, skipped %llu", req.sources[i].c_str(),
                    static_cast<unsigned long long>(r.copied), runs_word(r.copied),
                    static_cast<unsigned long long>(skipped));
        if (skipped) {
            std::printf(" (");
            if (r.already_present)
                std::printf("%llu already in %s%s",
                            static_cast<unsigned long long>(r.already_present), req.dst.c_str(),
                            r.still_running ? ", " : "");
            if (r.still_running)
                std::printf("%llu still running: merge again once finished",
                            static_cast<unsigned long long>(r.still_running));
            std::printf(")");
        }
        std::printf("\n");
    }
    return 0;
}

int merge_command(int argc, char** argv)
{
    return run_steps(argc, argv, parse_merge, execute_merge, present_merge, std::cout);
}

} // namespace irqloop::logger
