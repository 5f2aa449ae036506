// Inside the Chrome reader (not for use outside lib/prof/spans/): the three parsers of one trace
// event. Each reads the members the event rules want (chrome_events.hpp) and hands every value
// to those rules; none decides what a value means.
#pragma once

#include "prof/io/json_scan.hpp"
#include "prof/spans/chrome_events.hpp"

#include <simdjson.h>

#include <string>

namespace prof {

// Scratch for identity texts that are not the raw token (pid, tid, cat, id), valid until the
// next event.
using identity_scratch = std::string[4];

// simdjson on-demand (the whole-document parse). Throws simdjson_error on invalid JSON.
void read_event(simdjson::ondemand::object& ev, event_fields& e, identity_scratch& scratch);
// simdjson DOM (a batch parsed whole). Identity fields are turned into text only for the phases
// that use them. Throws needs_number_text when a span time has a fraction (kept only as a double).
void read_event(simdjson::dom::object ev, event_fields& e, identity_scratch& scratch);
// The strict in-place scanner: the plainest form of each field; false declines the event (an
// escape in a key or a wanted string, a quoted-number form it does not take, a float or -0
// where an identity is kept, any syntax error) and simdjson reads it instead. Member keys go
// through `keys` (json_scan.hpp's key_predictor, one per stream of events: exporters repeat
// their keys in one order), which may load bytes up to `readable_end` (at least s.e).
bool scan_event(json_scanner& s, event_fields& e, key_predictor& keys, const char* readable_end);

}  // namespace prof
