// SPDX-License-Identifier: MIT
#include "table.hpp"

#include "error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace irqloop::logger
{

table_format parse_table_format(std::string_view text, std::string_view option)
{
    if (text == "text")
        return table_format::text;
    if (text == "markdown" || text == "md")
        return table_format::markdown;
    if (text == "csv")
        return table_format::csv;
    throw error("bad " + std::string(option), "unknown format '" + std::string(text) + "'",
                "use text, markdown or csv");
}

latency_unit parse_latency_unit(std::string_view text, std::string_view option)
{
    if (text == "ns")
        return latency_unit::ns;
    if (text == "us")
        return latency_unit::us;
    throw error("bad " + std::string(option), "unknown unit '" + std::string(text) + "'",
                "use ns or us");
}

const char* unit_name(latency_unit u) noexcept
{
    return u == latency_unit::ns ? "ns" : "us";
}

std::string format_latency(std::optional<double> ns, latency_unit unit, int decimals)
{
    if (!ns)
        return absent_value;
    char buf[64];
    if (unit == latency_unit::ns)
        std::snprintf(buf, sizeof buf, "%.*f", decimals < 0 ? 0 : decimals, *ns);
    else
        std::snprintf(buf, sizeof buf, "%.*f", decimals < 0 ? 3 : decimals, *ns / 1e3);
    // "-0" from rounding a tiny negative (floor-corrected figures) reads as a bug.
    if (buf[0] == '-' && std::strspn(buf + 1, "0.") == std::strlen(buf + 1))
        return buf + 1;
    return buf;
}

std::string format_max(const max_figure& m, latency_unit unit, int decimals)
{
    const std::string lost = m.lost ? " (" + format_count(m.lost) + " lost)" : std::string();
    if (m.bounded_by_timeout()) // "≥" in UTF-8
        return "\xe2\x89\xa5 " + format_latency(double(m.timeout_ns), unit, decimals) + lost;
    if (!m.max_ns)
        return absent_value;
    std::string v = format_latency(double(*m.max_ns), unit, decimals);
    if (m.bracket_ns > 0)
        v += " (bracket " + format_latency(double(m.bracket_ns), unit, decimals) + ")";
    return v + lost;
}

std::string format_count(std::uint64_t n)
{
    return std::to_string(n);
}

std::string format_percent(double pct)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", pct);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0')
        s.pop_back();
    if (s.back() == '.')
        s.pop_back();
    return s;
}

std::string format_utc(std::int64_t unix_ns, int frac_digits)
{
    std::int64_t sec = unix_ns / 1'000'000'000;
    std::int64_t frac = unix_ns % 1'000'000'000;
    if (frac < 0) {
        frac += 1'000'000'000;
        --sec;
    }
    std::time_t t = static_cast<std::time_t>(sec);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    frac_digits = std::clamp(frac_digits, 0, 9);
    if (frac_digits > 0) {
        char f[16];
        std::snprintf(f, sizeof f, "%09lld", static_cast<long long>(frac));
        f[frac_digits] = '\0';
        std::snprintf(buf + n, sizeof buf - n, ".%s", f);
    }
    return buf;
}

std::string format_utc_as(std::int64_t unix_ns, const char* strftime_format)
{
    const std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[64];
    std::strftime(b, sizeof b, strftime_format, &tm);
    return b;
}

std::size_t display_width(const std::string& s) noexcept
{
    std::size_t n = 0;
    for (unsigned char ch : s)
        n += (ch & 0xc0) != 0x80; // continuation bytes take no column
    return n;
}

void table::add_column(std::string header, align a, content c)
{
    headers_.push_back(std::move(header));
    aligns_.push_back(a);
    contents_.push_back(c);
}

