// SPDX-License-Identifier: MIT
#include "gpiomem-lines.hpp"
#include "cycle-clock.hpp"

#include "error.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>

namespace irqloop::hw
{

namespace
{

/** Median over 20 batches of 100 calls of @p read, in ns per call. */
template <typename F> double median_cost_ns(F read)
{
    constexpr int batches = 20, reads = 100;
    std::array<double, batches> per_read{};
    for (auto& cost : per_read) {
        auto t0 = hw::monotonic_ns();
        for (int i = 0; i < reads; ++i)
            read();
        cost = static_cast<double>(hw::monotonic_ns() - t0) / reads;
    }
    std::nth_element(per_read.begin(), per_read.begin() + batches / 2, per_read.end());
    return per_read[batches / 2];
}

std::string hex(std::uint32_t v)
{
    char b[16];
    std::snprintf(b, sizeof b, "0x%x", v);
    return b;
}

} // namespace

gpiomem_lines::gpiomem_lines(std::unique_ptr<gpiomem_regs> regs, gpiomem_wiring w,
                             std::unique_ptr<gpiomem_claim> claim)
    : lines(w.answers), regs_(std::move(regs)), w_(w), claim_(std::move(claim))
{
    const auto& soc = gpiomem_soc_of(w_.soc);
    const std::string ctx = std::string("open gpiomem on ") + soc.name;
    for (auto [what, line] : {std::pair{"out", w_.out}, std::pair{"in", w_.in}})
        if (line >= soc.lines)
            throw irqloop::error(
                ctx,
                std::string(what) + "=" + std::to_string(line) + " is not in the " + soc.name +
                    " GPIO block, whose lines are 0.." + std::to_string(soc.lines - 1),
                "give the BCM GPIO number, as gpioinfo lists the lines");
    if (regs_->size() < soc.map_size)
        throw irqloop::error(ctx, regs_->where() + " maps " + std::to_string(regs_->size()) +
                                      " bytes, the registers need " + std::to_string(soc.map_size));
    set_ = gpiomem_set_reg(w_.soc, w_.out);
    clear_ = gpiomem_clear_reg(w_.soc, w_.out);
    out_level_ = gpiomem_level_reg(w_.soc, w_.out);
    in_level_ = gpiomem_level_reg(w_.soc, w_.in);
    check_block();
    drive(false);
    measure();
}

gpiomem_lines::~gpiomem_lines() = default;

void gpiomem_lines::check_block() const
{
    const auto& soc = gpiomem_soc_of(w_.soc);
    auto is_output = [&](unsigned line) -> bool {
        if (w_.soc == gpiomem_soc::rp1)
            return (regs_->read(rp1_rio::base + rp1_rio::oe) >> line) & 1;
        return (regs_->read(gpiomem_bcm_fsel_offset(line)) >> ((line % 10) * 3) & 7) == 1;
    };
    const std::string ctx = std::string("open gpiomem ") + regs_->where() + " as " + soc.name;
    const std::string hint =
        "the mapped registers are not the block the kernel configured for us: check soc= and "
        "dev= (gpiodetect names the chip, /proc/device-tree/compatible the SoC)";
    if (!is_output(w_.out))
        throw irqloop::error(ctx, "line " + std::to_string(w_.out) + " does not show as an output",
                             hint);
    if (w_.in != w_.out && is_output(w_.in))
        throw irqloop::error(
            ctx, "line " + std::to_string(w_.in) + " shows as an output, not an input", hint);
}

void gpiomem_lines::measure()
{
    poll_cost_ns_ = median_cost_ns([this] { (void)sense(); });
    if (claim_) {
        int failed = 0;
        kernel_poll_cost_ns_ = median_cost_ns([&] { failed |= claim_->kernel_read() < 0; });
        if (failed)
            throw irqloop::error("open gpiomem: read in=" + claim_->in_name() +
                                     " through the kernel",
                                 "the GPIO request failed");
    }
}

void gpiomem_lines::drive(bool high) noexcept
{
    const auto& r = high != w_.active_low ? set_ : clear_;
    regs_->write(r.offset, r.mask);
    // Read back from the same block, then wait for that read: the store has reached it.
    (void)regs_->read(out_level_.offset);
    gpiomem_complete();
}

int gpiomem_lines::sense() noexcept
{
    return ((regs_->read(in_level_.offset) & in_level_.mask) != 0) != w_.active_low;
}

void gpiomem_lines::stop() noexcept
{
    drive(false);
    if (claim_)
        claim_->release_low();
}

std::string gpiomem_lines::describe() const
{
    std::string d = "gpiomem:" + regs_->where();
    if (claim_)
        d += ",soc=" + std::string(gpiomem_soc_of(w_.soc).name) + ",out=" + claim_->out_name() +
             ",in=" + claim_->in_name();
    else
        d += ",out=" + std::to_string(w_.out) + ",in=" + std::to_string(w_.in);
    if (w_.active_low)
        d += ",active_low=1";
    return d + w_.answers.keys_unlike(far_end{});
}

std::vector<metadata_item> gpiomem_lines::metadata() const
{
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.1f", poll_cost_ns_);
    std::vector<metadata_item> m = {
        {"gpiomem.soc", gpiomem_soc_of(w_.soc).name},
        {"gpiomem.method", regs_->method()},
        {"gpiomem.poll_cost_ns", cost},
        {"gpiomem.level_reg", hex(in_level_.offset) + " bit " + hex(in_level_.mask)},
    };
    if (claim_) {
        std::snprintf(cost, sizeof cost, "%.1f", kernel_poll_cost_ns_);
        m.push_back({"gpiomem.kernel_poll_cost_ns", cost});
        for (auto& item : claim_->metadata())
            m.push_back(std::move(item));
    }
    return m;
}

} // namespace irqloop::hw
