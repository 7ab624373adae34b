// SPDX-License-Identifier: MIT
#pragma once
// A command's parse_X(argc, argv) (logger/commands/command.hpp) called on a list of words,
// the command's name first, as main passes them.
#include <string>
#include <vector>

template <class Parse> auto parse_words(Parse parse, std::vector<std::string> args)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    return parse(static_cast<int>(args.size()), argv.data());
}
