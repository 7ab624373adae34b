// SPDX-License-Identifier: MIT
// The gpiomem backend on a real GPIO block (the raspi3b testbed, or a Raspberry Pi):
//
//   irqloop-bench-gpiomem --hw SPEC [--reads N]   poll cost: libgpiod ioctl vs register load
//   irqloop-bench-gpiomem --hw SPEC --check       drive through the registers, read back
//                                                 through the registers and through libgpiod
//   irqloop-bench-gpiomem --hold CHIP:LINE --consumer NAME --seconds S
//                                                 hold a line as another program would
//
// SPEC is a gpiomem spec whose in line is the driven line (out=17,in=17) for --check. The poll
// figure is the median of 9 rounds of N reads of the sensed line each way, as a ratio: under
// QEMU's TCG only the ratio means something. Exit status: 0, 1 when a check fails, 2 on bad
// input (the backend's own refusals).
#include "error.hpp"
#include "registry.hpp"

#if IRQLOOP_HAVE_GPIOD
#include "gpiomem/gpiomem-lines.hpp"

#include <gpiod.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace
{

using clock_type = std::chrono::steady_clock;

#if IRQLOOP_HAVE_GPIOD
using namespace irqloop;
using namespace irqloop::hw;

template <typename F> double median_ns_per_read(long reads, F read)
{
    std::array<double, 9> rounds{};
    for (auto& r : rounds) {
        auto t0 = clock_type::now();
        for (long i = 0; i < reads; ++i)
            read();
        r = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() /
            static_cast<double>(reads);
    }
    std::nth_element(rounds.begin(), rounds.begin() + 4, rounds.end());
    return rounds[4];
}

int check(gpiomem_lines& l)
{
    // What the kernel says of the line while we hold it.
    const std::string chip = l.claim() ? l.claim()->out_name() : "";
    int failed = 0;
    for (int v : {1, 0, 1, 0}) {
        l.drive(v != 0);
        int regs = l.sense();
        int kernel = l.claim() ? l.claim()->kernel_read() : -1;
        std::printf("drive %d through the registers: registers read %d, libgpiod reads %d\n", v,
                    regs, kernel);
        failed |= regs != v || kernel != v;
    }
    std::printf("check: %s\n", failed ? "FAILED" : "registers and libgpiod agree");
    return failed ? 1 : 0;
}

int line_info(const std::string& path, unsigned offset)
{
    gpiod_chip* c = gpiod_chip_open(path.c_str());
    if (!c)
        return 1;
    gpiod_line_info* info = gpiod_chip_get_line_info(c, offset);
    if (info) {
        const char* who = gpiod_line_info_get_consumer(info);
        std::printf("kernel: %s line %u: %s, consumer '%s'\n", path.c_str(), offset,
                    gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT ? "output"
                                                                                       : "input",
                    who ? who : "");
        gpiod_line_info_free(info);
    }
    gpiod_chip_close(c);
    return info ? 0 : 1;
}

int hold(const std::string& where, const std::string& consumer, int seconds)
{
    auto colon = where.rfind(':');
    if (colon == std::string::npos)
        throw error("--hold", "'" + where + "' is not CHIP:LINE", "e.g. /dev/gpiochip0:22");
    std::string path = where.substr(0, colon);
    unsigned offset = static_cast<unsigned>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
    gpiod_chip* c = gpiod_chip_open(path.c_str());
    if (!c)
        throw_from_errno(errno, "--hold: open " + path);
    gpiod_line_settings* s = gpiod_line_settings_new();
    gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
    gpiod_line_config* lc = gpiod_line_config_new();
    gpiod_line_config_add_line_settings(lc, &offset, 1, s);
    gpiod_request_config* rc = gpiod_request_config_new();
    gpiod_request_config_set_consumer(rc, consumer.c_str());
    gpiod_line_request* r = gpiod_chip_request_lines(c, rc, lc);
    if (!r)
        throw_from_errno(errno, "--hold: request " + where);
    std::printf("holding %s as '%s' for %d s\n", where.c_str(), consumer.c_str(), seconds);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    gpiod_line_request_release(r);
    gpiod_request_config_free(rc);
    gpiod_line_config_free(lc);
    gpiod_line_settings_free(s);
    gpiod_chip_close(c);
    return 0;
}

int run(int argc, char** argv)
{
    std::string hw, hold_line, consumer = "someone-else";
    long reads = 20000;
    int seconds = 30;
    bool do_check = false;
    for (int i = 1; i < argc; ++i) {
        auto arg = [&](const char* name) {
            if (std::strcmp(argv[i], name) != 0)
                return false;
            if (i + 1 >= argc)
                throw error(name, "needs a value");
            return true;
        };
        if (arg("--hw"))
            hw = argv[++i];
        else if (arg("--reads"))
            reads = std::max(1L, std::atol(argv[++i]));
        else if (arg("--hold"))
            hold_line = argv[++i];
        else if (arg("--consumer"))
            consumer = argv[++i];
        else if (arg("--seconds"))
            seconds = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--check") == 0)
            do_check = true;
        else
            throw error("irqloop-bench-gpiomem", std::string("unknown argument '") + argv[i] + "'",
                        "see the comment at the top of tests/bench/bench-gpiomem.cpp");
    }
    if (!hold_line.empty())
        return hold(hold_line, consumer, seconds);
    if (hw.empty())
        throw error("irqloop-bench-gpiomem", "--hw is required", "e.g. --hw gpiomem:out=17,in=27");

    auto pair = open_lines(hw, role::logger);
    auto* l = dynamic_cast<gpiomem_lines*>(pair.get());
    if (!l)
        throw error("irqloop-bench-gpiomem", "'" + hw + "' is not a gpiomem spec");
    std::printf("%s\n", l->describe().c_str());
    if (do_check) {
        for (const auto& m : l->metadata())
            if (m.key == "gpiomem.out") {
                // "gpiochip0:17 on /dev/gpiochip0 [...]": the kernel's view of the line.
                auto on = m.value.find(" on ");
                auto path = m.value.substr(on + 4, m.value.find(' ', on + 4) - on - 4);
                line_info(path, l->wiring().out);
            }
        int rc = check(*l);
        l->stop();
        return rc;
    }
    if (!l->claim())
        throw error("irqloop-bench-gpiomem", "the simulator has no kernel read to compare with");
    int sink = 0;
    double regs = median_ns_per_read(reads, [&] { sink += l->sense(); });
    double kernel = median_ns_per_read(reads, [&] { sink += l->claim()->kernel_read(); });
    std::printf("poll cost over %ld reads (median of 9 rounds): libgpiod %.1f ns, registers "
                "%.1f ns, ratio %.1f (checksum %d)\n",
                reads, kernel, regs, kernel / regs, sink & 1);
    l->stop();
    return 0;
}
#endif

} // namespace

int main(int argc, char** argv)
{
#if IRQLOOP_HAVE_GPIOD
    try {
        return run(argc, argv);
    } catch (const irqloop::error& e) {
        irqloop::print_error(e);
        return e.status();
    }
#else
    (void)argc;
    (void)argv;
    std::fprintf(stderr, "irqloop-bench-gpiomem: built without libgpiod 2: no gpiomem backend\n");
    return 2;
#endif
}
