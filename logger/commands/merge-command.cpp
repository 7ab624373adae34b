// SPDX-License-Identifier: MIT
// irqloop merge: copy the runs of other irqloop files into one (db::merge_into does the work).
#include "cli-main.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "merge.hpp"
#include "selection.hpp"
#include "store.hpp"

#include <boost/program_options.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <optional>
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

} // namespace

int merge_command(int argc, char** argv)
{
    namespace po = boost::program_options;
    std::string dst_path = "irqloop.db";
    std::vector<std::string> sources;
    po::options_description desc("options");
    auto add = desc.add_options();
    add("help,h", "show this help");
    add("db", po::value(&dst_path)->default_value(dst_path),
        "destination file; created (with the schema) if missing");
    add("from", po::value(&sources)->multitoken(),
        "source file(s), also accepted as positional arguments; never written");
    po::positional_options_description pos;
    pos.add("from", -1);
    auto vm = base::parse_options(argc, argv, desc, pos);
    if (vm.count("help")) {
        print_command_help(
            "irqloop merge [--db irqloop.db] SOURCE.db ...",
            "Copy every finished run of the SOURCE files, with all its rows (metadata,\n"
            "intervals, histogram, worst, exceedances, events, raw samples), into the --db\n"
            "file. Runs are matched by uuid: a run the destination already holds is skipped,\n"
            "so merging the same file twice copies nothing new. Copied runs get fresh ids.\n"
            "Runs still marked running in a source are skipped; merge again once their\n"
            "logger has finished. Each source is merged in one transaction; one line per\n"
            "source reports what was copied and skipped.",
            desc);
        return 0;
    }
    po::notify(vm);
    if (sources.empty())
        throw error("merge", "no source file given", "name the file(s) to merge from");
    if (dst_path.empty())
        throw error("bad value for --db", "an empty path",
                    "give the destination file, e.g. --db irqloop.db");
    for (const auto& src : sources)
        if (src.empty())
            throw error("merge", "an empty source path", "name the file(s) to merge from");
    base::options_parsed();

    // Every source is validated before the destination is opened (or created), so a mistyped
    // or foreign source leaves the destination exactly as it was.
    for (const auto& src : sources) {
        if (same_file(src, dst_path))
            throw error("merge '" + src + "' into '" + dst_path + "'", "they are the same file",
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

    // A destination this merge creates is removed again when the merge fails: a refusal
    // leaves no file behind (one it did not create keeps what committed before the failure).
    std::error_code ec;
    const bool created = !std::filesystem::exists(dst_path, ec);
    struct remove_if_failed {
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
    } cleanup{dst_path, created};
    std::optional<db::store> opened;
    opened.emplace(dst_path, db::store::mode::read_write);
    db::store& dst = *opened;
    std::vector<db::merge_result> results;
    for (const auto& src : sources)
        results.push_back(db::merge_into(dst, src));
    opened.reset();
    cleanup.armed = false;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto& src = sources[i];
        const auto& r = results[i];
        const auto skipped = r.already_present + r.still_running;
        std::printf("%s: copied %llu %s, skipped %llu", src.c_str(),
                    static_cast<unsigned long long>(r.copied), runs_word(r.copied),
                    static_cast<unsigned long long>(skipped));
        if (skipped) {
            std::printf(" (");
            if (r.already_present)
                std::printf("%llu already in %s%s",
                            static_cast<unsigned long long>(r.already_present), dst_path.c_str(),
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

} // namespace irqloop::logger
