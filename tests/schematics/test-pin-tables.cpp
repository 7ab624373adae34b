// SPDX-License-Identifier: MIT
// Users wire by the pin tables in schematics/, the code drives by the defaults headers, and
// the KiCad sheets are the drawings of both. These tests hold the three together: each table
// against its defaults header, and each sheet against its table by tracing the sheet's nets
// (wires, junctions, labels, power symbols) the way KiCad connects them.

#include "ftdi/ftdi-defaults.hpp"
#include "gpiod/gpiod-defaults.hpp"
#include "parport/parport-defaults.hpp"
#include "run-process.hpp"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace
{

namespace pd = irqloop::hw::parport_defaults;
namespace gd = irqloop::hw::gpiod_defaults;
namespace fd = irqloop::hw::ftdi_defaults;

const std::string source_dir = IRQLOOP_SOURCE_DIR;

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot open " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

using row = std::map<std::string, std::string>;
using table = std::vector<row>;

std::vector<std::string> split_csv_line(const std::string& line)
{
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            fields.emplace_back();
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    return fields;
}

table read_csv(const std::string& path)
{
    std::istringstream in(slurp(path));
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    table rows;
    while (std::getline(in, line)) {
        if (line.empty())
            continue;
        const auto fields = split_csv_line(line);
        if (fields.size() != header.size())
            throw std::runtime_error(path + ": row '" + line + "' has " +
                                     std::to_string(fields.size()) + " fields, header has " +
                                     std::to_string(header.size()));
        row r;
        for (std::size_t i = 0; i < header.size(); ++i)
            r[header[i]] = fields[i];
        rows.push_back(std::move(r));
    }
    return rows;
}

const row& find_row(const table& t, const std::string& signal)
{
    for (const auto& r : t)
        if (r.at("signal") == signal)
            return r;
    throw std::runtime_error("pin table has no row for " + signal);
}

/// "5" -> {5}, "18-25" -> {18, ..., 25}.
std::vector<std::string> expand_pins(const std::string& spec)
{
    const auto dash = spec.find('-');
    if (dash == std::string::npos)
        return {spec};
    std::vector<std::string> pins;
    for (int n = std::stoi(spec.substr(0, dash)); n <= std::stoi(spec.substr(dash + 1)); ++n)
        pins.push_back(std::to_string(n));
    return pins;
}

// KiCad's files are S-expressions: lists of atoms, quoted strings and lists.
struct sexpr final {
    std::string atom;
    std::vector<sexpr> items;

    const std::string& head() const
    {
        static const std::string none;
        return items.empty() ? none : items.front().atom;
    }
    const sexpr* find(std::string_view name) const
    {
        for (const auto& i : items)
            if (i.head() == name)
                return &i;
        return nullptr;
    }
    std::vector<const sexpr*> all(std::string_view name) const
    {
        std::vector<const sexpr*> found;
        for (const auto& i : items)
            if (i.head() == name)
                found.push_back(&i);
        return found;
    }
    double num(std::size_t i) const { return std::stod(items.at(i).atom); }
    const std::string& str(std::size_t i) const { return items.at(i).atom; }
};

sexpr parse_sexpr(std::string_view text, std::size_t& pos)
{
    auto skip_space = [&] {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
            ++pos;
    };
    skip_space();
    sexpr node;
    if (text.at(pos) == '(') {
        ++pos;
        for (skip_space(); text.at(pos) != ')'; skip_space())
            node.items.push_back(parse_sexpr(text, pos));
        ++pos;
    } else if (text[pos] == '"') {
        for (++pos; text.at(pos) != '"'; ++pos) {
            if (text[pos] == '\\')
                ++pos;
            node.atom += text.at(pos);
        }
        ++pos;
    } else {
        while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) &&
               text[pos] != '(' && text[pos] != ')')
            node.atom += text[pos++];
    }
    return node;
}

/// Sheet coordinates in 0.1 um, so that points compare exactly.
struct point final {
    long long x;
    long long y;
    auto operator<=>(const point&) const = default;
};

point to_point(double x_mm, double y_mm)
{
    return {std::llround(x_mm * 10000), std::llround(y_mm * 10000)};
}

