// The tables of the results database (their meaning: results_store.h), and how a file of an
// older schema is brought up to this one in place.
#ifndef STORMARK_CONTROLLER_RESULTS_RESULTS_SCHEMA_H_
#define STORMARK_CONTROLLER_RESULTS_RESULTS_SCHEMA_H_

#include <functional>
#include <string_view>

#include "common/status.h"
#include "controller/results/sqlite.h"

namespace stormark::controller {

// How long opening a file of an older schema waits for another process that may be upgrading
// it: 10 minutes, for a history of some hundred million rows.
inline constexpr int kUpgradeBusyTimeoutMs = 10 * 60 * 1000;

// Told one line before an older file is upgraded, which can take a while: "FILE: upgrading the
// results schema 6 to 7, once: ...".
using SchemaNote = std::function<void(std::string_view)>;

// Creates the schema in a new file (`create`), or checks that an existing one is ours and not
// newer, and upgrades an older one, each step in one transaction. NOT_FOUND for an empty
// file when not `create`.
common::Status PrepareSchema(sqlite::Database* db, bool create, const SchemaNote& note = {});

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RESULTS_SCHEMA_H_
