// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace irqloop::logger
{

/** @brief How every table of the reading commands is printed (--format). */
enum class table_format { text, markdown, csv };

/**
 * @brief Parse a --format value: "text", "markdown" (or "md") or "csv".
 * @throws irqloop::error (exit 2) naming @p option on anything else.
 */
table_format parse_table_format(std::string_view text, std::string_view option = "--format");

/** @brief Latency unit of the reading commands (--unit). */
enum class latency_unit { ns, us };

/** @throws irqloop::error (exit 2) unless @p text is "ns" or "us". */
latency_unit parse_latency_unit(std::string_view text, std::string_view option = "--unit");

/** @brief "ns" or "us". */
const char* unit_name(latency_unit u) noexcept;

/// What an absent figure prints as (an em dash, UTF-8): a run with no sample has no minimum,
/// a run shorter than its warm-up no WARM MAX. CSV writes it as an empty field.
inline constexpr const char* absent_value = "\xe2\x80\x94";

/** @brief Display width of @p s in a fixed-width table: UTF-8 code points, not bytes. */
std::size_t display_width(const std::string& s) noexcept;

/**
 * @brief Format a latency given in ns in @p unit: ns with @p decimals (default 0), us with
 *        @p decimals (default 3, i.e. ns resolution). Negative decimals pick the default.
 *        An absent value (NULL in the store) prints as absent_value, "—", never 0.
 */
std::string format_latency(std::optional<double> ns, latency_unit unit, int decimals = -1);

/**
 * @brief What a maximum is, for every table that shows one (report, worst, watch, timeline,
 * compare): the largest proven latency (its upper bound, with its bracket when a disturbed
 * sample holds it), the answers lost, and the timeout that made them lost.
 */
struct max_figure final {
    std::optional<std::int64_t> max_ns; ///< none: no answered sample
    std::int64_t bracket_ns = 0;        ///< > 0: a disturbed sample holds the max
    std::uint64_t lost = 0;             ///< stimuli with no answer before the timeout
    std::int64_t timeout_ns = 0;        ///< a lost answer took at least this long

    /** @brief The lost answers prove more than any sample: the max is only known to be at least
     *  the timeout (no sample proves a latency at or above it). */
    bool bounded_by_timeout() const noexcept
    {
        return lost > 0 && (!max_ns || *max_ns - bracket_ns < timeout_ns);
    }
};

/**
 * @brief A max_figure as a table cell in @p unit: "2001.200", "2001.200 (bracket 25.100)"; with
 * lost answers "≥ 10000.000 (12 lost)" when no sample proves the timeout, else the proven max
 * followed by " (12 lost)".
 */
std::string format_max(const max_figure& m, latency_unit unit, int decimals = -1);

/** @brief A count with no grouping, e.g. 100000000 (tables are for machines too). */
std::string format_count(std::uint64_t n);

/** @brief A percentage with enough decimals to show 1 in 10^8, trailing zeros trimmed. */
std::string format_percent(double pct);

/** @brief Unix ns as "YYYY-MM-DD HH:MM:SS.ffffff" UTC (@p frac_digits 0..9 after the point). */
std::string format_utc(std::int64_t unix_ns, int frac_digits = 6);

/** @brief Unix ns to the second, UTC, in @p strftime_format (the exports' own date shapes:
 *  ISO 8601 for JUnit and OSADL, RFC 2822 for cyclictest's JSON). */
std::string format_utc_as(std::int64_t unix_ns, const char* strftime_format);

/** @brief One CSV field: quoted when it holds a comma, quote, CR or LF; "-" becomes empty. */
std::string csv_field(const std::string& s);

/**
 * @brief A rectangular table of strings with a header, printed as aligned text, a GitHub
 *        markdown table, or RFC 4180 CSV.
 *
 * Text: columns separated by two spaces, numbers (columns marked right-aligned) padded on the
 * left, a dashed rule under the header, no trailing spaces. Markdown: pipes, with ---: for
 * right-aligned columns, pipes in cells escaped, a blank line after the table. CSV: header row,
 * fields quoted only when they hold a comma, quote, CR or LF; "-" placeholders become empty fields;
 * lines end in LF. Stored text (content::stored columns) is escaped in text and markdown, as
 * messages escape it (message_text(): a label cannot start a line or hold a LAVA signal on a
 * console); CSV keeps it as stored, one quoted field. Rows shorter than the header are padded with
 * empty cells; longer rows are an error.
 */
class table final
{
public:
    enum class align { left, right };

    table() = default;
    table(table&&) noexcept = default;
    table& operator=(table&&) noexcept = default;
    table(const table&) = delete;
    table& operator=(const table&) = delete;

    /** @brief What a column's cells hold: irqloop's own text, or text stored with a run
     *  (a label, target, host, path) that text and markdown print escaped (message_text()). */
    enum class content { own, stored };

    /** @brief Add a column; call before add_row(). */
    void add_column(std::string header, align a = align::right, content c = content::own);

    /** @brief Append a row. @throws std::logic_error when it has more cells than columns. */
    void add_row(std::vector<std::string> cells);

    std::size_t columns() const noexcept { return headers_.size(); }
    std::size_t rows() const noexcept { return rows_.size(); }
    const std::vector<std::string>& headers() const noexcept { return headers_; }
    const std::vector<std::string>& row(std::size_t i) const { return rows_.at(i); }

    /** @brief Print in @p fmt; text and markdown end with a newline, CSV lines end in LF. */
    void print(std::ostream& out, table_format fmt) const;

private:
    std::vector<std::string> headers_;
    std::vector<align> aligns_;
    std::vector<content> contents_;
    std::vector<std::vector<std::string>> rows_;
};

/**
 * @brief A section title, printed before a table: "== title ==" in text, "## title" in
 *        markdown, "# title" in CSV (a comment line most CSV readers can be told to skip).
 */
void print_heading(std::ostream& out, table_format fmt, std::string_view title);

/** @brief A free-text note line in the style of the format (markdown: plain paragraph). */
void print_note(std::ostream& out, table_format fmt, std::string_view text);

} // namespace irqloop::logger