/// The connectivity of one single-sheet schematic, traced with KiCad's rules: wire ends join
/// what they touch (another wire's end or middle, a pin), labels and junctions join the wire
/// they sit on, and labels or power symbols of the same name are one net.
class sheet_nets final
{
public:
    explicit sheet_nets(const std::string& text)
    {
        std::size_t pos = 0;
        const auto root = parse_sexpr(text, pos);
        if (root.head() != "kicad_sch")
            throw std::runtime_error("not a KiCad schematic");

        std::map<std::string, std::map<std::string, lib_pin>> lib;
        for (const auto* sym : root.find("lib_symbols")->all("symbol"))
            for (const auto* unit : sym->all("symbol"))
                for (const auto* p : unit->all("pin")) {
                    const auto* at = p->find("at");
                    lib[sym->str(1)].emplace(
                        p->find("number")->str(1),
                        lib_pin{at->num(1), at->num(2), p->find("name")->str(1)});
                }

        std::vector<std::pair<point, std::string>> named;
        for (const auto* w : root.all("wire")) {
            const auto* pts = w->find("pts");
            const point a = to_point(pts->items.at(1).num(1), pts->items.at(1).num(2));
            const point b = to_point(pts->items.at(2).num(1), pts->items.at(2).num(2));
            wires_.push_back({a, b});
            join(a, b);
        }
        for (const auto* sym : root.all("symbol")) {
            const auto lib_id = sym->find("lib_id")->str(1);
            const auto* at = sym->find("at");
            const auto* mirror = sym->find("mirror");
            std::string ref, value;
            for (const auto* prop : sym->all("property")) {
                if (prop->str(1) == "Reference")
                    ref = prop->str(2);
                if (prop->str(1) == "Value")
                    value = prop->str(2);
            }
            const bool power = lib_id.starts_with("power:");
            for (const auto& [number, lp] : lib.at(lib_id)) {
                // Library y points up; the sheet's y points down. Rotate, then mirror.
                double x = lp.x, y = -lp.y;
                for (int r = static_cast<int>(at->num(3)) / 90; r > 0; --r)
                    std::tie(x, y) = std::pair{y, -x};
                if (mirror && mirror->str(1) == "y")
                    x = -x;
                if (mirror && mirror->str(1) == "x")
                    y = -y;
                const point p = to_point(at->num(1) + x, at->num(2) + y);
                node(p);
                if (!power)
                    pins_[{ref, number}] = {p, lp.name};
                else if (value != "PWR_FLAG")
                    named.emplace_back(p, value);
            }
        }
        for (const auto* l : root.all("label"))
            named.emplace_back(to_point(l->find("at")->num(1), l->find("at")->num(2)), l->str(1));
        for (const auto* l : root.all("global_label"))
            named.emplace_back(to_point(l->find("at")->num(1), l->find("at")->num(2)), l->str(1));
        for (const auto* j : root.all("junction"))
            attach(to_point(j->find("at")->num(1), j->find("at")->num(2)));
        for (const auto* nc : root.all("no_connect"))
            no_connects_.insert(to_point(nc->find("at")->num(1), nc->find("at")->num(2)));
        for (const auto& w : std::vector(wires_)) {
            attach(w.first);
            attach(w.second);
        }
        std::map<std::string, point> first_of_name;
        for (const auto& [p, name] : named) {
            attach(p);
            names_.emplace_back(p, name);
            if (auto [it, fresh] = first_of_name.emplace(name, p); !fresh)
                join(it->second, p);
        }
    }

    /// The pin's position, or nothing when the symbol or the pin does not exist.
    std::optional<point> pin(const std::string& ref, const std::string& number) const
    {
        const auto it = pins_.find({ref, number});
        return it == pins_.end() ? std::nullopt : std::optional(it->second.at);
    }
    std::string pin_name(const std::string& ref, const std::string& number) const
    {
        const auto it = pins_.find({ref, number});
        return it == pins_.end() ? std::string() : it->second.name;
    }
    /// The names (labels, power symbols) of the net through p.
    std::set<std::string> names(point p) const
    {
        std::set<std::string> found;
        for (const auto& [q, name] : names_)
            if (same_net(p, q))
                found.insert(name);
        return found;
    }
    /// The pins of the net through p, as "J1.5".
    std::set<std::string> pins_on(point p) const
    {
        std::set<std::string> found;
        for (const auto& [key, pin] : pins_)
            if (same_net(p, pin.at))
                found.insert(key.first + "." + key.second);
        return found;
    }
    bool has_no_connect(point p) const { return no_connects_.contains(p); }

private:
    struct lib_pin final {
        double x;
        double y;
        std::string name;
    };
    struct placed_pin final {
        point at;
        std::string name;
    };

