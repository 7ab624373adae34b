// SPDX-License-Identifier: MIT
#pragma once
// A campaign file of the tests: NAME.ini and its NAME.db in a scratch directory of their own.
#include "temp-dir.hpp"

#include <fstream>
#include <string>

namespace irqloop::test
{

struct campaign_file final {
    temp_dir dir;
    const std::string db, ini;

    explicit campaign_file(const std::string& name)
        : db(dir / (name + ".db")), ini(dir / (name + ".ini"))
    {
    }
    /** @brief "db = DB", then @p phases: the whole file, rewritten. */
    void write(const std::string& phases) const
    {
        std::ofstream(ini) << "db = " << db << "\n" << phases;
    }
};

} // namespace irqloop::test
