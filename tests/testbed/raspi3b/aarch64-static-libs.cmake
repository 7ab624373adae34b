# SPDX-License-Identifier: MIT
# Included after project() by aarch64-static.cmake: static archives only.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(Boost_USE_STATIC_LIBS ON)