    std::size_t node(point p) const
    {
        const auto [it, fresh] = index_.emplace(p, parent_.size());
        if (fresh)
            parent_.push_back(parent_.size());
        return it->second;
    }
    std::size_t root_of(std::size_t n) const
    {
        while (parent_[n] != n)
            n = parent_[n] = parent_[parent_[n]];
        return n;
    }
    void join(point a, point b) { parent_[root_of(node(a))] = root_of(node(b)); }
    bool same_net(point a, point b) const { return root_of(node(a)) == root_of(node(b)); }

    /// Joins p to every wire whose middle it lies on.
    void attach(point p)
    {
        node(p);
        for (const auto& [a, b] : wires_) {
            const long long cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
            const bool inside = std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) &&
                                std::min(a.y, b.y) <= p.y && p.y <= std::max(a.y, b.y);
            if (cross == 0 && inside)
                join(p, a);
        }
    }

    std::vector<std::pair<point, point>> wires_;
    std::map<std::pair<std::string, std::string>, placed_pin> pins_;
    std::vector<std::pair<point, std::string>> names_;
    std::set<point> no_connects_;
    mutable std::map<point, std::size_t> index_;
    mutable std::vector<std::size_t> parent_;
};

std::string join_set(const std::set<std::string>& s)
{
    return s.empty() ? "nothing"
                     : std::accumulate(std::next(s.begin()), s.end(), *s.begin(),
                                       [](std::string a, const std::string& b) {
                                           return std::move(a) + ", " + b;
                                       });
}

/// Every row of the table that names this sheet, checked against the sheet's nets: each
/// listed pin sits on the listed net, that net carries no other name, and reaches another pin.
std::vector<std::string> check_sheet(const table& t, const std::string& sheet_stem,
                                     const std::string& sheet_text)
{
    const sheet_nets nets(sheet_text);
    std::vector<std::string> problems;
    for (const auto& r : t) {
        std::istringstream sheets(r.at("sheets"));
        std::set<std::string> listed{std::istream_iterator<std::string>(sheets), {}};
        if (!listed.contains(sheet_stem))
            continue;
        for (const std::string side : {"logger", "target", "analyzer"}) {
            if (!r.contains(side + "_ref")) // only the analyzer's table has an analyzer side
                continue;
            const auto& ref = r.at(side + "_ref");
            if (ref.empty())
                continue;
            const auto& net = r.at(side + "_net");
            for (const auto& number : expand_pins(r.at(side + "_pin"))) {
                const auto where = sheet_stem + ": " + r.at("signal") + ": " + ref + "." + number;
                const auto p = nets.pin(ref, number);
                if (!p) {
                    problems.push_back(where + ": no such pin in the sheet");
                    continue;
                }
                if (nets.has_no_connect(*p))
                    problems.push_back(where + ": marked not connected");
                if (const auto names = nets.names(*p); names != std::set{net})
                    problems.push_back(where + ": on net " + join_set(names) + ", the table says " +
                                       net);
                if (const auto pins = nets.pins_on(*p); pins.size() < 2)
                    problems.push_back(where + ": net " + net + " reaches no other pin");
            }
        }
    }
    return problems;
}

std::vector<std::string> check_parport_defaults(const table& t)
{
    std::vector<std::string> problems;
    auto expect = [&](const row& r, const std::string& column, const std::string& want) {
        if (r.at(column) != want)
            problems.push_back(r.at("signal") + " " + column + " is '" + r.at(column) +
                               "', parport-defaults.hpp says '" + want + "'");
    };
    const auto& stim = find_row(t, "STIM");
    expect(stim, "logger_pin", std::to_string(pd::out_db25));
    expect(stim, "logger_name", pd::out_pin);
    expect(stim, "target_pin", std::to_string(pd::in_db25));
    expect(stim, "target_name", pd::in_pin);
    const auto& resp = find_row(t, "RESP");
    expect(resp, "logger_pin", std::to_string(pd::in_db25));
    expect(resp, "logger_name", pd::in_pin);
    expect(resp, "target_pin", std::to_string(pd::out_db25));
    expect(resp, "target_name", pd::out_pin);
    const auto& gnd = find_row(t, "GND");
    const auto grounds =
        std::to_string(pd::ground_first_db25) + "-" + std::to_string(pd::ground_last_db25);
    expect(gnd, "logger_pin", grounds);
    expect(gnd, "target_pin", grounds);
    return problems;
}