void table::add_row(std::vector<std::string> cells)
{
    if (cells.size() > headers_.size())
        throw std::logic_error("table row has more cells than columns");
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

namespace
{

void print_text(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<table::align>& aligns,
                const std::vector<std::vector<std::string>>& rows)
{
    std::vector<std::size_t> width(headers.size());
    for (std::size_t c = 0; c < headers.size(); ++c) {
        width[c] = display_width(headers[c]);
        for (const auto& r : rows)
            width[c] = std::max(width[c], display_width(r[c]));
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (c)
                s += "  ";
            std::string pad(width[c] - display_width(cells[c]), ' ');
            s += aligns[c] == table::align::right ? pad + cells[c] : cells[c] + pad;
        }
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        out << s << '\n';
    };
    line(headers);
    std::string rule;
    for (std::size_t c = 0; c < headers.size(); ++c)
        rule += (c ? "  " : "") + std::string(width[c], '-');
    out << rule << '\n';
    for (const auto& r : rows)
        line(r);
}

std::string md_cell(const std::string& s)
{
    std::string o;
    for (char ch : s) {
        if (ch == '|')
            o += '\\';
        o += ch;
    }
    return o;
}

void print_markdown(std::ostream& out, const std::vector<std::string>& headers,
                    const std::vector<table::align>& aligns,
                    const std::vector<std::vector<std::string>>& rows)
{
    auto line = [&](const std::vector<std::string>& cells) {
        out << '|';
        for (const auto& c : cells)
            out << ' ' << md_cell(c) << " |";
        out << '\n';
    };
    line(headers);
    out << '|';
    for (auto a : aligns)
        out << (a == table::align::right ? " ---: |" : " --- |");
    out << '\n';
    for (const auto& r : rows)
        line(r);
}

} // namespace

std::string csv_field(const std::string& s)
{
    if (s == "-" || s == absent_value)
        return {};
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string o = "\"";
    for (char ch : s) {
        if (ch == '"')
            o += '"';
        o += ch;
    }
    return o + '"';
}

namespace
{

void print_csv(std::ostream& out, const std::vector<std::string>& headers,
               const std::vector<std::vector<std::string>>& rows)
{
    auto line = [&](const std::vector<std::string>& cells) {
        for (std::size_t c = 0; c < cells.size(); ++c)
            out << (c ? "," : "") << csv_field(cells[c]);
        out << '\n';
    };
    line(headers);
    for (const auto& r : rows)
        line(r);
}

} // namespace

void table::print(std::ostream& out, table_format fmt) const
{
    // Text and markdown are read on a console: stored text there is escaped (CSV is data).
    std::vector<std::vector<std::string>> escaped;
    const bool any_stored =
        std::find(contents_.begin(), contents_.end(), content::stored) != contents_.end();
    if (fmt != table_format::csv && any_stored) {
        escaped = rows_;
        for (auto& r : escaped)
            for (std::size_t c = 0; c < r.size(); ++c)
                if (contents_[c] == content::stored)
                    r[c] = message_text(r[c]);
    }
    const auto& rows = any_stored && fmt != table_format::csv ? escaped : rows_;
    switch (fmt) {
    case table_format::text:
        print_text(out, headers_, aligns_, rows);
        break;
    case table_format::markdown:
        print_markdown(out, headers_, aligns_, rows);
        out << '\n'; // a GFM table runs on into the next line unless a blank line ends it
        break;
    case table_format::csv:
        print_csv(out, headers_, rows_);
        break;
    }
}

void print_heading(std::ostream& out, table_format fmt, std::string_view title)
{
    switch (fmt) {
    case table_format::text:
        out << "== " << title << " ==\n";
        break;
    case table_format::markdown:
        out << "## " << title << "\n\n";
        break;
    case table_format::csv:
        out << "# " << title << '\n';
        break;
    }
}

void print_note(std::ostream& out, table_format fmt, std::string_view text)
{
    if (fmt == table_format::csv)
        out << "# " << text << '\n';
    else
        out << text << (fmt == table_format::markdown ? "\n\n" : "\n");
}

} // namespace irqloop::logger
