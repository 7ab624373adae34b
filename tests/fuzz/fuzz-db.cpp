// SPDX-License-Identifier: MIT
// libFuzzer target: a mutated results file, opened and read by the reading commands in this
// process (report, its run list, worst, compare, plot scripts, JSON and CSV export, raw
// samples included). A damaged file may be refused with an irqloop::error of any status;
// it must never crash, hang or end in an exception of another kind.
#include "compare-command.hpp"
#include "error.hpp"
#include "export-command.hpp"
#include "plot-command.hpp"
#include "report-command.hpp"
#include "worst-command.hpp"

#include <boost/program_options/errors.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fcntl.h>
#include <initializer_list>
#include <string>
#include <unistd.h>
#include <vector>

using namespace irqloop;

namespace
{

std::string dir, file;

void remove_file()
{
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
        ::unlink((file + suffix).c_str());
}

void read_with(int (*main)(int, char**), std::initializer_list<const char*> words)
{
    std::vector<std::string> args(words.begin(), words.end());
    args.push_back("--db");
    args.push_back(file);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    try {
        main(static_cast<int>(args.size()), argv.data());
    } catch (const error&) {
        // A refused or unreadable file: what the command must do with it.
    } catch (const boost::program_options::error& e) {
        std::fprintf(stderr, "fuzz-db: the fixed arguments were refused: %s\n", e.what());
        std::abort();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz-db: %s: a non-irqloop exception: %s\n", args[0].c_str(),
                     e.what());
        std::abort(); // run_main would print "this is a bug"
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    set_program_name("irqloop");
    const int null = ::open("/dev/null", O_WRONLY); // the reports themselves go nowhere
    if (null < 0 || ::dup2(null, STDOUT_FILENO) < 0)
        std::abort();
    ::close(null);
    char tmpl[] = "/tmp/irqloop-fuzz-db-XXXXXX";
    if (!::mkdtemp(tmpl))
        std::abort();
    dir = tmpl;
    file = dir + "/input.db";
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    remove_file();
    FILE* f = std::fopen(file.c_str(), "wb");
    if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
        std::abort();
    read_with(logger::report_command, {"report", "--run", "1"});
    read_with(logger::report_command, {"report", "--list"});
    read_with(logger::worst_command, {"worst", "--top", "5"});
    read_with(logger::compare_command, {"compare", "--by", "label"});
    read_with(logger::export_command, {"export", "--format", "json"});
    read_with(logger::export_command, {"export", "--format", "csv", "--what", "raw"});
    read_with(logger::plot_command, {"plot", "--kind", "timeline", "--script"});
    read_with(logger::plot_command, {"plot", "--kind", "cdf", "--script"});
    remove_file();
    return 0;
}