/// What a defaults header says of a logger-side pin: its header pin and its name.
struct logger_pin {
    const char* signal;
    unsigned header_pin;
    std::string name;
};

/// The logger_pin and logger_name of each row of @p pins against @p header's defaults.
std::vector<std::string> check_logger_pins(const table& t, const std::string& header,
                                           const std::vector<logger_pin>& pins)
{
    std::vector<std::string> problems;
    for (const auto& p : pins) {
        const auto& r = find_row(t, p.signal);
        if (r.at("logger_pin") != std::to_string(p.header_pin))
            problems.push_back(p.signal + std::string(" logger_pin is '") + r.at("logger_pin") +
                               "', " + header + " says " + std::to_string(p.header_pin));
        if (r.at("logger_name") != p.name)
            problems.push_back(p.signal + std::string(" logger_name is '") + r.at("logger_name") +
                               "', " + header + " says " + p.name);
    }
    return problems;
}

std::vector<std::string> check_gpiod_defaults(const table& t)
{
    return check_logger_pins(t, "gpiod-defaults.hpp",
                             {{"STIM", gd::out_header_pin, gd::out_line},
                              {"RESP", gd::in_header_pin, gd::in_line},
                              {"TRIG", gd::trigger_header_pin, gd::trigger_line},
                              {"GND", gd::ground_header_pin, "GND"}});
}

std::vector<std::string> check_ftdi_defaults(const table& t)
{
    return check_logger_pins(t, "ftdi-defaults.hpp",
                             {{"STIM", fd::out_header_pin, fd::out_pin},
                              {"RESP", fd::in_header_pin, fd::in_pin},
                              {"TRIG", fd::trigger_header_pin, fd::trigger_pin},
                              {"GND", fd::ground_header_pin, "GND"}});
}

/// The README beside each pins.csv renders the table for people: each row must be there, with
/// the same pins and names (its columns may be merged or reordered).
std::vector<std::string> check_readme(const table& t, const std::string& readme)
{
    std::vector<std::string> problems;
    for (const auto& r : t) {
        std::optional<std::set<std::string>> cells;
        std::istringstream lines(readme);
        for (std::string line; std::getline(lines, line);) {
            if (!line.starts_with("| " + r.at("signal") + " |"))
                continue;
            cells.emplace();
            std::istringstream fields(line);
            for (std::string cell; std::getline(fields, cell, '|');) {
                const auto first = cell.find_first_not_of(' ');
                const auto last = cell.find_last_not_of(' ');
                if (first != std::string::npos)
                    cells->insert(cell.substr(first, last - first + 1));
            }
        }
        if (!cells) {
            problems.push_back(r.at("signal") + ": no row in the README");
            continue;
        }
        for (const std::string column : {"logger_pin", "logger_name", "target_pin", "target_name",
                                         "analyzer_pin", "analyzer_name"})
            if (r.contains(column) && !r.at(column).empty() && !cells->contains(r.at(column)))
                problems.push_back(r.at("signal") + ": the README row lacks " + column + " '" +
                                   r.at(column) + "'");
    }
    return problems;
}

std::string listing(const std::vector<std::string>& problems)
{
    std::string s;
    for (const auto& p : problems)
        s += p + "\n";
    return s;
}

const std::string parport_dir = source_dir + "/schematics/parport/";
const std::string gpiod_dir = source_dir + "/schematics/gpiod/";
const std::string ftdi_dir = source_dir + "/schematics/ftdi/";
const std::string analyzer_dir = source_dir + "/schematics/analyzer/";

} // namespace

TEST_CASE("parport pin table agrees with parport-defaults.hpp", "[schematics]")
{
    const auto problems = check_parport_defaults(read_csv(parport_dir + "pins.csv"));
    INFO(listing(problems));
    CHECK(problems.empty());
}

TEST_CASE("gpiod pin table agrees with gpiod-defaults.hpp", "[schematics]")
{
    const auto problems = check_gpiod_defaults(read_csv(gpiod_dir + "pins.csv"));
    INFO(listing(problems));
    CHECK(problems.empty());
}

