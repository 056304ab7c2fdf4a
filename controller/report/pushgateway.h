// Pushing metrics to a Prometheus Pushgateway, so a CI job's figures land in the lab's
// Prometheus without a scrape target: `stormark results export RUN --format prometheus
// --push URL`.
#ifndef STORMARK_CONTROLLER_REPORT_PUSHGATEWAY_H_
#define STORMARK_CONTROLLER_REPORT_PUSHGATEWAY_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::controller {

// The group URL to push to: `url` itself when its path names a group (".../metrics/job/X",
// optionally with more label pairs), else `url` with "/metrics/job/stormark" appended
// ("http://pg:9091" -> "http://pg:9091/metrics/job/stormark"). INVALID_ARGUMENT for a URL
// that is not http:// or https://. Pure.
common::StatusOr<std::string> PushgatewayGroupUrl(std::string_view url);

// PUTs `body` (Prometheus text format 0.0.4) to the group URL, which replaces every metric
// of that group, as `curl -X PUT --data-binary @file URL` does. Fails with the HTTP status
// and the first line of the gateway's answer when it is not 2xx, or with curl's error when
// nothing answered within `timeout_seconds`. Proxies are taken from the environment, as
// curl does. Not thread-safe (the first call initialises libcurl).
common::Status PushMetrics(const std::string& group_url, std::string_view body,
                           long timeout_seconds = 30);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_PUSHGATEWAY_H_
