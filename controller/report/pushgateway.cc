#include "controller/report/pushgateway.h"

#include <curl/curl.h>

#include <memory>

#include "common/strings.h"

namespace stormark::controller {
namespace {

using common::StrCat;

size_t Collect(char* data, size_t size, size_t count, void* answer) {
  static_cast<std::string*>(answer)->append(data, size * count);
  return size * count;
}

}  // namespace

common::StatusOr<std::string> PushgatewayGroupUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  const std::string_view protocol = url.substr(0, scheme == std::string_view::npos ? 0 : scheme);
  if (scheme == std::string_view::npos || (protocol != "http" && protocol != "https") ||
      url.size() == scheme + 3) {
    return absl::InvalidArgumentError(
        StrCat("--push '", url, "': expected a Pushgateway URL such as http://host:9091"));
  }
  const size_t path = url.find('/', scheme + 3);
  if (path != std::string_view::npos && url.find("/metrics/job/", path) != std::string_view::npos) {
    return std::string(url);
  }
  std::string base(url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/metrics/job/stormark";
}

common::Status PushMetrics(const std::string& group_url, std::string_view body,
                           long timeout_seconds) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return absl::InternalError("--push: cannot start libcurl");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Content-Type: text/plain; version=0.0.4; charset=utf-8"),
      curl_slist_free_all);
  std::string answer;
  char error[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, group_url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_seconds);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "stormark");
  const CURLcode code = curl_easy_perform(c);
  if (code != CURLE_OK) {
    return absl::UnavailableError(
        StrCat("--push ", group_url, ": ", error[0] != '\0' ? error : curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    const std::string line = answer.substr(0, answer.find('\n'));
    const std::string_view first_line = common::Trim(line);
    return absl::FailedPreconditionError(StrCat("--push ", group_url, ": HTTP ", status,
                                                first_line.empty() ? "" : ": ", first_line));
  }
  return absl::OkStatus();
}

}  // namespace stormark::controller
