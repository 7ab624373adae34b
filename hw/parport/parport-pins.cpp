// SPDX-License-Identifier: MIT
#include "parport-pins.hpp"

#include "enum-names.hpp"
#include "error.hpp"

#include <array>
#include <cctype>
#include <cstdio>

namespace irqloop::hw
{

namespace
{

using R = parport_register;

constexpr std::array<parport_pin, 17> pins = {{
    {"D0", 2, R::data, 0x01, false},
    {"D1", 3, R::data, 0x02, false},
    {"D2", 4, R::data, 0x04, false},
    {"D3", 5, R::data, 0x08, false},
    {"D4", 6, R::data, 0x10, false},
    {"D5", 7, R::data, 0x20, false},
    {"D6", 8, R::data, 0x40, false},
    {"D7", 9, R::data, 0x80, false},
    {"nACK", 10, R::status, 0x40, false},
    {"BUSY", 11, R::status, 0x80, true},
    {"PE", 12, R::status, 0x20, false},
    {"SELECT", 13, R::status, 0x10, false},
    {"nERROR", 15, R::status, 0x08, false},
    {"nSTROBE", 1, R::control, 0x01, true},
    {"nAUTOFD", 14, R::control, 0x02, true},
    {"nINIT", 16, R::control, 0x04, false},
    {"nSELECTIN", 17, R::control, 0x08, true},
}};

struct alias final {
    const char* name;
    const char* canonical;
};

constexpr std::array<alias, 6> aliases = {{
    {"PAPEROUT", "PE"},
    {"SLCT", "SELECT"},
    {"SELIN", "nSELECTIN"},
    {"nSELIN", "nSELECTIN"},
    {"FAULT", "nERROR"},
    {"nFAULT", "nERROR"},
}};

bool same(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

const parport_pin* find(std::string_view name)
{
    for (const auto& p : pins) {
        std::string_view canon = p.name;
        if (same(name, canon))
            return &p;
        // "ACK" for "nACK": the n is protocol polarity, not part of what users type.
        if (canon.size() > 1 && canon[0] == 'n' && same(name, canon.substr(1)))
            return &p;
    }
    for (const auto& a : aliases)
        if (same(name, a.name))
            return find(a.canonical);
    if (name.size() > 3 && same(name.substr(0, 3), "pin")) {
        unsigned n = 0;
        for (char c : name.substr(3)) {
            if (!std::isdigit(static_cast<unsigned char>(c)) || n > 100)
                return nullptr;
            n = n * 10 + static_cast<unsigned>(c - '0');
        }
        for (const auto& p : pins)
            if (p.db25 == n)
                return &p;
    }
    return nullptr;
}

const char* reg_name(R r)
{
    static constexpr enum_name<R> names[] = {
        {R::data, "data"}, {R::status, "status"}, {R::control, "control"}};
    return name_of(r, names, "?");
}

} // namespace

std::string parport_pin::explain() const
{
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s (DB-25 pin %u, %s 0x%02x%s)", name, db25, reg_name(reg),
                  mask, inverted ? ", inverted" : "");
    return buf;
}

parport_pin parport_pin_by_name(std::string_view name, std::string_view what)
{
    if (const parport_pin* p = find(name))
        return *p;
    throw error("bad parallel-port pin for " + std::string(what),
                "unknown pin '" + std::string(name) + "'",
                "outputs: " + parport_pin_names(true) + "; inputs: " + parport_pin_names(false) +
                    "; or pinN with the DB-25 pin number");
}

std::string parport_pin_names(bool outputs)
{
    std::string s;
    for (const auto& p : pins) {
        if (p.is_output() != outputs)
            continue;
        if (p.reg == R::data && p.mask != 0x01)
            continue;
        if (!s.empty())
            s += ", ";
        s += p.reg == R::data ? "D0..D7" : p.name;
    }
    return s;
}

} // namespace irqloop::hw
