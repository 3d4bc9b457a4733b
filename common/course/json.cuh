// SPDX-License-Identifier: MIT
//
// course/json.cuh: the results as JSON, so that no tool ever scrapes
// the printed table: quoted strings, numbers, and rows of ordered keys.

#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace course {

// A JSON string literal. Invalid UTF-8 (a kernel name, a path, a message
// from the driver) is written as the visible text \xNN, never as a raw
// byte a JSON reader would reject.
inline std::string jsonQuote(const std::string& s) {
    std::string out = "\"";
    const size_t n = s.size();
    for (size_t i = 0; i < n;) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A valid sequence: a lead byte, then its continuation bytes, not
        // overlong, not a surrogate, at most U+10FFFF.
        int len = c >= 0xf0 && c <= 0xf4   ? 4
                  : c >= 0xe0              ? 3
                  : c >= 0xc2 && c <= 0xdf ? 2
                                           : 0;
        bool ok = len > 0 && i + len <= n;
        for (int k = 1; ok && k < len; ++k) {
            ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
        }
        if (ok && len >= 3) {
            const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
            ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0) &&
                 !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (ok) {
            out.append(s, i, static_cast<size_t>(len));
            i += static_cast<size_t>(len);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
            out += buf;
            ++i;
        }
    }
    return out + "\"";
}

inline std::string jsonNumber(double v) {
    if (!std::isfinite(v)) {
        return "null";
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

// One row: ordered keys, written in the order they were added, so the JSON
// reads like the printed table.
class Row {
public:
    Row& num(const char* key, double v) { return raw(key, jsonNumber(v)); }
    Row& integer(const char* key, long long v) {
        return raw(key, std::to_string(v));
    }
    Row& str(const char* key, const std::string& v) {
        return raw(key, jsonQuote(v));
    }
    Row& boolean(const char* key, bool v) {
        return raw(key, v ? "true" : "false");
    }
    Row& nums(const char* key, const std::vector<double>& v) {
        std::string out = "[";
        for (size_t i = 0; i < v.size(); ++i) {
            out += (i ? "," : "") + jsonNumber(v[i]);
        }
        return raw(key, out + "]");
    }
    // Every field of `other`, after this row's own.
    Row& merge(const Row& other) {
        fields_.insert(fields_.end(), other.fields_.begin(),
                       other.fields_.end());
        return *this;
    }
    std::string json() const {
        std::string out = "{";
        for (size_t i = 0; i < fields_.size(); ++i) {
            out += (i ? ", " : "") + jsonQuote(fields_[i].first) + ": " +
                   fields_[i].second;
        }
        return out + "}";
    }

private:
    Row& raw(const char* key, std::string v) {
        fields_.emplace_back(key, std::move(v));
        return *this;
    }
    std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace course
