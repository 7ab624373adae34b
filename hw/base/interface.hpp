// SPDX-License-Identifier: MIT
#pragma once

namespace irqloop
{

/**
 * @brief The base of an interface that is held through a pointer to it: destroyed through
 * that pointer (a virtual destructor), never copied or assigned (a copy would slice).
 */
class interface
{
public:
    virtual ~interface() = default;
    interface(const interface&) = delete;
    interface& operator=(const interface&) = delete;

protected:
    interface() = default;
};

} // namespace irqloop
