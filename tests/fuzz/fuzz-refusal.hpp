// SPDX-License-Identifier: MIT
#pragma once
// The refusal a fuzz target accepts: bad input, as irqloop reports it with status 2 (an
// irqloop::error of that status, or a Boost.Program_options error, which run_main turns into
// status 2). Anything else thrown is a bug: @p bug(what) aborts with the input.
#include "error.hpp"

#include <boost/program_options/errors.hpp>

#include <cstdio>
#include <exception>

namespace irqloop::fuzz
{

template <class F, class Bug> void refused_as_bad_input(F f, Bug bug)
{
    try {
        f();
    } catch (const boost::program_options::error&) {
    } catch (const error& e) {
        if (e.status() != exit_usage)
            bug("a refusal that is not bad input (status 2)");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: %s\n", e.what());
        bug("a non-irqloop exception (run_main would call it a bug)");
    }
}

} // namespace irqloop::fuzz