TEST_CASE("ftdi pin table agrees with ftdi-defaults.hpp", "[schematics]")
{
    const auto problems = check_ftdi_defaults(read_csv(ftdi_dir + "pins.csv"));
    INFO(listing(problems));
    CHECK(problems.empty());
}

TEST_CASE("ftdi schematic wires the FT232H breakout as its pin table says", "[schematics]")
{
    const auto pins = read_csv(ftdi_dir + "pins.csv");
    const auto text = slurp(ftdi_dir + "ftdi.kicad_sch");
    const auto problems = check_sheet(pins, "ftdi", text);
    INFO(listing(problems));
    CHECK(problems.empty());
    // A table row naming another chip pin than the defaults fails.
    auto edited = pins;
    for (auto& r : edited)
        if (r.at("signal") == "RESP")
            r["logger_name"] = "ADBUS3";
    CHECK_FALSE(check_ftdi_defaults(edited).empty());
}

TEST_CASE("parport schematic wires the crossed cable as its pin table says", "[schematics]")
{
    const auto problems = check_sheet(read_csv(parport_dir + "pins.csv"), "parport",
                                      slurp(parport_dir + "parport.kicad_sch"));
    INFO(listing(problems));
    CHECK(problems.empty());

    // The crossing itself, straight from the defaults: each D3 lands on the other nACK.
    const sheet_nets nets(slurp(parport_dir + "parport.kicad_sch"));
    const auto out = std::to_string(pd::out_db25), in = std::to_string(pd::in_db25);
    CHECK(nets.pins_on(*nets.pin("J1", out)) == std::set<std::string>{"J1." + out, "J2." + in});
    CHECK(nets.pins_on(*nets.pin("J2", out)) == std::set<std::string>{"J2." + out, "J1." + in});
}

TEST_CASE("gpiod schematics wire the Pi header as their pin table says", "[schematics]")
{
    const auto pins = read_csv(gpiod_dir + "pins.csv");
    for (const std::string stem : {"gpiod", "gpiod-3v3"}) {
        const auto text = slurp(gpiod_dir + stem + ".kicad_sch");
        const auto problems = check_sheet(pins, stem, text);
        INFO(stem << ":\n" << listing(problems));
        CHECK(problems.empty());

        // KiCad's own Raspberry Pi symbol names header pins by BCM number: it must agree
        // with the defaults' header pin for each line name.
        const sheet_nets nets(text);
        CHECK(nets.pin_name("J1", std::to_string(gd::out_header_pin)) == gd::out_line);
        CHECK(nets.pin_name("J1", std::to_string(gd::in_header_pin)) == gd::in_line);
        CHECK(nets.pin_name("J1", std::to_string(gd::trigger_header_pin)) == gd::trigger_line);
        CHECK(nets.pin_name("J1", std::to_string(gd::ground_header_pin)) == "GND");
    }
}

TEST_CASE("analyzer schematic clips D0 on STIM at the target's input, D1 on RESP at the "
          "logger's input and GND on the logger's ground, beside the gpiod wiring; "
          "docs/commands/verify.md's capture line names the same channels",
          "[schematics]")
{
    const auto pins = read_csv(analyzer_dir + "pins.csv");
    const auto text = slurp(analyzer_dir + "analyzer.kicad_sch");
    const auto problems = check_sheet(pins, "analyzer", text);
    INFO(listing(problems));
    CHECK(problems.empty());
    const auto logger = check_gpiod_defaults(pins); // the logger's side is the gpiod wiring
    INFO(listing(logger));
    CHECK(logger.empty());

    // Each clip reaches the pin the table says it watches, and only the lines it names.
    const sheet_nets nets(text);
    const auto on = [&](const std::string& ref, const std::string& pin) {
        const auto p = nets.pin(ref, pin);
        REQUIRE(p);
        return nets.pins_on(*p);
    };
    const auto& stim = find_row(pins, "STIM");
    const auto& resp = find_row(pins, "RESP");
    const auto& gnd = find_row(pins, "GND");
    CHECK(on("J3", stim.at("analyzer_pin")) ==
          std::set<std::string>{"J3." + stim.at("analyzer_pin"), "R1.2",
                                "J2." + stim.at("target_pin")});
    CHECK(on("J3", resp.at("analyzer_pin")) ==
          std::set<std::string>{"J3." + resp.at("analyzer_pin"), "R2.1",
                                "J1." + std::to_string(gd::in_header_pin)});
    CHECK(on("J3", gnd.at("analyzer_pin")).contains("J1." + std::to_string(gd::ground_header_pin)));
    for (const std::string unused : {"3", "4", "5", "6", "7", "8", "10"})
        CHECK(nets.has_no_connect(*nets.pin("J3", unused)));

    // The capture line users copy names the analyzer's channels as the table does.
    const auto verify_md = slurp(source_dir + "/docs/commands/verify.md");
    CHECK(verify_md.find("--channels " + stim.at("analyzer_name") + "=STIM," +
                         resp.at("analyzer_name") + "=RESP") != std::string::npos);
    CHECK(verify_md.find("schematics/analyzer/") != std::string::npos);

    // A table that puts D1 on the target's side of R2 fails.
    auto moved = pins;
    for (auto& r : moved)
        if (r.at("signal") == "RESP")
            r["analyzer_net"] = "RESP";
    CHECK_FALSE(check_sheet(moved, "analyzer", text).empty());
}

