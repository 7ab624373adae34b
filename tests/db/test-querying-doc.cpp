// SPDX-License-Identifier: MIT
// Every ```sql block of docs/querying.md runs through the real sqlite3 shell on a populated
// database, without error and with some output.
#include "store-fixtures.hpp"
#include "store.hpp"

#include <catch2/catch_test_macros.hpp>

#include <sstream>

using namespace irqloop;
using namespace irqloop::db;
using namespace irqloop::db::test;

namespace
{

struct sql_block {
    int line = 0; ///< first line of the block in the document
    std::string text;
};

std::vector<sql_block> sql_blocks(const std::string& markdown)
{
    std::vector<sql_block> out;
    std::istringstream in(markdown);
    std::string line;
    int n = 0;
    bool inside = false;
    while (std::getline(in, line)) {
        ++n;
        if (!inside && line.rfind("```sql", 0) == 0) {
            inside = true;
            out.push_back(sql_block{n + 1, {}});
        } else if (inside && line.rfind("```", 0) == 0) {
            inside = false;
        } else if (inside) {
            out.back().text += line + "\n";
        }
    }
    REQUIRE_FALSE(inside); // an unclosed block
    return out;
}

} // namespace

TEST_CASE("every SQL query in docs/querying.md runs in the sqlite3 shell", "[db]")
{
    if (run_shell("sqlite3 -version").status != 0)
        SKIP("the sqlite3 shell is not installed (apt-get install sqlite3)");
    const auto doc = file_bytes(IRQLOOP_SOURCE_DIR "/docs/querying.md");
    REQUIRE(doc);
    const auto blocks = sql_blocks(*doc);
    REQUIRE(blocks.size() >= 10);

    temp_dir dir;
    const auto path = dir.file("irqloop.db");
    {
        store s(path);
        populate(s);
    }
    for (const auto& b : blocks) {
        INFO("docs/querying.md line " << b.line << ":\n" << b.text);
        auto r = sqlite3_shell(path, ".headers on\n.mode column\n" + b.text, dir.path());
        INFO("sqlite3 said:\n" << r.out);
        CHECK(r.status == 0);
        CHECK(r.out.find("Error") == std::string::npos);
        CHECK(!r.out.empty());
    }
    CHECK(integrity(path) == "ok");
}
