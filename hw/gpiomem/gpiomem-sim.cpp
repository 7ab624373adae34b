// SPDX-License-Identifier: MIT
#include "gpiomem-sim.hpp"

namespace irqloop::hw
{

namespace
{

using namespace bcm_gpio;

class sim_regs final : public gpiomem_regs
{
public:
    explicit sim_regs(std::shared_ptr<gpiomem_sim> sim) : sim_(std::move(sim)) {}
    std::uint32_t read(std::uint32_t offset) noexcept override { return sim_->read(offset); }
    void write(std::uint32_t offset, std::uint32_t value) noexcept override
    {
        sim_->write(offset, value);
    }
    std::size_t size() const noexcept override { return gpiomem_soc_of(sim_->soc()).map_size; }
    const char* method() const noexcept override { return "sim"; }
    std::string where() const override
    {
        return std::string("sim=") + gpiomem_soc_of(sim_->soc()).name;
    }

private:
    std::shared_ptr<gpiomem_sim> sim_;
};

} // namespace

gpiomem_sim::gpiomem_sim(gpiomem_soc soc) : soc_(soc), lines_(gpiomem_soc_of(soc).lines) {}

bool gpiomem_sim::is_output(unsigned line) const noexcept
{
    if (line >= lines_)
        return false;
    if (soc_ == gpiomem_soc::rp1)
        return (output_[0].load() >> line) & 1;
    return ((fsel_[line / 10].load() >> ((line % 10) * 3)) & 7) == 1;
}

void gpiomem_sim::set_output(unsigned line, bool output) noexcept
{
    if (line >= lines_)
        return;
    if (soc_ == gpiomem_soc::rp1) {
        if (output)
            output_[0].fetch_or(1u << line);
        else
            output_[0].fetch_and(~(1u << line));
        return;
    }
    const unsigned shift = (line % 10) * 3;
    auto& reg = fsel_[line / 10];
    std::uint32_t v = reg.load();
    while (!reg.compare_exchange_weak(v, (v & ~(7u << shift)) | ((output ? 1u : 0u) << shift))) {
    }
}

bool gpiomem_sim::latch(unsigned line) const noexcept
{
    return line < lines_ && ((latch_[line / 32].load() >> (line % 32)) & 1);
}

bool gpiomem_sim::level(unsigned line) const noexcept
{
    if (line >= lines_)
        return false;
    if (is_output(line))
        return latch(line);
    int from = jumper_from_.load(), to = jumper_to_.load();
    if (to == static_cast<int>(line) && from >= 0 && from != to)
        return level(static_cast<unsigned>(from));
    return (outside_[line / 32].load() >> (line % 32)) & 1;
}

void gpiomem_sim::far_drive(unsigned line, bool high) noexcept
{
    if (line >= lines_)
        return;
    if (high)
        outside_[line / 32].fetch_or(1u << (line % 32));
    else
        outside_[line / 32].fetch_and(~(1u << (line % 32)));
}

void gpiomem_sim::set_jumper(unsigned from, unsigned to) noexcept
{
    jumper_from_.store(static_cast<int>(from));
    jumper_to_.store(static_cast<int>(to));
}

std::uint32_t gpiomem_sim::bank_level(unsigned bank) const noexcept
{
    std::uint32_t v = 0;
    for (unsigned i = 0; i < 32 && bank * 32 + i < lines_; ++i)
        if (level(bank * 32 + i))
            v |= 1u << i;
    return v;
}

std::uint32_t gpiomem_sim::bcm_read(std::uint32_t offset, bool& known) noexcept
{
    known = true;
    if (offset >= gpfsel0 && offset < gpfsel0 + 4 * fsel_.size())
        return fsel_[(offset - gpfsel0) / 4].load();
    if (offset == gpset0 || offset == gpset0 + 4 || offset == gpclr0 || offset == gpclr0 + 4)
        return 0; // write-only
    if (offset == gplev0 || offset == gplev0 + 4)
        return bank_level((offset - gplev0) / 4);
    known = false;
    return 0;
}

bool gpiomem_sim::bcm_write(std::uint32_t offset, std::uint32_t value) noexcept
{
    if (offset >= gpfsel0 && offset < gpfsel0 + 4 * fsel_.size()) {
        fsel_[(offset - gpfsel0) / 4].store(value);
        return true;
    }
    if (offset == gpset0 || offset == gpset0 + 4) {
        latch_[(offset - gpset0) / 4].fetch_or(value);
        return true;
    }
    if (offset == gpclr0 || offset == gpclr0 + 4) {
        latch_[(offset - gpclr0) / 4].fetch_and(~value);
        return true;
    }
    return false; // GPLEV is read only; everything else is not modelled
}

std::uint32_t gpiomem_sim::rp1_read(std::uint32_t offset, bool& known) noexcept
{
    known = true;
    if (offset >= rp1_rio::base && offset < rp1_rio::base + 0x4000) {
        const std::uint32_t reg = (offset - rp1_rio::base) & 0xfff; // aliases read the register
        if (reg == rp1_rio::out)
            return latch_[0].load();
        if (reg == rp1_rio::oe)
            return output_[0].load();
        if (reg == rp1_rio::sync_in)
            return bank_level(0);
    }
    known = false;
    return 0;
}

bool gpiomem_sim::rp1_write(std::uint32_t offset, std::uint32_t value) noexcept
{
    if (offset < rp1_rio::base || offset >= rp1_rio::base + 0x4000)
        return false;
    const std::uint32_t alias = (offset - rp1_rio::base) & 0x3000;
    const std::uint32_t reg = (offset - rp1_rio::base) & 0xfff;
    std::atomic<std::uint32_t>* target = nullptr;
    if (reg == rp1_rio::out)
        target = &latch_[0];
    else if (reg == rp1_rio::oe)
        target = &output_[0];
    else
        return false; // SYNC_IN is read only
    value &= (1u << lines_) - 1;
    switch (alias) {
    case 0:
        target->store(value);
        break;
    case rp1_rio::alias_xor:
        target->fetch_xor(value);
        break;
    case rp1_rio::alias_set:
        target->fetch_or(value);
        break;
    default:
        target->fetch_and(~value);
        break;
    }
    return true;
}

std::uint32_t gpiomem_sim::read(std::uint32_t offset) noexcept
{
    reads_.fetch_add(1, std::memory_order_relaxed);
    bool known = false;
    std::uint32_t v = soc_ == gpiomem_soc::rp1 ? rp1_read(offset, known) : bcm_read(offset, known);
    if (!known) {
        stray_reads_.fetch_add(1);
        last_stray_.store(offset);
    }
    return v;
}

void gpiomem_sim::write(std::uint32_t offset, std::uint32_t value) noexcept
{
    writes_.fetch_add(1, std::memory_order_relaxed);
    bool known = soc_ == gpiomem_soc::rp1 ? rp1_write(offset, value) : bcm_write(offset, value);
    if (!known) {
        stray_writes_.fetch_add(1);
        last_stray_.store(offset);
    }
}

std::unique_ptr<gpiomem_regs> make_gpiomem_sim_regs(std::shared_ptr<gpiomem_sim> sim)
{
    return std::make_unique<sim_regs>(std::move(sim));
}

} // namespace irqloop::hw
