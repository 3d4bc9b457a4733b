// SPDX-License-Identifier: MIT
//
// course/variants.cuh: a lesson's variants (versions, schedules, groups)
// as one table of structs with a name.

#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace course {

// A lesson's variants (versions, schedules, groups) are one table of
// structs with a `name`. What --only accepts is their names...
template <typename Table>
std::vector<std::string> namesOf(const Table& table) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.push_back(entry.name);
    }
    return names;
}

// ...and a name is looked up in the table it came from: one not there is
// a bug in the lesson, not an input error.
template <typename Table>
const auto& byName(const Table& table, const std::string& name) {
    for (const auto& entry : table) {
        if (name == entry.name) {
            return entry;
        }
    }
    std::fprintf(stderr, "no variant named '%s' in the lesson's table\n",
                 name.c_str());
    std::abort();
}

}  // namespace course