TEST_CASE("schematics READMEs show the pins of their pins.csv", "[schematics]")
{
    for (const auto& dir : {parport_dir, gpiod_dir, ftdi_dir, analyzer_dir}) {
        const auto problems = check_readme(read_csv(dir + "pins.csv"), slurp(dir + "README.md"));
        INFO(dir << ":\n" << listing(problems));
        CHECK(problems.empty());
    }
}

TEST_CASE("pin table checks reject a sheet or a table that disagrees", "[schematics]")
{
    const auto pins = read_csv(parport_dir + "pins.csv");
    const auto text = slurp(parport_dir + "parport.kicad_sch");

    SECTION("a label renamed in the sheet shorts STIM and RESP")
    {
        auto edited = text;
        const auto at = edited.find("(label \"RESP\"");
        REQUIRE(at != std::string::npos);
        edited.replace(at, 13, "(label \"STIM\"");
        CHECK_FALSE(check_sheet(pins, "parport", edited).empty());
    }
    SECTION("a connector moved without its wires")
    {
        auto edited = text;
        const auto ref = edited.find("(property \"Reference\" \"J2\"");
        REQUIRE(ref != std::string::npos);
        const auto at = edited.rfind("\t\t(at ", ref);
        edited.replace(at, edited.find(')', at) - at, "\t\t(at 210.82 96.52 0");
        CHECK_FALSE(check_sheet(pins, "parport", edited).empty());
    }
    SECTION("a table row moved to another pin")
    {
        auto edited = pins;
        for (auto& r : edited)
            if (r.at("signal") == "STIM")
                r["logger_pin"] = "6";
        CHECK_FALSE(check_sheet(edited, "parport", text).empty());
        CHECK_FALSE(check_parport_defaults(edited).empty());
    }
    SECTION("a gpiod row naming another line")
    {
        auto edited = read_csv(gpiod_dir + "pins.csv");
        for (auto& r : edited)
            if (r.at("signal") == "RESP")
                r["logger_name"] = "GPIO22";
        CHECK_FALSE(check_gpiod_defaults(edited).empty());
    }
}

// --- the target's orientation ------------------------------------------------------------
// irqloop-responder runs on the target: its spec's in= is STIM (the line the target senses)
// and out= is RESP (the line it drives). Its --help and docs/responder.md must show that
// orientation, as the pin tables wire it, never the logger's: copied onto the target, the
// logger's spec makes both boards drive one line.

