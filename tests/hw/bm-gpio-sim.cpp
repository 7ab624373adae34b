// SPDX-License-Identifier: MIT
#include "bm-gpio-sim.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace irqloop::test::bm
{

namespace
{

block_sim* bm_installed_sim = nullptr;

std::uint32_t bm_bit_of(unsigned i)
{
    return std::uint32_t{1} << i;
}

} // namespace

block_sim::block_sim(std::uintptr_t base, std::uint32_t size, unsigned lines)
    : outside_(lines, false), base_(base), size_(size), last_pad_(lines, false)
{
}

std::uint32_t block_sim::read(std::uintptr_t addr)
{
    ++reads_;
    const auto offset = static_cast<std::uint32_t>(addr - base_);
    std::uint32_t value = 0;
    if (addr < base_ || addr - base_ >= size_ || offset % 4 || !on_read(offset, value)) {
        ++stray_reads_;
        last_stray_ = offset;
        value = 0;
    }
    log_.push_back({false, offset, value});
    return value;
}

void block_sim::write(std::uintptr_t addr, std::uint32_t value)
{
    ++writes_;
    const auto offset = static_cast<std::uint32_t>(addr - base_);
    log_.push_back({true, offset, value});
    if (addr < base_ || addr - base_ >= size_ || offset % 4 || !on_write(offset, value)) {
        ++stray_writes_;
        last_stray_ = offset;
        return;
    }
    settle();
}

void block_sim::far_drive(unsigned line, bool high)
{
    if (line >= outside_.size())
        return;
    outside_[line] = high;
    settle();
}

bool block_sim::pad(unsigned line) const
{
    if (line >= outside_.size())
        return false;
    return is_output(line) ? driven(line) : outside_[line];
}

void block_sim::poke(std::uint32_t offset, std::uint32_t value)
{
    on_poke(offset, value);
    // The pads a preset makes are where the test starts: no edge of its own.
    for (unsigned line = 0; line < lines(); ++line)
        last_pad_[line] = pad(line);
    on_levels();
}

void block_sim::preset_output(unsigned line, bool high)
{
    on_preset_output(line, high);
    for (unsigned l = 0; l < lines(); ++l)
        last_pad_[l] = pad(l);
    on_levels();
}

void block_sim::settle()
{
    for (unsigned line = 0; line < lines(); ++line) {
        const bool now = pad(line);
        if (now != last_pad_[line]) {
            last_pad_[line] = now;
            on_edge(line, now);
        }
    }
    on_levels();
}

std::vector<access> block_sim::take_log()
{
    std::vector<access> out;
    out.swap(log_);
    return out;
}

install_sim::install_sim(block_sim& sim)
{
    if (bm_installed_sim) {
        std::fprintf(stderr, "bm-gpio-sim: two simulators installed at once\n");
        std::abort();
    }
    bm_installed_sim = &sim;
}

install_sim::~install_sim()
{
    bm_installed_sim = nullptr;
}

namespace
{

// ---- BCM2711 -------------------------------------------------------------------------------

class bcm2711_sim final : public block_sim
{
public:
    bcm2711_sim() : block_sim(0xfe200000u, 0x100, 58) {}

    bool is_output(unsigned line) const override { return fsel(line) == 1; }
    bool latch(unsigned line) const override { return word(latch_, line); }

    std::vector<std::uint32_t> config_regs() const override
    {
        return {0x00, 0x04, 0x08, 0x0c, 0x10, 0x14, gpset0, gpset0 + 4, gpeds0, gpeds0 + 4, 0x4c,
                0x50, 0x58, 0x5c, 0x64, 0x68, 0x70, 0x74,   0x7c,       0x80,   0x88,       0x8c};
    }

    std::uint32_t peek(std::uint32_t offset) const override
    {
        if (offset < 0x18)
            return fsel_[offset / 4];
        if (offset == gpset0 || offset == gpset0 + 4) // the latches, as GPSET would set them
            return latch_[(offset - gpset0) / 4];
        if (auto* r = const_cast<bcm2711_sim*>(this)->word_reg(offset))
            return *r;
        return 0;
    }

    std::uint32_t line_bits(std::uint32_t offset, unsigned line) const override
    {
        if (offset < 0x18)
            return offset / 4 == line / 10 ? 7u << (line % 10 * 3) : 0;
        // GPSET0 0x1c and every word register after it come in pairs 12 bytes apart.
        const unsigned word = (offset - gpset0) % 12 / 4;
        return word == line / 32 ? bm_bit_of(line % 32) : 0;
    }

    void arm_foreign(unsigned line) override
    {
        set_fsel(line, 0);
        ren_[line / 32] |= bm_bit_of(line % 32);
        fen_[line / 32] |= bm_bit_of(line % 32);
    }

    void latch_stale(unsigned line) override { eds_[line / 32] |= bm_bit_of(line % 32); }

protected:
    void on_preset_output(unsigned line, bool high) override
    {
        set_fsel(line, 1);
        auto& w = latch_[line / 32];
        w = high ? w | bm_bit_of(line % 32) : w & ~bm_bit_of(line % 32);
    }

protected:
    bool on_read(std::uint32_t offset, std::uint32_t& value) override
    {
        if (offset < 0x18) {
            value = fsel_[offset / 4];
            return true;
        }
        if (offset == gplev0 || offset == gplev0 + 4) {
            value = levels((offset - gplev0) / 4);
            return true;
        }
        if (auto* r = word_reg(offset)) {
            value = *r;
            return true;
        }
        return false; // GPSET and GPCLR are write only; the rest is not modelled
    }

    bool on_write(std::uint32_t offset, std::uint32_t value) override
    {
        if (offset < 0x18) {
            fsel_[offset / 4] = value;
            return true;
        }
        if (offset == gpset0 || offset == gpset0 + 4) {
            latch_[(offset - gpset0) / 4] |= value;
            return true;
        }
        if (offset == gpclr0 || offset == gpclr0 + 4) {
            latch_[(offset - gpclr0) / 4] &= ~value;
            return true;
        }
        if (offset == gpeds0 || offset == gpeds0 + 4) {
            eds_[(offset - gpeds0) / 4] &= ~value; // write 1 to clear
            return true;
        }
        if (auto* r = word_reg(offset)) {
            *r = value;
            return true;
        }
        return false; // GPLEV is read only
    }

    void on_poke(std::uint32_t offset, std::uint32_t value) override
    {
        if (offset < 0x18)
            fsel_[offset / 4] = value;
        else if (offset == gpset0 || offset == gpset0 + 4)
            latch_[(offset - gpset0) / 4] = value;
        else if (auto* r = word_reg(offset))
            *r = value;
    }

    void on_edge(unsigned line, bool rising) override
    {
        const unsigned w = line / 32;
        const std::uint32_t b = bm_bit_of(line % 32);
        const std::uint32_t detect = rising ? (ren_[w] | aren_[w]) : (fen_[w] | afen_[w]);
        if (detect & b)
            eds_[w] |= b;
    }

    void on_levels() override
    {
        for (unsigned w = 0; w < 2; ++w)
            eds_[w] |= (hen_[w] & levels(w)) | (len_[w] & ~levels(w) & valid(w));
    }

private:
    static constexpr std::uint32_t gpset0 = 0x1c, gpclr0 = 0x28, gplev0 = 0x34, gpeds0 = 0x40;

    static bool word(const std::array<std::uint32_t, 2>& r, unsigned line)
    {
        return (r[line / 32] >> (line % 32)) & 1;
    }
    static std::uint32_t valid(unsigned w) { return w == 0 ? 0xffffffffu : 0x03ffffffu; }

    unsigned fsel(unsigned line) const { return (fsel_[line / 10] >> (line % 10 * 3)) & 7; }
    void set_fsel(unsigned line, unsigned f)
    {
        auto& r = fsel_[line / 10];
        r = (r & ~(7u << (line % 10 * 3))) | (f << (line % 10 * 3));
    }

    std::uint32_t levels(unsigned w) const
    {
        std::uint32_t v = 0;
        for (unsigned i = 0; i < 32 && w * 32 + i < lines(); ++i)
            if (pad(w * 32 + i))
                v |= bm_bit_of(i);
        return v;
    }

    std::uint32_t* word_reg(std::uint32_t offset)
    {
        struct {
            std::uint32_t at;
            std::array<std::uint32_t, 2>* r;
        } const regs[] = {{gpeds0, &eds_}, {0x4c, &ren_},  {0x58, &fen_}, {0x64, &hen_},
                          {0x70, &len_},   {0x7c, &aren_}, {0x88, &afen_}};
        for (const auto& r : regs)
            if (offset == r.at || offset == r.at + 4)
                return &(*r.r)[(offset - r.at) / 4];
        return nullptr;
    }

    std::array<std::uint32_t, 6> fsel_{};
    std::array<std::uint32_t, 2> latch_{}, eds_{}, ren_{}, fen_{}, hen_{}, len_{}, aren_{}, afen_{};
};

// ---- R-Car Gen3 / Gen4 ---------------------------------------------------------------------

class rcar_sim final : public block_sim
{
public:
    explicit rcar_sim(bool gen4) : block_sim(0xe6050000u, 0x54, 32), gen4_(gen4) {}

    bool is_output(unsigned line) const override
    {
        return !bit(iointsel_, line) && bit(inoutsel_, line);
    }
    bool latch(unsigned line) const override { return bit(outdt_, line); }

    std::vector<std::uint32_t> config_regs() const override
    {
        std::vector<std::uint32_t> r = {iointsel, inoutsel, outdt,    intdt,    intmsk,
                                        posneg,   edglevel, filonoff, outdtsel, bothedge};
        if (gen4_)
            r.push_back(inen);
        return r;
    }

    std::uint32_t peek(std::uint32_t offset) const override
    {
        auto* r = const_cast<rcar_sim*>(this)->reg(offset);
        return r ? *r : 0;
    }

    std::uint32_t line_bits(std::uint32_t, unsigned line) const override { return bm_bit_of(line); }

    void arm_foreign(unsigned line) override
    {
        const std::uint32_t b = bm_bit_of(line);
        inoutsel_ &= ~b;
        posneg_ &= ~b;
        iointsel_ |= b;
        edglevel_ |= b;
        bothedge_ |= b;
        inen_ |= b;
        intmsk_ |= b;
    }

    void latch_stale(unsigned line) override { intdt_ |= bm_bit_of(line); }

protected:
    void on_preset_output(unsigned line, bool high) override
    {
        const std::uint32_t b = bm_bit_of(line);
        iointsel_ &= ~b;
        inoutsel_ |= b;
        outdtsel_ &= ~b;
        outdt_ = high ? outdt_ | b : outdt_ & ~b;
    }

protected:
    bool on_read(std::uint32_t offset, std::uint32_t& value) override
    {
        if (offset == indt) {
            value = input_levels();
            return true;
        }
        if (offset == intclr || offset == mskclr)
            return false; // write only
        if (auto* r = reg(offset)) {
            value = *r;
            return true;
        }
        return false;
    }

    bool on_write(std::uint32_t offset, std::uint32_t value) override
    {
        switch (offset) {
        case indt:
        case intdt:
            return false; // read only
        case intclr:
            intdt_ &= ~(value & edglevel_); // a level interrupt stays while its level does
            return true;
        case intmsk:
            intmsk_ &= value; // a 0 masks, a 1 changes nothing
            return true;
        case mskclr:
            intmsk_ |= value;
            return true;
        default:
            break;
        }
        if (auto* r = reg(offset)) {
            *r = value;
            return true;
        }
        return false;
    }

    void on_poke(std::uint32_t offset, std::uint32_t value) override
    {
        if (auto* r = reg(offset))
            *r = value;
    }

    bool driven(unsigned line) const override
    {
        // OUTDTSEL 1 drives from OUTDTH/OUTDTL, which this model does not have: low.
        return !bit(outdtsel_, line) && bit(outdt_, line);
    }

    void on_edge(unsigned line, bool rising) override
    {
        if (!bit(iointsel_, line) || !bit(edglevel_, line) || !input_enabled(line))
            return;
        const bool logic_rising = rising != bit(posneg_, line);
        if (bit(bothedge_, line) || logic_rising)
            intdt_ |= bm_bit_of(line);
    }

    void on_levels() override
    {
        const std::uint32_t level_lines = iointsel_ & ~edglevel_;
        intdt_ = (intdt_ & ~level_lines) | (input_levels() & level_lines);
    }

private:
    static constexpr std::uint32_t iointsel = 0x00, inoutsel = 0x04, outdt = 0x08, indt = 0x0c,
                                   intdt = 0x10, intclr = 0x14, intmsk = 0x18, mskclr = 0x1c,
                                   posneg = 0x20, edglevel = 0x24, filonoff = 0x28, outdtsel = 0x40,
                                   bothedge = 0x4c, inen = 0x50;

    static bool bit(std::uint32_t r, unsigned line) { return (r >> line) & 1; }
    bool input_enabled(unsigned line) const { return !gen4_ || bit(inen_, line); }

    std::uint32_t input_levels() const
    {
        std::uint32_t v = 0;
        for (unsigned line = 0; line < 32; ++line)
            if (input_enabled(line) && (pad(line) != bit(posneg_, line)))
                v |= bm_bit_of(line);
        return v;
    }

    std::uint32_t* reg(std::uint32_t offset)
    {
        switch (offset) {
        case iointsel:
            return &iointsel_;
        case inoutsel:
            return &inoutsel_;
        case outdt:
            return &outdt_;
        case intdt:
            return &intdt_;
        case intmsk:
            return &intmsk_;
        case posneg:
            return &posneg_;
        case edglevel:
            return &edglevel_;
        case filonoff:
            return &filonoff_;
        case outdtsel:
            return &outdtsel_;
        case bothedge:
            return &bothedge_;
        case inen:
            return gen4_ ? &inen_ : nullptr; // Gen3 has no INEN
        default:
            return nullptr;
        }
    }

    bool gen4_;
    std::uint32_t iointsel_ = 0, inoutsel_ = 0, outdt_ = 0, intdt_ = 0, intmsk_ = 0, posneg_ = 0,
                  edglevel_ = 0, filonoff_ = 0, outdtsel_ = 0, bothedge_ = 0, inen_ = 0;
};

// ---- ZynqMP --------------------------------------------------------------------------------

class zynqmp_sim final : public block_sim
{
public:
    zynqmp_sim() : block_sim(0xff0a0000u, 0x1000, 174)
    {
        // As a boot leaves it (Linux's probe too): every interrupt masked, every line edge.
        for (unsigned b = 0; b < 6; ++b)
            banks_[b].mask = banks_[b].type = lines_mask(static_cast<int>(b));
    }

    bool is_output(unsigned line) const override
    {
        const auto [b, i] = where(line);
        return bit(banks_[b].dirm, i) && bit(banks_[b].oen, i);
    }
    bool latch(unsigned line) const override
    {
        const auto [b, i] = where(line);
        return bit(banks_[b].data, i);
    }

    std::vector<std::uint32_t> config_regs() const override
    {
        std::vector<std::uint32_t> r;
        for (unsigned b = 0; b < 6; ++b)
            for (std::uint32_t off :
                 {0x040 + 4 * b, 0x204 + 0x40 * b, 0x208 + 0x40 * b, 0x20c + 0x40 * b,
                  0x218 + 0x40 * b, 0x21c + 0x40 * b, 0x220 + 0x40 * b, 0x224 + 0x40 * b})
                r.push_back(off);
        return r;
    }

    std::uint32_t peek(std::uint32_t offset) const override
    {
        auto* r = const_cast<zynqmp_sim*>(this)->reg(offset);
        return r ? *r : 0;
    }

    std::uint32_t line_bits(std::uint32_t offset, unsigned line) const override
    {
        const auto [b, i] = where(line);
        return bank_of_offset(offset) == static_cast<int>(b) ? bm_bit_of(i) : 0;
    }

    void arm_foreign(unsigned line) override
    {
        const auto [b, i] = where(line);
        auto& k = banks_[b];
        k.dirm &= ~bm_bit_of(i);
        k.type |= bm_bit_of(i);
        k.any |= bm_bit_of(i);
        k.mask &= ~bm_bit_of(i);
    }

    void latch_stale(unsigned line) override
    {
        const auto [b, i] = where(line);
        banks_[b].stat |= bm_bit_of(i);
    }

protected:
    void on_preset_output(unsigned line, bool high) override
    {
        const auto [b, i] = where(line);
        auto& k = banks_[b];
        k.dirm |= bm_bit_of(i);
        k.oen |= bm_bit_of(i);
        k.data = high ? k.data | bm_bit_of(i) : k.data & ~bm_bit_of(i);
    }

protected:
    bool on_read(std::uint32_t offset, std::uint32_t& value) override
    {
        const int b = bank_of_offset(offset);
        if (b < 0)
            return false;
        auto& k = banks_[b];
        if (offset == 0x040 + 4u * b) { // DATA: the latch of an output, the pin of an input
            value = (k.data & k.dirm) | (levels(b) & ~k.dirm);
            return true;
        }
        if (offset == 0x060 + 4u * b) {
            value = levels(b);
            return true;
        }
        if (offset < 0x040 || offset == 0x210 + 0x40u * b || offset == 0x214 + 0x40u * b)
            return false; // MASK_DATA, INT_EN and INT_DIS are write only
        if (auto* r = reg(offset)) {
            value = *r;
            return true;
        }
        return false;
    }

    bool on_write(std::uint32_t offset, std::uint32_t value) override
    {
        const int b = bank_of_offset(offset);
        if (b < 0)
            return false;
        auto& k = banks_[b];
        const std::uint32_t valid = lines_mask(b);
        if (offset < 0x040) { // MASK_DATA_LSW (lines 0..15) or MSW (16..31)
            const unsigned shift = offset % 8 ? 16 : 0;
            const std::uint32_t sel = (~value >> 16) & 0xffff;
            k.data = (k.data & ~(sel << shift)) | ((value & sel) << shift);
            k.data &= valid;
            return true;
        }
        if (offset == 0x040 + 4u * b) {
            k.data = value & valid;
            return true;
        }
        const std::uint32_t r = (offset - 0x204) % 0x40;
        if (offset < 0x204 || r == 0x08 || offset == 0x060 + 4u * b)
            return false; // DATA_RO and INT_MASK are read only
        if (r == 0x0c) {
            k.mask &= ~value;
            return true;
        }
        if (r == 0x10) {
            k.mask |= value & valid;
            return true;
        }
        if (r == 0x14) {
            k.stat &= ~(value & k.type); // write 1 to clear; a level stays while it lasts
            return true;
        }
        if (auto* p = reg(offset)) {
            *p = value & valid;
            return true;
        }
        return false;
    }

    void on_poke(std::uint32_t offset, std::uint32_t value) override
    {
        const int b = bank_of_offset(offset);
        if (auto* r = reg(offset))
            *r = value & lines_mask(b);
    }

    void on_edge(unsigned line, bool rising) override
    {
        const auto [b, i] = where(line);
        auto& k = banks_[b];
        if (bit(k.type, i) && (bit(k.any, i) || bit(k.pol, i) == rising))
            k.stat |= bm_bit_of(i);
    }

    void on_levels() override
    {
        for (unsigned b = 0; b < 6; ++b) {
            auto& k = banks_[b];
            const std::uint32_t level_lines = ~k.type & lines_mask(b);
            const std::uint32_t active = ~(levels(b) ^ k.pol);
            k.stat = (k.stat & ~level_lines) | (active & level_lines);
        }
    }

private:
    struct bank {
        std::uint32_t data = 0, dirm = 0, oen = 0, mask = 0, stat = 0, type = 0, pol = 0, any = 0;
    };
    static constexpr unsigned first[7] = {0, 26, 52, 78, 110, 142, 174};

    static bool bit(std::uint32_t r, unsigned i) { return (r >> i) & 1; }
    static std::uint32_t lines_mask(int b)
    {
        const unsigned n = first[b + 1] - first[b];
        return n == 32 ? 0xffffffffu : bm_bit_of(n) - 1;
    }
    static std::pair<unsigned, unsigned> where(unsigned line)
    {
        unsigned b = 0;
        while (line >= first[b + 1])
            ++b;
        return {b, line - first[b]};
    }
    /** The bank a register of the block belongs to, or -1. */
    static int bank_of_offset(std::uint32_t offset)
    {
        if (offset < 0x030)
            return static_cast<int>(offset / 8);
        if (offset >= 0x040 && offset < 0x058)
            return static_cast<int>((offset - 0x040) / 4);
        if (offset >= 0x060 && offset < 0x078)
            return static_cast<int>((offset - 0x060) / 4);
        if (offset >= 0x204 && offset < 0x204 + 6 * 0x40 && (offset - 0x204) % 0x40 <= 0x20)
            return static_cast<int>((offset - 0x204) / 0x40);
        return -1;
    }

    std::uint32_t levels(int b) const
    {
        std::uint32_t v = 0;
        for (unsigned line = first[b]; line < first[b + 1]; ++line)
            if (pad(line))
                v |= bm_bit_of(line - first[b]);
        return v;
    }

    std::uint32_t* reg(std::uint32_t offset)
    {
        const int b = bank_of_offset(offset);
        if (b < 0)
            return nullptr;
        auto& k = banks_[b];
        if (offset == 0x040 + 4u * b)
            return &k.data;
        if (offset < 0x204)
            return nullptr;
        switch ((offset - 0x204) % 0x40) {
        case 0x00:
            return &k.dirm;
        case 0x04:
            return &k.oen;
        case 0x08:
            return &k.mask;
        case 0x14:
            return &k.stat;
        case 0x18:
            return &k.type;
        case 0x1c:
            return &k.pol;
        case 0x20:
            return &k.any;
        default:
            return nullptr;
        }
    }

    std::array<bank, 6> banks_{};
};

// ---- PL061 ---------------------------------------------------------------------------------

class pl061_sim final : public block_sim
{
public:
    pl061_sim() : block_sim(0x09030000u, 0x1000, 8) {}

    bool is_output(unsigned line) const override { return (dir_ >> line) & 1; }
    bool latch(unsigned line) const override { return (data_ >> line) & 1; }

    std::vector<std::uint32_t> config_regs() const override
    {
        return {0x3fc, gpiodir, gpiois, gpioibe, gpioiev, gpioie, gpioris, gpioafsel};
    }

    std::uint32_t peek(std::uint32_t offset) const override
    {
        if (offset == 0x3fc)
            return data_;
        auto* r = const_cast<pl061_sim*>(this)->reg(offset);
        return r ? *r : 0;
    }

    std::uint32_t line_bits(std::uint32_t, unsigned line) const override { return bm_bit_of(line); }

    void arm_foreign(unsigned line) override
    {
        const std::uint32_t b = bm_bit_of(line);
        dir_ &= ~b;
        is_ &= ~b;
        ibe_ |= b;
        ie_ |= b;
    }

    void latch_stale(unsigned line) override { ris_ |= bm_bit_of(line); }

protected:
    void on_preset_output(unsigned line, bool high) override
    {
        dir_ |= bm_bit_of(line);
        data_ = high ? data_ | bm_bit_of(line) : data_ & ~bm_bit_of(line);
    }

protected:
    bool on_read(std::uint32_t offset, std::uint32_t& value) override
    {
        if (offset < 0x400) { // GPIODATA: address bits 9:2 select the lines read
            value = levels() & (offset >> 2);
            return true;
        }
        if (offset == gpiomis) {
            value = ris_ & ie_;
            return true;
        }
        if (offset >= 0xfe0) { // PeriphID0..3, PCellID0..3
            static constexpr std::uint32_t id[8] = {0x61, 0x10, 0x04, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
            value = id[(offset - 0xfe0) / 4];
            return true;
        }
        if (offset == gpioic)
            return false; // write only
        if (auto* r = reg(offset)) {
            value = *r;
            return true;
        }
        return false;
    }

    bool on_write(std::uint32_t offset, std::uint32_t value) override
    {
        if (offset < 0x400) { // only the lines address bits 9:2 select change
            const std::uint32_t sel = offset >> 2;
            data_ = (data_ & ~sel) | (value & sel);
            return true;
        }
        if (offset == gpioic) {
            ris_ &= ~(value & ~is_ & 0xff); // write 1 to clear; a level stays
            return true;
        }
        if (offset == gpioris || offset == gpiomis || offset >= 0xfe0)
            return false; // read only
        if (auto* r = reg(offset)) {
            *r = value & 0xff;
            return true;
        }
        return false;
    }

    void on_poke(std::uint32_t offset, std::uint32_t value) override
    {
        if (offset == 0x3fc)
            data_ = value & 0xff;
        else if (auto* r = reg(offset))
            *r = value & 0xff;
    }

    void on_edge(unsigned line, bool rising) override
    {
        const std::uint32_t b = bm_bit_of(line);
        if (!(is_ & b) && ((ibe_ & b) || (((iev_ & b) != 0) == rising)))
            ris_ |= b;
    }

    void on_levels() override
    {
        const std::uint32_t active = ~(levels() ^ iev_) & 0xff;
        ris_ = (ris_ & ~is_) | (active & is_);
    }

private:
    static constexpr std::uint32_t gpiodir = 0x400, gpiois = 0x404, gpioibe = 0x408,
                                   gpioiev = 0x40c, gpioie = 0x410, gpioris = 0x414,
                                   gpiomis = 0x418, gpioic = 0x41c, gpioafsel = 0x420;

    std::uint32_t levels() const
    {
        std::uint32_t v = 0;
        for (unsigned line = 0; line < 8; ++line)
            if (pad(line))
                v |= bm_bit_of(line);
        return v;
    }

    std::uint32_t* reg(std::uint32_t offset)
    {
        switch (offset) {
        case gpiodir:
            return &dir_;
        case gpiois:
            return &is_;
        case gpioibe:
            return &ibe_;
        case gpioiev:
            return &iev_;
        case gpioie:
            return &ie_;
        case gpioris:
            return &ris_;
        case gpioafsel:
            return &afsel_;
        default:
            return nullptr;
        }
    }

    std::uint32_t data_ = 0, dir_ = 0, is_ = 0, ibe_ = 0, iev_ = 0, ie_ = 0, ris_ = 0, afsel_ = 0;
};

} // namespace

std::unique_ptr<block_sim> make_bcm2711_sim()
{
    return std::make_unique<bcm2711_sim>();
}
std::unique_ptr<block_sim> make_rcar_sim(bool gen4)
{
    return std::make_unique<rcar_sim>(gen4);
}
std::unique_ptr<block_sim> make_zynqmp_sim()
{
    return std::make_unique<zynqmp_sim>();
}
std::unique_ptr<block_sim> make_pl061_sim()
{
    return std::make_unique<pl061_sim>();
}

} // namespace irqloop::test::bm

// The drivers' register access under BM_HOST (target-responder/baremetal/mmio.h).
extern "C" std::uint32_t bm_host_read32(std::uintptr_t addr)
{
    if (!irqloop::test::bm::bm_installed_sim) {
        std::fprintf(stderr, "bm-gpio-sim: a driver read 0x%lx with no simulator installed\n",
                     static_cast<unsigned long>(addr));
        std::abort();
    }
    return irqloop::test::bm::bm_installed_sim->read(addr);
}

extern "C" void bm_host_write32(std::uintptr_t addr, std::uint32_t value)
{
    if (!irqloop::test::bm::bm_installed_sim) {
        std::fprintf(stderr, "bm-gpio-sim: a driver wrote 0x%lx with no simulator installed\n",
                     static_cast<unsigned long>(addr));
        std::abort();
    }
    irqloop::test::bm::bm_installed_sim->write(addr, value);
}