namespace
{

/** @brief The value of key @p k in a spec or command line ("in=17," -> "17"), "" if absent. */
std::string spec_key(const std::string& text, const std::string& k)
{
    for (std::size_t at = text.find(k + "="); at != std::string::npos;
         at = text.find(k + "=", at + 1)) {
        if (at > 0 && text[at - 1] != ',' && text[at - 1] != ':')
            continue;
        const auto from = at + k.size() + 1;
        const auto end = text.find_first_of(", '\"`\n", from);
        return text.substr(from, end == std::string::npos ? end : end - from);
    }
    return {};
}

const row& signal_row(const table& t, const std::string& signal)
{
    for (const auto& r : t)
        if (r.at("signal") == signal)
            return r;
    throw std::runtime_error("no " + signal + " row");
}

/** @brief What the target's spec must say for @p backend: {in, out}, from the pin tables. */
std::pair<std::string, std::string> target_orientation(const std::string& backend)
{
    if (backend == "parport") {
        // The cable crosses: the target's own pin names are in the target_name column.
        const auto pins = read_csv(source_dir + "/schematics/parport/pins.csv");
        return {signal_row(pins, "STIM").at("target_name"),
                signal_row(pins, "RESP").at("target_name")};
    }
    // gpiod and gpiomem: a Pi target wired header to header uses the logger's line numbers,
    // STIM as its input (with the edge IRQ) and RESP as its output.
    const auto pins = read_csv(source_dir + "/schematics/gpiod/pins.csv");
    const auto& stim = signal_row(pins, "STIM");
    const auto& resp = signal_row(pins, "RESP");
    if (stim.at("target_name").find("input") == std::string::npos ||
        resp.at("target_name").find("output") == std::string::npos)
        throw std::runtime_error("gpiod pins.csv: STIM is no longer the target's input");
    auto number = [](const std::string& name) {
        return name.substr(name.find_first_of("0123456789"));
    };
    return {number(stim.at("logger_name")), number(resp.at("logger_name"))};
}

/** @brief Problems with the responder specs (gpiod, gpiomem, parport) in @p text's lines
 *  that start @p prefix; @p checked counts the specs looked at. */
std::vector<std::string> check_target_specs(const std::string& text, const std::string& prefix,
                                            int& checked)
{
    std::vector<std::string> problems;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto at = line.find(prefix);
        if (at == std::string::npos)
            continue;
        for (const char* backend : {"gpiod", "gpiomem", "parport"}) {
            const auto b = line.find(std::string(backend) + ":", at);
            if (b == std::string::npos ||
                (b > 0 && std::isalnum(static_cast<unsigned char>(line[b - 1]))))
                continue;
            const std::string spec = line.substr(b);
            const std::string in_v = spec_key(spec, "in"), out_v = spec_key(spec, "out");
            if (in_v.empty() || in_v.front() == '<' || out_v.empty() || out_v.front() == '<')
                continue; // a placeholder: <STIM offset>
            ++checked;
            // chip:offset or GPIOnn: compare the line numbers or pin names only.
            auto bare = [](std::string v) {
                if (auto c = v.rfind(':'); c != std::string::npos)
                    v = v.substr(c + 1);
                if (v.rfind("GPIO", 0) == 0)
                    v = v.substr(4);
                return v;
            };
            const auto want = target_orientation(backend);
            if (bare(in_v) != want.first || bare(out_v) != want.second)
                problems.push_back("'" + line + "': the target senses STIM on " + want.first +
                                   " (in=) and drives RESP on " + want.second + " (out=)");
            break;
        }
    }
    return problems;
}

} // namespace

TEST_CASE("irqloop-responder --help and docs/responder.md show the target's orientation of "
          "schematics/*/pins.csv",
          "[schematics]")
{
    const auto help = irqloop::test::run_process({IRQLOOP_RESPONDER_BIN, "--help"});
    REQUIRE(help.status == 0);
    int checked = 0;
    auto problems = check_target_specs(help.out, "e.g. ", checked);
    CHECK(problems.empty());
    for (const auto& p : problems)
        UNSCOPED_INFO(p);
    // gpiod, gpiomem and parport examples, whether compiled in or not.
    CHECK(checked == 3);
    CHECK(help.out.find("on the target in= is STIM") != std::string::npos);

    int doc_checked = 0;
    for (const char* doc : {"/docs/responder.md", "/docs/wiring.md", "/README.md"}) {
        const auto p =
            check_target_specs(slurp(source_dir + doc), "irqloop-responder --hw", doc_checked);
        for (const auto& x : p)
            UNSCOPED_INFO(doc << ": " << x);
        CHECK(p.empty());
    }
    CHECK(doc_checked >= 2);

    SECTION("the logger's orientation copied onto the target is caught")
    {
        int n = 0;
        CHECK_FALSE(check_target_specs("$ irqloop-responder --hw gpiod:chip=gpiochip0,out=17,in=27",
                                       "irqloop-responder --hw", n)
                        .empty());
        CHECK_FALSE(
            check_target_specs("e.g. parport:base=0x378,in=D3,out=nACK", "e.g. ", n).empty());
        CHECK(n == 2);
    }
}
